// Python bindings of the engine cache store: identities, the store, locks, saved engines, and
// weight digests. Long operations (hashing, writing, waiting for a lock) release the GIL.
#include "cache/store.hpp"

#include "bindings.hpp"
#include "buffer_view.hpp"
#include "cache/decrypt_key_check.hpp"
#include "cache/file.hpp"
#include "cache/identity.hpp"
#include "cache/listing.hpp"
#include "cache/weight_digest.hpp"
#include "encryption/plan_encryption.hpp"
#include "encryption/primitives.hpp"
#include "io/file_lock.hpp"
#include "json_value.hpp"
#include "tensoracle/errors.hpp"
#include "text/bounded_json.hpp"
#include "text/canonical_json.hpp"

#include <Python.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;

namespace tensoracle::bindings {
namespace {

// The lock file of the entry `file_name` (Store::lock_path_for), for callers that know only the
// entry's file name (a pull by name, before the object's header gives its identity). The name must
// be the plain file name of an engine entry: lock_path_for keeps only the last component, so
// "a/b.engine" would otherwise lock "b.engine".
// The decrypt key Python passes, a key file or its PEM text (at most one), or none.
std::optional<encryption::DecryptKey>
decrypt_key_from(std::optional<std::filesystem::path> const& key_file,
                 std::optional<std::string> const& key_pem) {
    if (key_file && key_pem) {
        throw InvalidArgument("give decrypt_key (a key file) or decrypt_key_pem (its text), "
                              "not both");
    }
    if (key_pem) {
        return encryption::DecryptKey::from_pem(*key_pem, "a key's PEM text");
    }
    if (key_file) {
        return encryption::DecryptKey::from_pem_file(*key_file);
    }
    return std::nullopt;
}

// An encrypted entry's plan opened with `key`, as bytes (the plaintext wiped from the copy the
// core made).
nb::bytes opened_bytes(SavedEngine const& saved, encryption::DecryptKey const& key) {
    std::vector<std::byte> plan;
    {
        nb::gil_scoped_release released;
        plan = saved.opened_plan(key);
    }
    nb::bytes out(plan.data(), plan.size());
    encryption::wipe(plan);
    return out;
}

// An encrypt_to key as Python passes it: its PEM text, or the path of its PEM file.
encryption::RecipientKey recipient_key_of(std::string const& key) {
    return key.starts_with("-----BEGIN")
               ? encryption::RecipientKey::from_pem(key, "an encrypt_to key")
               : encryption::RecipientKey::from_pem_file(key);
}

std::filesystem::path entry_lock_path(Store const& store, std::string const& file_name) {
    std::filesystem::path const path(file_name);
    if (!is_engine_file_name(file_name) || file_name.starts_with('.') ||
        file_name.find('\0') != std::string::npos || path.filename().string() != file_name) {
        std::string shown; // a NUL would end the message: shown as \x00
        for (char const c : file_name) {
            shown += c == '\0' ? std::string("\\x00") : std::string(1, c);
        }
        throw InvalidArgument("Store.lock_entry: file_name '" + shown +
                              "' is not the file name of an engine entry (a plain name ending in "
                              "'.engine', not starting with '.')");
    }
    return store.lock_path_for(path);
}

using PlanView = nb::ndarray<nb::memview, std::uint8_t const, nb::ndim<1>, nb::c_contig>;

} // namespace

void bind_store(nb::module_& module) {
    module.def(
        "default_cache_directory", [] { return default_cache_directory().string(); },
        "The cache directory: $XDG_CACHE_HOME/tensoracle, else <home>/.cache/tensoracle.");

    nb::class_<EngineIdentity>(module, "EngineIdentity",
                               "The identity of a saved engine: digest and file name of its "
                               "canonical conditions.")
        .def_ro("digest", &EngineIdentity::digest)
        .def_ro("file_name", &EngineIdentity::file_name)
        .def_prop_ro(
            "conditions",
            [](EngineIdentity const& identity) { return python_object(identity.conditions); },
            "The conditions (a new dict each time); the digest is that of their canonical JSON.")
        .def("__repr__", [](EngineIdentity const& identity) {
            return "EngineIdentity(file_name='" + identity.file_name + "')";
        });

    module.def(
        "make_identity",
        [](nb::handle conditions) { return make_identity(json_object(conditions, "conditions")); },
        nb::arg("conditions"),
        "Identity of the dict `conditions` of JSON values (needs a non-empty string \"name\"; "
        "floating point numbers are refused).");
    module.def(
        "recorded_identity",
        [](nb::handle conditions) {
            return recorded_identity(json_object(conditions, "conditions"));
        },
        nb::arg("conditions"),
        "Identity of conditions exactly as a saved header records them (targets neither sorted "
        "nor checked): what the name of a saved file, and a manifest entry's file_name, are.");

    nb::class_<FileLock>(module, "FileLock",
                         "A held cross-process lock on one identity; a context manager.")
        .def_prop_ro("path", [](FileLock const& lock) { return lock.path().string(); })
        .def_prop_ro("exclusive",
                     [](FileLock const& lock) { return lock.mode() == LockMode::exclusive; })
        .def_prop_ro("held", &FileLock::held)
        .def("release", &FileLock::release, "Releases the lock (again: no effect).")
        .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
        .def(
            "__exit__", [](FileLock& lock, nb::handle, nb::handle, nb::handle) { lock.release(); },
            nb::arg("exc_type").none(), nb::arg("exc_value").none(), nb::arg("traceback").none());

    nb::class_<SavedEngine>(module, "SavedEngine",
                            "A verified saved engine; `plan` is a view of its verified copy.")
        .def_prop_ro("path", [](SavedEngine const& saved) { return saved.path().string(); })
        .def_prop_ro(
            "conditions",
            [](SavedEngine const& saved) { return python_object(saved.header().conditions); })
        .def_prop_ro(
            "references",
            [](SavedEngine const& saved) { return python_object(saved.header().references); })
        .def_prop_ro(
            "plan",
            [](nb::handle self) {
                auto const& saved = nb::cast<SavedEngine const&>(self);
                if (saved.header().encryption) {
                    // The body is the plan sealed: never handed on as if it were one.
                    throw EngineKeyError(
                        "saved engine '" + saved.path().string() +
                            "' is encrypted: open it with a recipient's private key "
                            "(open_deployed(..., decrypt_key=...)), or decrypt it with "
                            "`tensoracle cache decrypt`",
                        saved.path());
                }
                auto const plan = saved.plan();
                std::size_t const shape[1] = {plan.size()};
                // The SavedEngine object owns the contents: every view holds a reference to it.
                return PlanView(reinterpret_cast<std::uint8_t const*>(plan.data()), 1, shape, self);
            },
            "Read-only memoryview of the plan bytes: the copy in this process's memory that was "
            "verified (the file is closed; later changes to it do not reach the view). Raises "
            "EngineKeyError for an encrypted entry (opened_plan opens it).")
        .def_prop_ro("encrypted",
                     [](SavedEngine const& saved) { return saved.header().encryption.has_value(); })
        .def_prop_ro(
            "recipients",
            [](SavedEngine const& saved) {
                auto const& encryption = saved.header().encryption;
                return encryption ? encryption::recipient_ids(*encryption)
                                  : std::vector<std::string>();
            },
            "The key ids (SHA-256 of each raw X25519 public key, 64 hex digits) an encrypted "
            "entry is sealed for, sorted; empty for a plain one.")
        .def(
            "opened_plan",
            [](SavedEngine const& saved, std::optional<std::filesystem::path> const& key_file,
               std::optional<std::string> const& key_pem) {
                auto const key = decrypt_key_from(key_file, key_pem);
                if (!key) {
                    throw InvalidArgument("SavedEngine.opened_plan: give decrypt_key (a key "
                                          "file) or decrypt_key_pem (its text)");
                }
                return opened_bytes(saved, *key);
            },
            nb::arg("decrypt_key").none() = nb::none(),
            nb::arg("decrypt_key_pem").none() = nb::none(),
            "The plan of an encrypted entry, opened with a recipient's X25519 private key (a "
            "file, or its PEM text), each chunk authenticated; the plan itself for a plain one. "
            "Raises EngineKeyError when the key is no recipient, CorruptEngineError when a chunk "
            "does not authenticate.")
        .def(
            "plan_for",
            [](nb::handle self, std::optional<std::filesystem::path> const& key_file,
               std::optional<std::string> const& key_pem) -> nb::object {
                auto const& saved = nb::cast<SavedEngine const&>(self);
                auto const key = decrypt_key_from(key_file, key_pem);
                check_decrypt_key(saved.header(), key ? &*key : nullptr, saved.path(),
                                  "saved engine", "open_engine(..., decrypt_key=...)");
                if (key && saved.header().encryption) {
                    return opened_bytes(saved, *key);
                }
                return self.attr("plan");
            },
            nb::arg("decrypt_key").none() = nb::none(),
            nb::arg("decrypt_key_pem").none() = nb::none(),
            "The plan open_engine hands to TensorRT for this entry and this decrypt key (a file, "
            "or its PEM text, or none): an encrypted entry's plan opened with the key, a plain "
            "entry's `plan` without one. Raises EngineKeyError for an encrypted entry without a "
            "key, a key that is no recipient, and a plain entry with a key (a downgrade); "
            "CorruptEngineError when a chunk does not authenticate.");

    nb::class_<Store>(module, "Store", "A directory of saved engines.")
        .def(nb::init<std::filesystem::path>(), nb::arg("directory"),
             "Opens the directory, creating it (owner-only) when missing.")
        .def_prop_ro("directory", [](Store const& store) { return store.directory().string(); })
        .def(
            "entry_path",
            [](Store const& store, EngineIdentity const& identity) {
                return store.entry_path(identity).string();
            },
            nb::arg("identity"))
        .def(
            "lock_path",
            [](Store const& store, EngineIdentity const& identity) {
                return store.lock_path(identity).string();
            },
            nb::arg("identity"))
        .def("contains", &Store::contains, nb::arg("identity"))
        .def(
            "lock",
            [](Store const& store, EngineIdentity const& identity, bool exclusive) {
                return store.lock(identity, exclusive ? LockMode::exclusive : LockMode::shared);
            },
            nb::arg("identity"), nb::arg("exclusive"), nb::call_guard<nb::gil_scoped_release>(),
            "Blocks (without holding the GIL) until the identity's lock is granted.")
        .def(
            "try_lock",
            [](Store const& store, EngineIdentity const& identity, bool exclusive) {
                return FileLock::try_acquire(store.lock_path(identity),
                                             exclusive ? LockMode::exclusive : LockMode::shared);
            },
            nb::arg("identity"), nb::arg("exclusive"),
            "The identity's lock when it is free now, else None (never waits).")
        .def(
            "lock_entry",
            [](Store const& store, std::string const& file_name, bool exclusive) {
                std::filesystem::path const lock_path = entry_lock_path(store, file_name);
                nb::gil_scoped_release released;
                return FileLock::acquire(lock_path,
                                         exclusive ? LockMode::exclusive : LockMode::shared);
            },
            nb::arg("file_name"), nb::arg("exclusive"),
            "Blocks (without holding the GIL) until the lock of the entry `file_name` is granted: "
            "the same lock as lock(identity) for the identity whose file name it is. Raises "
            "ValueError when `file_name` is not the plain file name of an engine entry.")
        .def(
            "remove_abandoned_temporaries",
            [](Store const& store, std::string const& file_name) {
                return store.remove_abandoned_temporaries(file_name);
            },
            nb::arg("file_name"), nb::call_guard<nb::gil_scoped_release>(),
            "Removes the temporary files that killed writers of the entry `file_name` left (their "
            "process is gone); call it holding the entry's exclusive lock. Returns how many.")
        .def("read", &Store::read, nb::arg("identity"), nb::call_guard<nb::gil_scoped_release>(),
             "The verified entry, or None when there is none. Raises CorruptEngineError, "
             "EngineConditionError or OSError.")
        .def(
            "save",
            [](Store const& store, EngineIdentity const& identity, nb::handle references_value,
               nb::handle plan, std::vector<std::string> const& encrypt_to) {
                auto references = json_object(references_value, "references");
                std::vector<encryption::RecipientKey> recipients;
                recipients.reserve(encrypt_to.size());
                for (std::string const& key : encrypt_to) {
                    recipients.push_back(recipient_key_of(key));
                }
                BufferView const view(plan);
                nb::gil_scoped_release released;
                return store.save(identity, std::move(references), view.bytes(), recipients)
                    .string();
            },
            nb::arg("identity"), nb::arg("references"), nb::arg("plan"),
            nb::arg("encrypt_to") = std::vector<std::string>(),
            "Atomically saves `plan` (any contiguous bytes-like object, read in place) as the "
            "identity's entry; returns its path. With `encrypt_to` (X25519 public keys: PEM "
            "files, or PEM texts), the plan is sealed for those recipients (engine file format "
            "3) and only the sealed bytes are written.");

    module.def(
        "recipient_key_id", [](std::string const& key) { return recipient_key_of(key).id(); },
        nb::arg("key"),
        "The key id of an X25519 public key (a PEM file, or its PEM text): the SHA-256 of its raw "
        "32 bytes, 64 hex digits, as an encrypted entry's header names its recipients. Raises "
        "OSError when the file cannot be read, ValueError when it holds no X25519 public key.");

    module.def(
        "weight_digest",
        [](std::filesystem::path const& cache_directory, std::filesystem::path const& path,
           bool force) {
            auto const digest = weight_digest(cache_directory, path, force);
            return std::make_pair(digest.sha256, digest.from_record);
        },
        nb::arg("cache_directory"), nb::arg("path"), nb::arg("force") = false,
        nb::call_guard<nb::gil_scoped_release>(),
        "(sha256 hex, from_record) of a weight file, reusing the record in `cache_directory` "
        "when path, size, mtime and inode match (unless `force`).");

    // The core's words for what it refuses at a cache entry's name, so that Python's own reads
    // of the cache folder say the same.
    module.def("link_refusal", &link_refusal, nb::arg("path"),
               "Why a symbolic link at `path` in the cache folder is refused.");
    module.def("not_regular_refusal", &not_regular_refusal, nb::arg("path"), nb::arg("directory"),
               "Why a directory (`directory`) or another file that is not regular (a FIFO, socket "
               "or device) at `path` in the cache folder is refused.");
}

} // namespace tensoracle::bindings
