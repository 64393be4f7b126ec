// Python binding of the streamed receiver of remote objects (remote/receiver.hpp): chunks are
// written and hashed without the GIL, so the next chunk can be downloaded meanwhile.
#include "bindings.hpp"
#include "buffer_view.hpp"
#include "remote/receiver.hpp"

#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

namespace nb = nanobind;

namespace tensoracle::bindings {

void bind_remote_receiver(nb::module_& module) {
    nb::class_<RemoteReceiver>(
        module, "RemoteReceiver",
        "Receives a remote object into a store as it downloads: feed(chunk) in order, then "
        "finish(). Refused or abandoned, it leaves no temporary file and the entry as it was.")
        .def(
            "__init__",
            [](RemoteReceiver* self, Store const& store, std::string object_name,
               std::string file_name, std::uint64_t object_size, EngineIdentity const* identity,
               VerifyKey const* verify_key) {
                new (self) RemoteReceiver(store, std::move(object_name), std::move(file_name),
                                          object_size, identity, verify_key);
            },
            nb::arg("store"), nb::arg("object_name"), nb::arg("file_name"), nb::arg("object_size"),
            nb::arg("identity").none(), nb::arg("verify_key").none(), nb::keep_alive<1, 7>(),
            "Prepares to receive the object `object_name` (its URL, for messages) of "
            "`object_size` bytes as the entry `file_name` (with the conditions of `identity`, or "
            "when None those whose identity is `file_name`). Raises CorruptEngineError when the "
            "size cannot hold an engine.")
        .def(
            "feed",
            [](RemoteReceiver& receiver, nb::handle chunk) {
                BufferView const view(chunk, "chunk");
                nb::gil_scoped_release released;
                receiver.feed(view.bytes());
            },
            nb::arg("chunk"),
            "Writes and hashes the next bytes of the object (any contiguous bytes-like object). "
            "Raises CorruptEngineError or EngineConditionError when its preamble or header (or "
            "more bytes than announced) refuse it.")
        .def(
            "finish",
            [](RemoteReceiver& receiver) {
                nb::gil_scoped_release released;
                ReceivedEngine received = receiver.finish();
                return std::make_tuple(std::move(received.verified), std::move(received.saved));
            },
            "Verifies the whole object (signature, header, plan checksum, conditions) and saves it "
            "atomically as the entry: (RemoteEngine, SavedEngine). Raises CorruptEngineError, "
            "EngineConditionError or UntrustedEngineError naming the object.")
        .def("abort", &RemoteReceiver::abort,
             "Removes the temporary file; the entry stays as it was.")
        .def_prop_ro("object_size", &RemoteReceiver::object_size)
        .def_prop_ro("received", &RemoteReceiver::received)
        .def_prop_ro(
            "temporary_path",
            [](RemoteReceiver const& receiver) -> std::optional<std::string> {
                auto const path = receiver.temporary_path();
                return path.empty() ? std::nullopt : std::optional(path.string());
            },
            "The temporary file while receiving; None once finished or aborted.");
}

} // namespace tensoracle::bindings
