// Python bindings for the remote cache's trust: Ed25519 keys, signature trailers and the
// verification of downloaded objects. Hashing and verification release the GIL.
#include "bindings.hpp"
#include "buffer_view.hpp"
#include "cache/plan_chunks.hpp"
#include "json_value.hpp"
#include "remote/object.hpp"
#include "remote/signature.hpp"
#include "text/canonical_json.hpp"
#include "text/size_text.hpp"

#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>

namespace nb = nanobind;

namespace tensoracle::bindings {

void bind_remote(nb::module_& module) {
    nb::class_<SigningKey>(module, "SigningKey",
                           "An Ed25519 private key (signs published engines).")
        .def_static("from_pem_file", &SigningKey::from_pem_file, nb::arg("path"))
        .def_static(
            "from_pem",
            [](std::string const& pem) { return SigningKey::from_pem(pem, "PEM text"); },
            nb::arg("pem"))
        .def("public_key_pem", &SigningKey::public_key_pem);

    nb::class_<VerifyKey>(module, "VerifyKey", "An Ed25519 public key (verifies remote engines).")
        .def_static("from_pem_file", &VerifyKey::from_pem_file, nb::arg("path"))
        .def_static(
            "from_pem", [](std::string const& pem) { return VerifyKey::from_pem(pem, "PEM text"); },
            nb::arg("pem"))
        .def_prop_ro("fingerprint", &VerifyKey::fingerprint);

    module.def(
        "signature_trailer",
        [](SigningKey const& key, std::string const& file_name, nb::handle engine) {
            BufferView const view(engine, "engine");
            std::vector<std::byte> trailer;
            {
                nb::gil_scoped_release released;
                trailer = signature_trailer(key, file_name, view.bytes());
            }
            return nb::bytes(reinterpret_cast<char const*>(trailer.data()), trailer.size());
        },
        nb::arg("key"), nb::arg("file_name"), nb::arg("engine"),
        "The signature trailer that follows the engine file `engine` in its remote object.");

    nb::class_<RemoteEngine>(module, "RemoteEngine",
                             "A downloaded object that passed verification.")
        .def_ro("identity", &RemoteEngine::identity)
        .def_prop_ro("references",
                     [](RemoteEngine const& engine) {
                         return python_object(engine.decoded.header.references);
                     })
        .def_prop_ro("plan_offset",
                     [](RemoteEngine const& engine) { return engine.decoded.plan_offset; })
        .def_prop_ro("plan_size",
                     [](RemoteEngine const& engine) { return engine.decoded.header.plan_size; })
        .def_ro("engine_bytes", &RemoteEngine::engine_bytes)
        .def_ro("is_signed", &RemoteEngine::is_signed)
        .def_ro("signer", &RemoteEngine::signer);

    module.def(
        "verify_remote_object",
        [](nb::handle object, std::string const& object_name, std::string const& file_name,
           EngineIdentity const* expected, VerifyKey const* trusted) {
            BufferView const view(object, "object");
            nb::gil_scoped_release released;
            return verify_remote_object(view.bytes(), object_name, file_name, expected, trusted);
        },
        nb::arg("object"), nb::arg("object_name"), nb::arg("file_name"), nb::arg("identity").none(),
        nb::arg("verify_key").none(),
        "Verifies a downloaded object as a local engine file is verified, then its signature "
        "when `verify_key` is given. Raises CorruptEngineError, EngineConditionError or "
        "UntrustedEngineError naming `object_name`.");

    // What `tensoracle cache list|prune --remote` share with the native subcommands.
    module.def(
        "decode_engine_header",
        [](nb::handle prefix, std::uint64_t file_size, std::string const& name) {
            BufferView const view(prefix, "prefix");
            auto const bytes = view.bytes();
            DecodedHeader const decoded = decode_engine_header(bytes, file_size, name);
            return std::make_tuple(python_object(decoded.header.conditions),
                                   python_object(decoded.header.references), decoded.plan_offset);
        },
        nb::arg("prefix"), nb::arg("file_size"), nb::arg("name"),
        "(conditions, references, plan_offset) from the first bytes of an engine file "
        "of `file_size` bytes (preamble and header). Raises CorruptEngineError naming `name`.");
    module.attr("ENGINE_PREAMBLE_BYTES") = kEnginePreambleBytes;
    module.attr("PLAN_CHUNK_BYTES") = kPlanChunkBytes;
    module.attr("SIGNATURE_MAGIC_BYTES") = kSignatureMagic.size();
    module.attr("SIGNATURE_TRAILER_BYTES") = kSignatureTrailerBytes;
    module.def(
        "engine_prefix_bytes",
        [](nb::handle preamble) {
            return engine_prefix_bytes(BufferView(preamble, "preamble").bytes());
        },
        nb::arg("preamble"),
        "How many bytes from the start of an engine file hold its preamble and header, from its "
        "first ENGINE_PREAMBLE_BYTES bytes.");
    module.def(
        "has_signature_trailer",
        [](std::uint64_t object_size, nb::handle tail) {
            return has_signature_trailer(object_size, BufferView(tail, "tail").bytes());
        },
        nb::arg("object_size"), nb::arg("tail"),
        "Whether a remote object of `object_size` bytes ending in `tail` (its last "
        "SIGNATURE_MAGIC_BYTES bytes or more) carries a signature trailer.");
    module.def("parse_size_bytes", &parse_size_bytes, nb::arg("text"), nb::arg("option"));
    module.def("parse_days_nanoseconds", &parse_days_nanoseconds, nb::arg("text"),
               nb::arg("option"));
    module.def("format_utc_time", &format_utc_time, nb::arg("nanoseconds"));
    module.def("format_size_human", &format_size_human, nb::arg("bytes"));
}

} // namespace tensoracle::bindings
