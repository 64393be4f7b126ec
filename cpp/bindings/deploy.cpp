// Python binding of the rule that matches an entry's conditions against a described GPU (the one
// implementation behind tensoracle.cache.compatibility.cannot_run and target_of), and of the
// deployment manifest's reader.
#include "bindings.hpp"
#include "cache/engine_file.hpp"
#include "cache/plan_chunks.hpp"
#include "deploy/json_forms.hpp"
#include "deploy/manifest_signing.hpp"
#include "json_value.hpp"
#include "remote/signature.hpp"
#include "tensoracle/deploy/deployed_engine.hpp"
#include "tensoracle/deploy/manifest.hpp"
#include "tensoracle/deploy/plan_reader.hpp"
#include "tensoracle/deploy/plugin_library.hpp"
#include "tensoracle/deploy/selection.hpp"
#include "tensoracle/deploy/signed_manifest.hpp"
#include "tensoracle/errors.hpp"
#include "text/bounded_json.hpp"
#include "text/canonical_json.hpp"
#include "trusted_manifest.hpp"

#include <cstddef>
#include <mutex>
#include <nanobind/ndarray.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <utility>

namespace nb = nanobind;

namespace tensoracle::bindings {
namespace {

// The GPU description (a dict of properties, as tensoracle.gpu.properties() returns it).
deploy::DeviceDescription device_of(nb::dict const& device) {
    return deploy::device_from_json(json_value(device, "device"), "the GPU description");
}

nlohmann::json parsed(std::string const& text, char const* argument) {
    try {
        return parse_bounded_json(text, {.max_bytes = kMaxHeaderBytes});
    } catch (JsonLimitError const& error) {
        throw InvalidArgument(std::string(argument) + " is not valid JSON: " + error.what());
    }
}

using PlanView = nb::ndarray<nb::memview, std::uint8_t const, nb::ndim<1>, nb::c_contig>;

// A deployed engine opened from a manifest, with what selected it.
struct OpenedDeployment {
    deploy::DeployedEngine engine;
    std::string why;
    std::optional<deploy::PlanReader> reader; // made on the first read_plan
    // A PlanReader is for one thread at a time: the reads of Python threads (the GIL released
    // while reading) take turns.
    std::unique_ptr<std::mutex> reading = std::make_unique<std::mutex>();

    // The reader, made on first use; the caller holds `reading`.
    deploy::PlanReader& plan_reader() {
        if (!reader) {
            reader.emplace(engine);
        }
        return *reader;
    }
};

// Fills the writable buffer `into` with the verified plan from `offset` (PlanReader::read: a
// chunk the buffer covers whole is read into it and checked there); returns how many bytes.
std::size_t read_plan_into(OpenedDeployment& opened, std::uint64_t offset, nb::handle into) {
    Py_buffer buffer{};
    if (PyObject_GetBuffer(into.ptr(), &buffer, PyBUF_SIMPLE | PyBUF_WRITABLE) != 0) {
        PyErr_Clear();
        throw nb::type_error("into must be a writable contiguous buffer (a bytearray, say)");
    }
    struct Release {
        Py_buffer* held;
        ~Release() { PyBuffer_Release(held); }
    } const release{&buffer};
    nb::gil_scoped_release const unlocked;
    std::lock_guard<std::mutex> const turn(*opened.reading);
    return opened.plan_reader().read(offset, static_cast<std::byte*>(buffer.buf),
                                     static_cast<std::size_t>(buffer.len));
}

// At most `size` bytes of the verified plan from `offset`, and no further than the end of the
// chunk (kPlanChunkBytes) that holds it (so that a read holds at most one chunk more), as a new
// bytes object, each chunk checked before any of its bytes is copied there; the GIL is released
// meanwhile. Empty at or past the plan's end.
nb::bytes read_plan(OpenedDeployment& opened, std::uint64_t offset, std::size_t size) {
    std::uint64_t const plan = opened.engine.plan_size();
    std::uint64_t const chunk_end = (offset / kPlanChunkBytes + 1) * kPlanChunkBytes;
    std::uint64_t const left = offset < plan ? std::min(plan, chunk_end) - offset : 0;
    auto const wanted = static_cast<std::size_t>(std::min<std::uint64_t>(size, left));
    PyObject* made = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(wanted));
    if (made == nullptr) {
        throw nb::python_error();
    }
    nb::bytes result = nb::steal<nb::bytes>(made);
    auto* const into = reinterpret_cast<std::byte*>(PyBytes_AsString(made));
    {
        nb::gil_scoped_release const unlocked;
        std::lock_guard<std::mutex> const turn(*opened.reading);
        (void)opened.plan_reader().read(offset, into,
                                        wanted); // the whole of `wanted`: inside the plan
    }
    return result;
}

// The entries of a manifest as the Python package uses them (read_deploy_manifest).
nb::list manifest_entries(deploy::Manifest const& manifest) {
    nb::list entries;
    for (deploy::ManifestEntry const& entry : manifest.entries) {
        nb::dict item;
        item["recipe"] = entry.recipe;
        item["graph_version"] = entry.graph_version;
        item["file_name"] = entry.file_name;
        item["conditions"] = python_object(parsed(entry.conditions_json, "conditions_json"));
        item["backend"] = entry.runs_on.backend;
        item["backend_version"] = entry.runs_on.backend_version;
        nb::list targets;
        for (std::string const& target : entry.runs_on.targets) {
            targets.append(target);
        }
        item["targets"] = targets;
        item["plan_size"] = entry.plan_size;
        item["plan_xxh3_128"] = entry.plan_xxh3_128;
        item["engine_bytes"] = entry.engine_bytes;
        item["sha256"] = entry.sha256 ? nb::cast(*entry.sha256) : nb::none();
        item["header_sha256"] = entry.header_sha256 ? nb::cast(*entry.header_sha256) : nb::none();
        // Whether a verified signed manifest binds the entry's file (its digests then decide).
        item["bound"] = !entry.manifest_signers.empty();
        item["fleet_key"] = entry.fleet ? nb::cast(entry.fleet->key) : nb::none();
        item["fleet_signature"] =
            entry.fleet && entry.fleet->signature ? nb::cast(*entry.fleet->signature) : nb::none();
        entries.append(item);
    }
    return entries;
}

// The options of an open or a pull that decide how the manifest is trusted
// (signed_manifest.hpp's read_manifest).
deploy::OpenOptions trust_options(std::optional<std::filesystem::path> const& cache_dir,
                                  std::optional<std::filesystem::path> const& verify_key,
                                  std::optional<std::string> const& verify_key_pem,
                                  std::optional<std::filesystem::path> const& trust_policy,
                                  std::uint64_t minimum_version, bool skip_signature_verification) {
    deploy::OpenOptions options; // an empty folder is the default cache folder
    if (cache_dir) {
        options.cache_directory = *cache_dir;
    }
    if (verify_key) {
        options.verify_key = *verify_key;
    }
    if (verify_key_pem) {
        options.verify_key_pem = *verify_key_pem;
    }
    if (trust_policy) {
        options.trust_policy = *trust_policy;
    }
    options.minimum_version = minimum_version;
    options.skip_signature_verification = skip_signature_verification;
    return options;
}

// The manifest document as the Python package uses it (TrustedManifest.document).
nb::dict manifest_document(deploy::Manifest const& manifest) {
    nb::dict document;
    document["spec"] = manifest.spec;
    document["remote"] = manifest.remote ? nb::cast(*manifest.remote) : nb::none();
    document["entries"] = manifest_entries(manifest);
    document["version"] = manifest.release ? nb::cast(manifest.release->version) : nb::none();
    document["expires"] = manifest.release ? nb::cast(manifest.release->expires) : nb::none();
    document["signers"] = manifest.signers;
    return document;
}

} // namespace

void bind_deploy(nb::module_& module) {
    nb::enum_<deploy::SeekFrom>(module, "PlanSeekFrom",
                                "Where a plan seek is counted from (TensorRT's SeekPosition).")
        .value("SET", deploy::SeekFrom::start)
        .value("CUR", deploy::SeekFrom::current)
        .value("END", deploy::SeekFrom::end);
    module.def("plan_seek_target", &deploy::seek_target, nb::arg("position"), nb::arg("size"),
               nb::arg("where"), nb::arg("offset"),
               "Where a seek of `offset` bytes from `where` lands in a plan of `size` bytes read "
               "up to `position` (tensoracle::deploy::seek_target, the rule of the C++ "
               "VerifiedPlanStream), or None when outside the plan and not its end.");
    nb::class_<deploy::VerifiedPluginLibrary>(
        module, "VerifiedPluginLibrary",
        "A plugin library read into this process and checked against a deployed entry's recorded "
        "digests; its sealed in-memory copy lives as long as this object.")
        .def_prop_ro(
            "path",
            [](deploy::VerifiedPluginLibrary const& library) { return library.path().string(); })
        .def_prop_ro("sha256", &deploy::VerifiedPluginLibrary::sha256)
        .def_prop_ro("loader_path", &deploy::VerifiedPluginLibrary::loader_path,
                     "What to hand the loader: /proc/self/fd/N of the sealed copy of the bytes "
                     "checked (nobody can write, grow or shrink it).");
    nb::class_<OpenedDeployment>(
        module, "DeployedEngine",
        "A verified deployed engine; `plan` is a view of its verified copy.")
        .def_prop_ro("path",
                     [](OpenedDeployment const& opened) { return opened.engine.path().string(); })
        .def_prop_ro("file_name",
                     [](OpenedDeployment const& opened) { return opened.engine.entry().file_name; })
        .def_prop_ro("recipe",
                     [](OpenedDeployment const& opened) { return opened.engine.entry().recipe; })
        .def_prop_ro("why", [](OpenedDeployment const& opened) { return opened.why; })
        .def_prop_ro("signer",
                     [](OpenedDeployment const& opened) { return opened.engine.signer(); })
        .def_prop_ro(
            "backend",
            [](OpenedDeployment const& opened) { return opened.engine.entry().runs_on.backend; })
        .def_prop_ro("io",
                     [](OpenedDeployment const& opened) {
                         return python_value(parsed(opened.engine.entry().io_json, "io"));
                     })
        .def_prop_ro("streamed",
                     [](OpenedDeployment const& opened) { return opened.engine.streamed(); })
        .def_prop_ro("plan_size",
                     [](OpenedDeployment const& opened) { return opened.engine.plan_size(); })
        .def(
            "verify_plugins",
            [](OpenedDeployment const& opened, std::vector<std::filesystem::path> const& paths) {
                return deploy::verify_plugins(opened.engine.entry(), paths, "plugins=");
            },
            nb::arg("paths"),
            "The plugin libraries `paths` name, each read into a sealed in-memory copy and "
            "checked against the SHA-256 digests the entry's conditions record "
            "(tensoracle::deploy::verify_plugins), in the order given. Nothing is loaded. Raises "
            "EngineConditionError naming the file and the digests for a library the entry was "
            "not built with, and naming the digest for a recorded library none of `paths` is; "
            "OSError naming the file when it cannot be read or is not a regular file; "
            "RuntimeError elsewhere than Linux (no sealed in-memory files) when `paths` is "
            "not empty.")
        .def("read_plan", &read_plan, nb::arg("offset"), nb::arg("size"),
             "At most `size` bytes of the verified plan from `offset`, no further than the end "
             "of the 4 MiB chunk that holds it (none past the plan's end), as bytes: the chunk is "
             "checked against the verified header before any of its bytes is handed out. Raises "
             "CorruptEngineError naming the file "
             "and the chunk when the file changed since the open (and on every later call).")
        .def(
            "check_rest",
            [](OpenedDeployment& opened) {
                nb::gil_scoped_release const unlocked;
                std::lock_guard<std::mutex> const turn(*opened.reading);
                opened.plan_reader().check_rest();
            },
            "Reads and checks every chunk of the plan that read_plan did not hand on yet, handing "
            "none of it on (PlanReader::check_rest): after a consumer that may stop before the "
            "plan's end, so that nothing made from a plan not checked whole is used. Raises as "
            "read_plan.")
        .def_prop_ro(
            "checked_whole",
            [](OpenedDeployment& opened) {
                std::lock_guard<std::mutex> const turn(*opened.reading);
                return !opened.engine.streamed() ||
                       (opened.reader && opened.reader->checked_whole());
            },
            "Whether every chunk of the plan was checked by the reads so far.")
        .def("read_plan_into", &read_plan_into, nb::arg("offset"), nb::arg("into"),
             "Fills the writable buffer `into` with the verified plan from `offset`, as a C++ "
             "consumer's read does (a 4 MiB chunk the buffer covers whole is read into it and "
             "checked there, zeroed if refused); returns how many bytes (fewer at the plan's "
             "end). Raises as read_plan.")
        .def_prop_ro(
            "plan",
            [](nb::handle self) -> nb::object {
                auto const& opened = nb::cast<OpenedDeployment const&>(self);
                if (opened.engine.streamed()) {
                    return nb::none();
                }
                std::size_t const shape[1] = {opened.engine.plan_size()};
                // The object owns the contents: every view holds a reference to it.
                return nb::cast(
                    PlanView(reinterpret_cast<std::uint8_t const*>(opened.engine.plan_data()), 1,
                             shape, self));
            },
            "Read-only memoryview of the verified plan: the bytes to deserialize; None when "
            "streamed (read it with read_plan).");
    nb::class_<deploy::Manifest>(module, "DeployManifest",
                                 "A deployment manifest as the C++ library reads it.")
        .def_static(
            "read", [](std::filesystem::path const& path) { return deploy::read_manifest(path); },
            nb::arg("path"), "Reads the manifest at `path` (errors as read_deploy_manifest).")
        .def_prop_ro("size",
                     [](deploy::Manifest const& manifest) { return manifest.entries.size(); })
        .def(
            "select",
            [](deploy::Manifest const& manifest, std::string const& recipe, nb::dict const& device,
               std::string const& backend, std::string const& backend_version) {
                return deploy::select_for_device(manifest, recipe, device_of(device),
                                                 {backend, backend_version})
                    .file_name;
            },
            nb::arg("recipe"), nb::arg("device"), nb::arg("backend"), nb::arg("backend_version"),
            "The file name of the entry of `recipe` select_for_device chooses for the GPU "
            "described by `device` (a dict of its properties) and the runtime `backend` "
            "`backend_version`. Raises "
            "EngineTargetError listing every candidate when none can run, ValueError for an "
            "unknown recipe.");
    module.def(
        "open_deployed",
        [](std::filesystem::path const& manifest_path, std::string const& recipe,
           nb::dict const& device, std::string const& backend, std::string const& backend_version,
           std::optional<std::filesystem::path> cache_dir,
           std::optional<std::filesystem::path> verify_key,
           std::optional<std::string> verify_key_pem, bool skip_signature_verification,
           bool stream_plan, std::optional<std::filesystem::path> trust_policy,
           std::uint64_t minimum_version, std::optional<std::filesystem::path> decrypt_key,
           std::optional<std::string> decrypt_key_pem) {
            deploy::OpenOptions options =
                trust_options(cache_dir, verify_key, verify_key_pem, trust_policy, minimum_version,
                              skip_signature_verification);
            options.stream_plan = stream_plan;
            options.decrypt_key = decrypt_key.value_or(std::filesystem::path());
            options.decrypt_key_pem = decrypt_key_pem.value_or(std::string());
            deploy::Manifest const manifest = deploy::read_manifest(manifest_path, options);
            deploy::SelectedEngine selected = deploy::open_selected(
                manifest, recipe, device_of(device), {backend, backend_version}, options);
            return OpenedDeployment{std::move(selected.engine), std::move(selected.why),
                                    std::nullopt, std::make_unique<std::mutex>()};
        },
        nb::arg("manifest_path"), nb::arg("recipe"), nb::arg("device"), nb::arg("backend"),
        nb::arg("backend_version"), nb::arg("cache_dir").none(), nb::arg("verify_key").none(),
        nb::arg("verify_key_pem").none() = nb::none(),
        nb::arg("skip_signature_verification") = false, nb::arg("stream_plan") = false,
        nb::arg("trust_policy").none() = nb::none(), nb::arg("minimum_version") = 0,
        nb::arg("decrypt_key").none() = nb::none(), nb::arg("decrypt_key_pem").none() = nb::none(),
        "Reads the manifest as tensoracle::deploy::read_manifest(path, options) does (with "
        "`verify_key`, a PEM public key file, `verify_key_pem`, its text, or `trust_policy`, a "
        "policy file, it must be a signed manifest those keys accept, of a version no lower than "
        "`minimum_version` and than the cache folder accepted before; without them a signed "
        "manifest is refused unless `skip_signature_verification`), selects the entry of "
        "`recipe` for the GPU described by `device` (a dict of its properties) and the runtime "
        "`backend` "
        "`backend_version`, and opens it from `cache_dir` (the default cache folder when None), "
        "verified as tensoracle::deploy::DeployedEngine::open verifies it. With `stream_plan` only "
        "the header is read and checked, and the plan is read through read_plan, chunk by "
        "chunk (entries saved before chunk digests existed are read whole either way). "
        "Raises EngineTargetError listing every candidate when none can run, ValueError for an "
        "unknown recipe or an invalid manifest, FileNotFoundError when the entry is not in the "
        "cache folder, CorruptEngineError, EngineConditionError, EngineIOError or "
        "UntrustedEngineError naming the file and field. An encrypted entry is opened with "
        "`decrypt_key` (an X25519 private key file) or `decrypt_key_pem` (its text), each chunk "
        "authenticated and decrypted before it is handed on; EngineKeyError when the entry is "
        "encrypted and no key opens it, or a key is given and it is not encrypted.");
    module.def(
        "device_target",
        [](nb::dict const& device) { return deploy::target_of(device_of(device)); },
        nb::arg("device"),
        "The build target (\"sm89\") of the GPU described by `device` (a dict of its "
        "properties). Raises ValueError naming compute_capability when it is not MAJOR.MINOR.");
    module.def(
        "cannot_run",
        [](nb::dict const& conditions, nb::dict const& device) -> std::optional<std::string> {
            return deploy::cannot_run(
                deploy::conditions_from_json(json_value(conditions, "conditions"),
                                             "the engine's conditions"),
                device_of(device));
        },
        nb::arg("conditions"), nb::arg("device"),
        "Why an engine with the identity conditions `conditions` (a dict) cannot run on the GPU "
        "described by `device` (a dict of its properties), or None when it can. Raises "
        "ValueError naming a mistyped field.");
    module.def(
        "read_deploy_manifest",
        [](std::filesystem::path const& path) {
            return manifest_entries(deploy::read_manifest(path));
        },
        nb::arg("path"),
        "The entries of the deployment manifest at `path` as the C++ library reads them (dicts "
        "of recipe, graph_version, file_name, conditions, backend, "
        "backend_version, targets, plan_size, plan_xxh3_128, engine_bytes, fleet_key, "
        "fleet_signature (hex, or None)). Raises ValueError naming the file, field and value of "
        "what it refuses, OSError when the file cannot be read.");
    nb::class_<TrustedManifest>(
        module, "TrustedManifest",
        "A deployment manifest read once and trusted as open_deployed trusts it; each of its "
        "entries can be opened without selecting one for a GPU.")
        .def_prop_ro(
            "document",
            [](TrustedManifest const& trusted) { return manifest_document(trusted.manifest); },
            "The manifest as read: a dict of spec, remote (or None), entries (as "
            "read_deploy_manifest gives them, with sha256, header_sha256 and bound), version and "
            "expires (None for a plain manifest) and signers (the key ids that verified it).")
        .def(
            "open",
            [](TrustedManifest const& trusted, std::size_t index, bool stream_plan) {
                if (index >= trusted.manifest.entries.size()) {
                    throw nb::index_error("no such entry in the manifest");
                }
                deploy::OpenOptions options = trusted.options;
                options.stream_plan = stream_plan;
                return OpenedDeployment{
                    deploy::DeployedEngine::open(trusted.manifest.entries[index], options), "",
                    std::nullopt, std::make_unique<std::mutex>()};
            },
            nb::arg("index"), nb::arg("stream_plan") = true,
            "The entry `index` (of document's entries) opened from the cache folder and verified "
            "as open_deployed verifies the entry it selects (tensoracle::deploy::DeployedEngine::"
            "open with the options the manifest was read with); `why` is empty. Raises as "
            "open_deployed, IndexError for an index beyond the entries.");
    module.def(
        "read_trusted_manifest",
        [](std::filesystem::path const& path, std::optional<std::filesystem::path> cache_dir,
           std::optional<std::filesystem::path> verify_key,
           std::optional<std::string> verify_key_pem,
           std::optional<std::filesystem::path> trust_policy, std::uint64_t minimum_version,
           bool skip_signature_verification) {
            deploy::OpenOptions options =
                trust_options(cache_dir, verify_key, verify_key_pem, trust_policy, minimum_version,
                              skip_signature_verification);
            deploy::Manifest manifest = deploy::read_manifest(path, options);
            return TrustedManifest{std::move(manifest), std::move(options)};
        },
        nb::arg("path"), nb::arg("cache_dir").none() = nb::none(),
        nb::arg("verify_key").none() = nb::none(), nb::arg("verify_key_pem").none() = nb::none(),
        nb::arg("trust_policy").none() = nb::none(), nb::arg("minimum_version") = 0,
        nb::arg("skip_signature_verification") = false,
        "The deployment manifest at `path`, read once and trusted as open_deployed trusts it "
        "(the same keys, policy, minimum version and cache folder, whose record of accepted "
        "versions a verified signed manifest updates), kept with those options so that its "
        "entries can be opened. Errors as read_deploy_manifest, and UntrustedEngineError naming "
        "what failed for a manifest the keys do not accept.");
    module.def(
        "sign_manifest",
        [](std::string const& text, std::string const& name, std::optional<std::uint64_t> version,
           std::optional<std::string> expires, std::vector<std::filesystem::path> const& keys) {
            std::vector<SigningKey> signing;
            for (auto const& key : keys) {
                signing.push_back(SigningKey::from_pem_file(key));
            }
            std::optional<deploy::ManifestRelease> release;
            if (version || expires) {
                if (!version || !expires) {
                    throw InvalidArgument("sign_manifest: give both version and expires, or "
                                          "neither (to add signatures to a signed manifest)");
                }
                release = deploy::ManifestRelease{*version, *expires};
            }
            nb::gil_scoped_release const unlocked;
            return deploy::sign_manifest(text, name, release, signing);
        },
        nb::arg("text"), nb::arg("name"), nb::arg("version").none(), nb::arg("expires").none(),
        nb::arg("keys"),
        "The signed manifest (a DSSE envelope's text) of the manifest `text` (named `name` in "
        "messages), signed by the Ed25519 signing key files `keys`, as `tensoracle manifest "
        "sign` writes it: a plain manifest needs `version` and `expires` (UTC, "
        "\"2027-03-01T00:00:00Z\"); a signed one gets the signatures added. Raises ValueError "
        "naming the field.");
}

} // namespace tensoracle::bindings
