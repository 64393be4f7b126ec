// Reading the X25519 keys of encrypted engines (recipient_key.hpp).
#include "encryption/recipient_key.hpp"

#include "io/hash.hpp"
#include "remote/key_file.hpp"

namespace tensoracle::encryption {
namespace {

std::string file_origin(std::filesystem::path const& path) {
    return "key file '" + path.string() + "'";
}

} // namespace

RecipientKey RecipientKey::from_pem(std::string_view pem, std::string_view origin) {
    return RecipientKey(x25519_key_from_pem(pem, origin, false));
}

RecipientKey RecipientKey::from_pem_file(std::filesystem::path const& path) {
    return from_pem(detail::read_key_file(path), file_origin(path));
}

std::string RecipientKey::id() const {
    return sha256_hex(std::span<std::byte const>(raw_.bytes()));
}

DecryptKey::DecryptKey(Key const& secret, std::string origin)
    : secret_(secret), recipient_(RecipientKey::from_raw(x25519_public_of(secret))),
      origin_(std::move(origin)) {}

DecryptKey DecryptKey::from_pem(std::string_view pem, std::string_view origin) {
    return {x25519_key_from_pem(pem, origin, true), std::string(origin)};
}

DecryptKey DecryptKey::from_pem_file(std::filesystem::path const& path) {
    std::string text = detail::read_key_file(path);
    DecryptKey key = from_pem(text, file_origin(path));
    wipe(std::as_writable_bytes(std::span(text)));
    return key;
}

DecryptKey DecryptKey::generate() {
    Key secret;
    random_bytes(secret.bytes());
    return {secret, "a generated key"};
}

} // namespace tensoracle::encryption
