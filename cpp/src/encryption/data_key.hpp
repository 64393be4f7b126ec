// Private to the core: the data key of an encrypted engine and its copies wrapped for each
// recipient. Every encryption draws a fresh 32-byte data key; the plan is sealed with it
// (plan_sealing.hpp) and the key itself is stored only wrapped, once per recipient:
//   ephemeral = a one-time X25519 key pair, drawn for this recipient
//   shared    = X25519(ephemeral private key, recipient's public key)
//   wrap key  = HKDF-SHA256(shared, salt = ephemeral public key || recipient's public key,
//                           info = "tensoracle engine key v1")
//   wrapped   = AES-256-GCM(wrap key, nonce = 12 zero bytes, data key): 32 bytes and a 16-byte tag
// (each wrap key seals one message only, so the fixed nonce is never reused under a key). The
// recipient derives the same wrap key from its private key and the ephemeral public key. The
// header also records a commitment to the data key, SHA-256("tensoracle data key v1\n" || key),
// which every recipient checks: all of them read the same plan, whoever wrapped their copy.
#pragma once

#include "encryption/primitives.hpp"
#include "encryption/recipient_key.hpp"

#include <array>
#include <optional>
#include <string>

namespace tensoracle::encryption {

inline constexpr std::size_t kWrappedKeyBytes = kKeyBytes + kTagBytes;

// One recipient's copy of the data key.
struct WrappedKey {
    std::string recipient; // RecipientKey::id()
    Key ephemeral;         // the one-time public key
    std::array<std::byte, kWrappedKeyBytes> wrapped{};
};

// A fresh random data key.
Key fresh_data_key();

// SHA-256("tensoracle data key v1\n" || data key), 64 lowercase hex digits.
std::string key_commitment(Key const& data_key);

// `data_key` wrapped for `recipient`.
WrappedKey wrap_data_key(Key const& data_key, RecipientKey const& recipient);

// The data key `wrapped` holds, unwrapped with `key`; nothing when its tag does not authenticate
// under the wrap key `key` derives (another recipient's copy, or a changed one).
std::optional<Key> unwrap_data_key(WrappedKey const& wrapped, DecryptKey const& key);

} // namespace tensoracle::encryption
