// libFuzzer target: any bytes read as an encrypted engine file (format 3) and opened with one
// recipient's key, as a deployed engine opens it: decode_engine_header must accept the bytes or
// throw CorruptEngineError; for an encrypted header, open_data_key with the target's fixed key
// must give the data key or throw EngineKeyError; then every chunk of the sealed body is opened
// on its own (a seeking reader may ask for any), and open_sealed_chunk must give its piece or
// throw CorruptEngineError. A piece that opens must seal back to exactly the chunk it came from,
// and open_plan (the whole plan at once) must open exactly when every chunk does, to the same
// bytes.
// Any other exception, a sanitizer report or an allocation beyond libFuzzer's limit is a finding.
//
// The fixed key is the X25519 private key whose 32 bytes are SHA-256("tensoracle fuzz recipient
// v1"): cpp/fuzz/encrypted_engine_seeds.py seals its seeds for it.
#include "cache/engine_file.hpp"
#include "encryption/plan_encryption.hpp"
#include "encryption/plan_sealing.hpp"
#include "io/hash.hpp"
#include "io/hex_digits.hpp"
#include "tensoracle/errors.hpp"
#include "text/base64.hpp"
#include "text/utf8_text.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

namespace {

namespace encryption = tensoracle::encryption;

// The fixed key as a PEM "PRIVATE KEY" (RFC 8410's PKCS #8 DER of an X25519 key, as OpenSSL
// writes it: the 16 bytes below, then the key's 32), read by the reader a key file goes through.
encryption::DecryptKey fixed_key() {
    constexpr std::array<unsigned char, 16> kPrivateKeyDer = {0x30, 0x2e, 0x02, 0x01, 0x00, 0x30,
                                                              0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e,
                                                              0x04, 0x22, 0x04, 0x20};
    std::vector<std::byte> der(kPrivateKeyDer.size() + encryption::kKeyBytes);
    std::transform(kPrivateKeyDer.begin(), kPrivateKeyDer.end(), der.begin(),
                   [](unsigned char c) { return std::byte{c}; });
    tensoracle::detail::from_lower_hex(tensoracle::sha256_hex("tensoracle fuzz recipient v1"),
                                       std::span(der).subspan(kPrivateKeyDer.size()));
    std::string const pem = "-----BEGIN PRIVATE KEY-----\n" + tensoracle::base64_encode(der) +
                            "\n-----END PRIVATE KEY-----\n";
    return encryption::DecryptKey::from_pem(pem, "the fuzzer's fixed key");
}

// A refusal's message must be text Python can raise as a str.
void check_message(tensoracle::Error const& error) {
    if (!tensoracle::is_valid_utf8(error.what())) {
        std::abort();
    }
}

// Chunk `index` of `body` opened into its piece of `plan`; if it opens, it must seal back to
// itself. Returns whether it opened.
bool open_chunk(encryption::Key const& data_key, std::uint64_t index,
                std::span<std::byte const> body, std::span<std::byte> plan,
                std::filesystem::path const& path) {
    static std::vector<std::byte> again(tensoracle::kPlanChunkBytes);
    auto const piece = static_cast<std::size_t>(encryption::sealed_piece_size(index, plan.size()));
    auto const sealed = body.subspan(static_cast<std::size_t>(index * tensoracle::kPlanChunkBytes),
                                     piece + encryption::kTagBytes);
    auto const plain =
        plan.subspan(static_cast<std::size_t>(index * encryption::kSealedPieceBytes), piece);
    try {
        encryption::open_sealed_chunk(data_key, index, plan.size(), sealed, plain, path);
    } catch (tensoracle::CorruptEngineError const& error) {
        check_message(error);
        return false;
    }
    bool const last = index + 1 == encryption::sealed_piece_count(plan.size());
    auto const resealed = std::span(again).first(sealed.size());
    encryption::seal_piece(data_key, index, last, plain, resealed);
    if (!std::equal(resealed.begin(), resealed.end(), sealed.begin())) {
        std::abort(); // a chunk that opened to a piece that does not seal to it
    }
    return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    static encryption::DecryptKey const key = fixed_key();
    auto const bytes = std::as_bytes(std::span(data, size));
    std::filesystem::path const path = "fuzz.engine";
    tensoracle::DecodedHeader decoded;
    try {
        decoded = tensoracle::decode_engine_header(bytes, size, path);
    } catch (tensoracle::CorruptEngineError const& error) {
        check_message(error);
        return 0;
    }
    if (!decoded.header.encryption) {
        return 0; // a plain engine: fuzz_engine_header's part
    }
    encryption::PlanEncryption const& sealing = *decoded.header.encryption;
    // What the header accepted: a body of exactly the size its plan is sealed in, one tag per
    // piece (counted here without sealed_body_size, whose sum could wrap around).
    std::uint64_t const body_size = decoded.header.plan_size;
    if (decoded.plan_offset + body_size != size || sealing.plan_size > body_size ||
        body_size - sealing.plan_size !=
            encryption::kTagBytes * encryption::sealed_piece_count(sealing.plan_size)) {
        std::abort(); // a header whose plan sizes disagree, accepted
    }
    encryption::Key data_key;
    try {
        data_key = encryption::open_data_key(sealing, key, path);
    } catch (tensoracle::EngineKeyError const& error) {
        check_message(error);
        return 0;
    }
    auto const body = bytes.subspan(static_cast<std::size_t>(decoded.plan_offset));
    std::vector<std::byte> plan(static_cast<std::size_t>(sealing.plan_size));
    bool every_chunk = true;
    for (std::uint64_t index = 0; index < encryption::sealed_piece_count(sealing.plan_size);
         ++index) {
        every_chunk = open_chunk(data_key, index, body, plan, path) && every_chunk;
    }
    // The whole open (open_engine, cache decrypt, cache export) agrees with the chunks.
    try {
        if (encryption::open_plan(data_key, sealing.plan_size, body, path) != plan ||
            !every_chunk) {
            std::abort();
        }
    } catch (tensoracle::CorruptEngineError const& error) {
        check_message(error);
        if (every_chunk) {
            std::abort();
        }
    }
    return 0;
}
