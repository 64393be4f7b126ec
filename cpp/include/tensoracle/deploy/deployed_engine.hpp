// Opening a deployed engine: the manifest entry an application selected, read from the local
// cache folder and checked against the manifest before any of its bytes can reach TensorRT.
//
//   auto const options = tensoracle::deploy::options_from_environment();
//   auto const manifest = tensoracle::deploy::read_manifest("deploy.json", options);
//   auto const& entry =
//       tensoracle::deploy::select_for_device(manifest, "encoder", device, backend);
//   auto const engine = tensoracle::deploy::DeployedEngine::open(entry, options);
//   // engine.plan_data(), engine.plan_size(): the verified plan, for TensorRT (tensorrt.hpp)
//
// With OpenOptions::stream_plan the plan is not read by open(): the checks below are made on
// the header, and each chunk of the plan is checked as a PlanReader hands it on (plan_reader.hpp).
//
// open() reads the entry's file without following a symbolic link into this process's own memory,
// hashing each piece as it is read (one pass), and judges only that copy: the plan handed out is
// the bytes verified, whatever another process then writes into the file, truncates or replaces.
// A file of another size than the manifest's is refused before any of it is read. It refuses the
// entry unless, in this order:
// 1. with a verify key: the manifest carries a signature for the entry and the key accepts it
//    over the entry's file name and the SHA-256 of the bytes held (format version 2: of the
//    preamble and header, which record each plan chunk's SHA-256; version 1: of every byte of
//    the file); nothing of the file is decoded before this;
// 2. the header is well formed and the plan's XXH3-128 is the one it records (with a key and
//    format version 2, each chunk's SHA-256 as well, or without one each chunk's XXH3-128).
//    Streamed, each chunk is checked instead as it is read, against the chunk digests of the
//    header: the SHA-256 with a key; without one the XXH3-128, and the whole plan's XXH3-128
//    over the chunks before the last one is handed on (plan_reader.hpp);
// 3. the header's conditions are the entry's (so its file name is their identity), and its
//    plan size, checksum, file size and IO signature are the manifest's.
// This header compiles as C++17.
#pragma once

#include "tensoracle/deploy/manifest.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tensoracle::deploy {

// The environment variable naming the verify key, as for the Python package's remote cache.
inline constexpr char const* kVerifyKeyVariable = "TENSORACLE_REMOTE_VERIFY_KEY";
// The environment variable naming a trust policy file (signed_manifest.hpp, trust_policy.hpp).
inline constexpr char const* kTrustPolicyVariable = "TENSORACLE_TRUST_POLICY";

struct OpenOptions {
    // The cache folder; empty: the default folder, by the same rules as the Python package
    // ($XDG_CACHE_HOME/tensoracle when XDG_CACHE_HOME is set and not empty, else
    // ~/.cache/tensoracle; on Windows under %USERPROFILE%).
    std::filesystem::path cache_directory;
    // The file of an Ed25519 public key (PEM "PUBLIC KEY", as `openssl pkey -pubout` writes it):
    // read without following a link, a regular file of at most 64 KiB. When a key is set (here or
    // as verify_key_pem), an entry the manifest records no signature for is refused, and one it
    // records a signature for must be that key's.
    std::filesystem::path verify_key;
    // The same key given as its PEM text instead (set one of the two).
    std::string verify_key_pem{};
    // Without a key, an entry the manifest records a signature for is refused
    // (UntrustedEngineError, saying how to pass the key): a key that was not passed through
    // never means a silently unverified open. Set this to open such entries unverified anyway.
    bool skip_signature_verification = false;
    // How the plan is held. false: the whole file is copied into this process's memory and
    // checked before open() returns (plan_data()). true: open() reads and checks the header only
    // and keeps the file open; the plan is handed on through a PlanReader (plan_reader.hpp),
    // chunk by chunk, each checked against the digests of the verified header just before, so
    // the extra memory is one chunk (kPlanChunkBytes, plan_chunks.hpp) whatever the plan's size
    // (streamed()). An entry saved before chunk digests existed (engine format version 1) is copied
    // whole either way.
    bool stream_plan = false;
    // A trust policy file (trust_policy.hpp): the keys, M of which must have signed the
    // manifest that read_manifest(path, options) reads (signed_manifest.hpp). Set this or a
    // verify key.
    std::filesystem::path trust_policy{};
    // The lowest signed manifest version read_manifest(path, options) accepts (0: any), on top
    // of the policy's and of the last version the cache folder accepted.
    std::uint64_t minimum_version = 0;
    // The file of an X25519 private key (PEM "PRIVATE KEY", as `openssl genpkey -algorithm
    // x25519` writes it), read as verify_key is: the key an encrypted engine (format 3) is opened
    // with. Each chunk of its plan is checked as above, then authenticated and decrypted before
    // any of its bytes is handed on; the plan is held decrypted only in this process's memory
    // (whole, or one chunk when streamed), never written anywhere. With a key set, an engine that
    // is not encrypted for it is refused (EngineKeyError), a plain one included: a key set means
    // an encrypted engine is expected. Without one, an encrypted engine is refused.
    std::filesystem::path decrypt_key{};
    // The same key given as its PEM text instead (set one of the two).
    std::string decrypt_key_pem{};
};

// How one engine file is opened on its own (DeployedEngine::open_file and open_bytes), without a
// manifest or a cache folder.
struct EngineFileOptions {
    // The Ed25519 public key (PEM "PUBLIC KEY") that must have signed the file: the file must end
    // in a signature trailer (as `tensoracle cache push` publishes an engine) that this key
    // accepts, over the engine's entry name and the SHA-256 of its preamble and header (format
    // version 2, which record each plan chunk's SHA-256) or of every engine byte (version 1).
    // Read as OpenOptions::verify_key is.
    std::filesystem::path verify_key;
    // The same key given as its PEM text instead (set one of the two).
    std::string verify_key_pem{};
    // Without a key, a file that ends in a signature trailer is refused (UntrustedEngineError):
    // set this to open it unverified anyway (the trailer is then not judged).
    bool skip_signature_verification = false;
    // The private key an encrypted engine file is opened with, as OpenOptions::decrypt_key.
    std::filesystem::path decrypt_key{};
    std::string decrypt_key_pem{};
};

// The default folder, and the verify key TENSORACLE_REMOTE_VERIFY_KEY gives when it is set and
// not empty (its PEM text when it starts with "-----BEGIN", else the path of the key file);
// or, instead of the key, the trust policy file TENSORACLE_TRUST_POLICY names when it is set and
// not empty. Throws InvalidArgument when no default folder can be found (neither XDG_CACHE_HOME
// nor HOME is set).
OpenOptions options_from_environment();

// A verified deployed engine. Movable, not copyable; the plan stays valid while it lives.
class DeployedEngine {
public:
    // Throws, naming the file, the field, and the observed and expected values:
    // - FileError when the entry is not in the cache folder (ENOENT: pull it first, with
    //   `tensoracle cache pull --manifest`), or cannot be read;
    // - UntrustedEngineError when a verify key is set and the manifest records no signature for
    //   the entry, or the key does not accept it; or when no key is set, the manifest records a
    //   signature for the entry, and skip_signature_verification is not set;
    // - CorruptEngineError when the file is damaged, truncated, a link or not a regular file, or
    //   its plan size, checksum or file size differ from the manifest's;
    // - EngineConditionError when the header's conditions are not the entry's;
    // - EngineIOError when the header's IO signature differs from the manifest's;
    // - InvalidArgument or FileError when the verify key cannot be read, or both verify_key and
    //   verify_key_pem are set (the same for the decrypt key);
    // - EngineKeyError when the engine is encrypted and no decrypt key is set or the key is not
    //   one of its recipients, or a decrypt key is set and the engine is not encrypted;
    //   CorruptEngineError when a chunk of an encrypted plan does not authenticate.
    static DeployedEngine open(ManifestEntry const& entry, OpenOptions const& options);

    // One engine file an application ships by itself, without a manifest or a cache folder: the
    // file at `path` (read without following a symbolic link, a regular file only) is copied
    // into this process's memory and checked there, whole, before this returns: with a verify
    // key its signature trailer first (of the header only the conditions are read before, within
    // the limits of every header read, for the entry name the signature names), then the header
    // (format, schema, limits), the plan's XXH3-128 and each chunk's digests (the SHA-256 ones
    // with a key, which the signature binds), and that the header's conditions have an
    // identity. entry() is made from the verified header: file_name is the
    // identity of its conditions (what a signature names, whatever the file is called), recipe
    // its conditions' name, io its IO signature; fleet, sha256 and header_sha256 are absent.
    // The plan is held whole (plan_data(); streamed() is false). Throws FileError when the file
    // cannot be read, CorruptEngineError when it is damaged, truncated, a link or not a regular
    // file, UntrustedEngineError when a key is set and the file is unsigned or the key does not
    // accept its signature (or no key is set and the file is signed, unless
    // skip_signature_verification), InvalidArgument as open() for a key that cannot be used.
    static DeployedEngine open_file(std::filesystem::path const& path,
                                    EngineFileOptions const& options = {});
    // The same for the `size` bytes at `data` (copied: they may be released after this
    // returns); `name` names them in messages and as path().
    static DeployedEngine open_bytes(void const* data, std::size_t size, std::string const& name,
                                     EngineFileOptions const& options = {});

    DeployedEngine(DeployedEngine&& other) noexcept;
    DeployedEngine& operator=(DeployedEngine&& other) noexcept;
    DeployedEngine(DeployedEngine const&) = delete;
    DeployedEngine& operator=(DeployedEngine const&) = delete;
    ~DeployedEngine();

    ManifestEntry const& entry() const noexcept;
    std::filesystem::path const& path() const noexcept;
    // The plan: the bytes to hand to TensorRT's deserializeCudaEngine, and only these; null
    // when streamed() (read it through a PlanReader).
    std::byte const* plan_data() const noexcept;
    std::size_t plan_size() const noexcept;
    // Whether the plan is read from the open file chunk by chunk (OpenOptions::stream_plan, for
    // an entry with chunk digests) instead of held whole.
    bool streamed() const noexcept;
    // The fingerprint of the verify key that accepted the signature (absent without a key).
    std::optional<std::string> const& signer() const noexcept;

private:
    friend class PlanReader;
    struct State;
    explicit DeployedEngine(std::unique_ptr<State> state) noexcept;
    // open_file's and open_bytes's checks of the bytes `state` holds (`held`), named `name`.
    static void verify_held(State& state, std::byte const* held, std::size_t size,
                            std::string const& name, EngineFileOptions const& options);
    std::unique_ptr<State> state_;
};

// A deployed engine opened for a GPU, with what chose it.
struct SelectedEngine {
    DeployedEngine engine;
    ManifestEntry const* entry = nullptr; // the manifest's entry chosen (lives with the manifest)
    std::string why;                      // the selection's reason for choosing it
};

// The entry of `recipe` that select_recipe chooses for `device` and `backend`, opened and
// verified (DeployedEngine::open with `options`); nothing of TensorRT is called. Throws
// selected_entry's refusals when no entry can run (EngineTargetError listing every candidate,
// InvalidArgument for an unknown recipe), then DeployedEngine::open's.
SelectedEngine open_selected(Manifest const& manifest, std::string_view recipe,
                             DeviceDescription const& device, RuntimeBackend const& backend,
                             OpenOptions const& options);

} // namespace tensoracle::deploy
