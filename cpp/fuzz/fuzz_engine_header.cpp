// libFuzzer target: decode_engine_header must either accept the bytes or throw
// CorruptEngineError; what it accepts must re-encode to exactly the same prefix.
#include "cache/engine_file.hpp"
#include "tensoracle/errors.hpp"
#include "text/utf8_text.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    auto const bytes = std::as_bytes(std::span(data, size));
    std::filesystem::path const path = "fuzz.engine";
    try {
        auto const decoded = tensoracle::decode_engine_header(bytes, size, path);
        auto const prefix = tensoracle::encode_engine_prefix(decoded.header);
        if (prefix.size() != decoded.plan_offset ||
            !std::equal(prefix.begin(), prefix.end(), bytes.begin())) {
            std::abort(); // an accepted header that is not the canonical spelling of itself
        }
        // The reader of `cache list` passes only the prefix with the real file size.
        auto const again = tensoracle::decode_engine_header(
            bytes.first(static_cast<std::size_t>(decoded.plan_offset)), size, path);
        if (again.plan_offset != decoded.plan_offset) {
            std::abort();
        }
    } catch (tensoracle::CorruptEngineError const& error) {
        // The expected outcome for damaged input; every other exception is a finding, and so is
        // a message that Python could not turn into a str.
        if (!tensoracle::is_valid_utf8(error.what())) {
            std::abort();
        }
    }
    return 0;
}
