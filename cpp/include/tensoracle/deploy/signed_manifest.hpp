// Signed deployment manifests: the publisher's signature decides which engine runs.
//
// `tensoracle manifest sign` (or `tensoracle build --manifest FILE --sign-key KEY`) writes the
// manifest as a DSSE envelope (payload type application/vnd.in-toto+json) over an in-toto
// Statement v1: its subjects are the entries' engine files, each by file name with the SHA-256
// of the whole file; its predicate (type kManifestPredicateType) is the manifest itself with its
// release (version, expiry), each entry recording the SHA-256 of its file's preamble and header
// too. Each signature is Ed25519 over DSSE's pre-authentication encoding of the payload.
//
// An application reads it with read_manifest(path, options): with a verify key or a trust
// policy (trust_policy.hpp) the envelope is verified before anything in it is used, and each
// entry then opens only when its file is byte for byte what the signed manifest names
// (DeployedEngine::open checks the header's SHA-256 before decoding a byte of it, and each plan
// chunk's SHA-256 against the header before it is handed on). This header compiles as C++17.
#pragma once

#include "tensoracle/deploy/deployed_engine.hpp"
#include "tensoracle/deploy/manifest.hpp"
#include "tensoracle/deploy/trust_policy.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace tensoracle::deploy {

inline constexpr char const* kEnvelopePayloadType = "application/vnd.in-toto+json";
inline constexpr char const* kStatementType = "https://in-toto.io/Statement/v1";
inline constexpr char const* kManifestPredicateType = "urn:tensoracle:deployment-manifest:v1";
// More signatures than any threshold needs: an envelope with more is refused unread.
inline constexpr std::size_t kMaxEnvelopeSignatures = 32;
// Where a cache folder remembers the last manifest version it accepted for each spec.
inline constexpr char const* kManifestVersionsFile = "manifest-versions.json";

// The manifest a signed manifest's text holds, once verified against `policy` at the time `now`
// (nanoseconds since the Unix epoch): at least policy.threshold of its keys signed the envelope,
// the manifest has not expired, its version is at least policy.minimum_version, and its subjects
// are its entries' files. Entries carry the accepting key ids (ManifestEntry::manifest_signers).
// Throws UntrustedEngineError naming the file and what failed (too few signatures, and which key
// ids signed; expired, and when; a version below the minimum; an entry without its subject),
// InvalidArgument naming the field and value for an envelope or statement that is malformed.
Manifest verify_signed_manifest(std::string_view text, std::string const& name,
                                TrustPolicy const& policy, std::int64_t now);

// The manifest at `path` as an application opening engines from options.cache_directory trusts
// it:
// - with a trust policy (options.trust_policy) or a verify key (options.verify_key or
//   verify_key_pem, a policy of that key alone): it must be a signed manifest that
//   verify_signed_manifest accepts (an unsigned one is refused, UntrustedEngineError), of a
//   version no lower than options.minimum_version and than the last version the cache folder
//   accepted for its spec (remembered in kManifestVersionsFile, written atomically under its
//   lock; a folder that cannot be written is checked against what it holds, and not updated);
// - without either: a plain manifest is read as read_manifest(path) reads it (with the weaker
//   guarantee that whoever can write the manifest chooses the engine), and a signed one is
//   refused unless options.skip_signature_verification, which reads it unverified.
Manifest read_manifest(std::filesystem::path const& path, OpenOptions const& options);

// The trust policy `options` give (options.trust_policy's file, else the verify key alone);
// no keys when neither is set. options.minimum_version raises the policy's minimum.
TrustPolicy policy_of(OpenOptions const& options);

} // namespace tensoracle::deploy
