// Wrapping an encrypted engine's data key for its recipients (data_key.hpp).
#include "encryption/data_key.hpp"

#include "io/hash.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>

namespace tensoracle::encryption {
namespace {

constexpr std::string_view kWrapInfo = "tensoracle engine key v1";
constexpr std::string_view kCommitmentPrefix = "tensoracle data key v1\n";

// The wrap key of `shared` between the ephemeral key and the recipient.
Key wrap_key(Key const& shared, Key const& ephemeral, Key const& recipient) {
    std::array<std::byte, 2 * kKeyBytes> salt{};
    std::copy(ephemeral.bytes().begin(), ephemeral.bytes().end(), salt.begin());
    std::copy(recipient.bytes().begin(), recipient.bytes().end(), salt.begin() + kKeyBytes);
    return hkdf_sha256(shared.bytes(), salt, kWrapInfo);
}

} // namespace

Key fresh_data_key() {
    Key key;
    random_bytes(key.bytes());
    return key;
}

std::string key_commitment(Key const& data_key) {
    Sha256 digest;
    digest.update(kCommitmentPrefix);
    digest.update(std::span<std::byte const>(data_key.bytes()));
    return digest.hex_digest();
}

WrappedKey wrap_data_key(Key const& data_key, RecipientKey const& recipient) {
    DecryptKey const ephemeral = DecryptKey::generate();
    WrappedKey out;
    out.recipient = recipient.id();
    out.ephemeral = ephemeral.recipient().raw();
    Key const shared = x25519_shared(ephemeral.secret(), recipient.raw());
    seal(wrap_key(shared, out.ephemeral, recipient.raw()), Nonce{}, {}, data_key.bytes(),
         out.wrapped);
    return out;
}

std::optional<Key> unwrap_data_key(WrappedKey const& wrapped, DecryptKey const& key) {
    Key shared;
    try {
        shared = x25519_shared(key.secret(), wrapped.ephemeral);
    } catch (InvalidArgument const&) {
        return std::nullopt; // an ephemeral key of small order: no wrap key agrees with it
    }
    Key data_key;
    if (!open(wrap_key(shared, wrapped.ephemeral, key.recipient().raw()), Nonce{}, {},
              wrapped.wrapped, data_key.bytes())) {
        return std::nullopt;
    }
    return data_key;
}

} // namespace tensoracle::encryption
