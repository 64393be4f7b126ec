// libFuzzer target: parse_weight_record must either accept the text or throw InvalidArgument;
// what it accepts must encode to a record that parses back to the same fields.
#include "cache/weight_digest.hpp"
#include "tensoracle/errors.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    std::string_view const text(reinterpret_cast<char const*>(data), size);
    try {
        auto const record = tensoracle::parse_weight_record(text);
        auto const again =
            tensoracle::parse_weight_record(tensoracle::encode_weight_record(record));
        if (again.path != record.path || again.size != record.size ||
            again.mtime_ns != record.mtime_ns || again.inode != record.inode ||
            again.sha256 != record.sha256) {
            std::abort();
        }
    } catch (tensoracle::InvalidArgument const&) {
        // The expected outcome for damaged records; every other exception is a finding.
    }
    return 0;
}
