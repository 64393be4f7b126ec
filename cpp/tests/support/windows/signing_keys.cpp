// Test keys on Windows (see signing_keys.hpp): a fresh Ed25519 key from libsodium, written as
// the PKCS#8 PEM OpenSSL writes (RFC 8410: the 32-byte seed after a fixed 16-byte prefix), and a
// fixed RSA key made once with `openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024`
// (test data: only its algorithm matters to the tests).
#include "support/signing_keys.hpp"

#include <array>
#include <cstdint>
#include <sodium.h>
#include <stdexcept>
#include <vector>

namespace tensoracle::testing {
namespace {

std::string base64(std::vector<unsigned char> const& bytes) {
    constexpr std::string_view kAlphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        std::uint32_t chunk = std::uint32_t{bytes[i]} << 16U;
        if (i + 1 < bytes.size()) {
            chunk |= std::uint32_t{bytes[i + 1]} << 8U;
        }
        if (i + 2 < bytes.size()) {
            chunk |= bytes[i + 2];
        }
        out.push_back(kAlphabet[(chunk >> 18U) & 63U]);
        out.push_back(kAlphabet[(chunk >> 12U) & 63U]);
        out.push_back(i + 1 < bytes.size() ? kAlphabet[(chunk >> 6U) & 63U] : '=');
        out.push_back(i + 2 < bytes.size() ? kAlphabet[chunk & 63U] : '=');
    }
    return out;
}

} // namespace

std::string new_private_key_pem() {
    if (sodium_init() < 0) {
        throw std::runtime_error("libsodium could not initialise");
    }
    std::array<unsigned char, crypto_sign_SEEDBYTES> seed{};
    randombytes_buf(seed.data(), seed.size());
    std::vector<unsigned char> der = {0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06,
                                      0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20};
    der.insert(der.end(), seed.begin(), seed.end());
    return "-----BEGIN PRIVATE KEY-----\n" + base64(der) + "\n-----END PRIVATE KEY-----\n";
}

std::string new_rsa_private_key_pem() {
    return "-----BEGIN PRIVATE KEY-----\n"
           "MIICdgIBADANBgkqhkiG9w0BAQEFAASCAmAwggJcAgEAAoGBAPuVIwqGEfl4NY1w\n"
           "Z1aruvrnR96zXBfXjMRQFRHucjBeKkvKQYfyqvC2Tv2p7CS84F9/OrC4M3n5gPXE\n"
           "QrYPStZ930xKAWCHa8gzcUBmUCUZEpNHrpzOcEepDnD/G/LcFjMXSYNF0Aumsc6+\n"
           "zYIMi/s4xjqQQeVAnr3At639eFyNAgMBAAECgYAx9jkiQuPY7iV8dEEhdjNI1ptw\n"
           "P6BfX8Al0F2O1RK6RkkSChWfgPKvoRTozVEHLrdEX8jxBXO7mnAg3pv8+eZ7c3Dk\n"
           "DxX1TP3hV3dZX4UP/7JvsuOj5HW+wprsXMwlspHcdwc8s53YrX4FSwsGuscpsBAI\n"
           "vBrp+0PL3ZBXrHhY4QJBAP9u+EVPcM95UvcHNc2oE7TDxjsT1rnihXHe8aPyibHl\n"
           "dd87BUO+vzQZ1dcQ8lf3xlh0dStzCywlyFi/NNoxWkkCQQD8I/sIkdP3OH6wtQFk\n"
           "vWY2QLCo2nLWJjGeC05YTLVAn1c26/AiUKEFMns3E9cC9uZFpJ+bEE+GEaGvaBLr\n"
           "I9AlAkA+pDAujzTTLKWz/wiqzrVGd1x90HewTmT7b/lCg5BRGDy36fl4i6bIWC2g\n"
           "+H72I8V4m9bAOQ5cXUesu/dyKvhBAkEAoUF5uV9aixAMpoL84yrmhegVk8gyDZfb\n"
           "v9JHRt24Rh4iLzPyHmAmuyYv+2eq6XBykTPaB9gEpB/+oioTf2MmKQJARVwkMZhR\n"
           "04CWVHnBdGkunU/7rx6GypPTEIs/6I+4f+bXapw03HH0TV6MMukjpIDkcZ5FHmvh\n"
           "DBH5z0kScycNZA==\n"
           "-----END PRIVATE KEY-----\n";
}

} // namespace tensoracle::testing
