// Base64 through libsodium (its original variant: the standard alphabet with padding), after
// the form both codecs require (text/base64_form.hpp).
#include "text/base64.hpp"

#include "text/base64_form.hpp"

#include <sodium.h>

namespace tensoracle {

std::string base64_encode(std::span<std::byte const> bytes) {
    std::size_t const length =
        sodium_base64_encoded_len(bytes.size(), sodium_base64_VARIANT_ORIGINAL);
    std::string text(length, '\0'); // with its terminating NUL, cut off below
    sodium_bin2base64(text.data(), text.size(),
                      reinterpret_cast<unsigned char const*>(bytes.data()), bytes.size(),
                      sodium_base64_VARIANT_ORIGINAL);
    text.resize(length - 1);
    return text;
}

std::optional<std::vector<std::byte>> base64_decode(std::string_view text) {
    if (detail::base64_padding(text) < 0) {
        return std::nullopt;
    }
    std::vector<std::byte> bytes(text.size() / 4 * 3);
    std::size_t decoded = 0;
    if (sodium_base642bin(reinterpret_cast<unsigned char*>(bytes.data()), bytes.size(), text.data(),
                          text.size(), nullptr, &decoded, nullptr,
                          sodium_base64_VARIANT_ORIGINAL) != 0) {
        return std::nullopt;
    }
    bytes.resize(decoded);
    return bytes;
}

} // namespace tensoracle
