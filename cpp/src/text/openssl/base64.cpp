// Base64 through OpenSSL's block codec (EVP_EncodeBlock / EVP_DecodeBlock, which write no line
// breaks), after the form both codecs require (text/base64_form.hpp).
#include "text/base64.hpp"

#include "text/base64_form.hpp"

#include <openssl/evp.h>

namespace tensoracle {

std::string base64_encode(std::span<std::byte const> bytes) {
    std::string text(4 * ((bytes.size() + 2) / 3), '\0');
    int const written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(text.data()),
                                        reinterpret_cast<unsigned char const*>(bytes.data()),
                                        static_cast<int>(bytes.size()));
    text.resize(static_cast<std::size_t>(written));
    return text;
}

std::optional<std::vector<std::byte>> base64_decode(std::string_view text) {
    int const padding = detail::base64_padding(text);
    if (padding < 0) {
        return std::nullopt;
    }
    std::vector<std::byte> bytes(text.size() / 4 * 3);
    if (text.empty()) {
        return bytes;
    }
    // EVP_DecodeBlock counts the padding as zero bytes: they are cut off below.
    int const decoded = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                                        reinterpret_cast<unsigned char const*>(text.data()),
                                        static_cast<int>(text.size()));
    if (decoded < 0 || static_cast<std::size_t>(decoded) != bytes.size()) {
        return std::nullopt;
    }
    bytes.resize(bytes.size() - static_cast<std::size_t>(padding));
    return bytes;
}

} // namespace tensoracle
