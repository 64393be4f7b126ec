// Which publishers an application trusts to choose its engines: the verify keys whose signatures
// of a deployment manifest count, how many of them must sign (M of N), and the lowest manifest
// version it accepts. Keys are rotated by adding the new key to the policy, signing with both
// for a while, then removing the old one.
//
// A policy file is JSON:
//   {"schema_version": 1, "threshold": 2, "minimum_version": 12,
//    "keys": {"<key id>": "-----BEGIN PUBLIC KEY-----\n...\n-----END PUBLIC KEY-----\n", ...}}
// where each key id is the fingerprint of its key (`tensoracle manifest verify` and
// VerifyKey::fingerprint print it) and minimum_version is optional (0). This header compiles as
// C++17.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tensoracle::deploy {

inline constexpr int kTrustPolicySchemaVersion = 1;

struct TrustedKey {
    std::string keyid;          // the key's fingerprint: 16 lowercase hex digits
    std::string public_key_pem; // an Ed25519 public key, PEM "PUBLIC KEY"
};

struct TrustPolicy {
    std::vector<TrustedKey> keys;
    std::size_t threshold = 1;         // how many of `keys` must have signed
    std::uint64_t minimum_version = 0; // a signed manifest of a lower version is refused
};

// Reads a policy file (at most 1 MiB). Throws InvalidArgument naming the file,
// the field and the value when it is not a policy: a key id that is not its key's fingerprint,
// a key that is not an Ed25519 public key, no keys, or a threshold of 0 or above their number;
// FileError when it cannot be read.
TrustPolicy read_trust_policy(std::filesystem::path const& path);
TrustPolicy parse_trust_policy(std::string_view text, std::string const& name);

// The policy of one key (its PEM text; `origin` names it in messages): threshold 1. Throws
// InvalidArgument when the text is not an Ed25519 public key.
TrustPolicy single_key_policy(std::string const& public_key_pem, std::string const& origin);

} // namespace tensoracle::deploy
