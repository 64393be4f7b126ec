// libFuzzer target: parse_size_bytes and parse_days_nanoseconds (the first byte chooses) must
// either accept the text or throw InvalidArgument, and what they accept must equal a plain
// 128-bit reference computation of floor(number * unit) wherever that reference is exact (up to
// 20 fraction digits).
#include "tensoracle/errors.hpp"
#include "text/size_text.hpp"

#include <array>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace {

using u128 = unsigned __int128;

struct Reference {
    bool valid = false;   // the text has the accepted shape
    bool exact = false;   // the value below is the exact floor
    bool too_big = false; // the value exceeds 2^64 - 1 (only when exact)
    u128 value = 0;
};

std::string lowered(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

// floor(whole.fraction * unit) for text "<digits>[.<digits>]<suffix>", suffix looked up in units.
Reference reference(std::string_view text, bool sizes) {
    Reference ref;
    std::size_t pos = 0;
    u128 whole = 0;
    bool big = false;
    std::size_t digits = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
        whole = whole * 10 + static_cast<unsigned>(text[pos] - '0');
        big = big || whole > std::numeric_limits<std::uint64_t>::max();
        if (big) {
            whole = u128{1} << 65U; // stays above the limit without overflowing
        }
        ++pos;
        ++digits;
    }
    u128 fraction = 0;
    u128 scale = 1;
    std::size_t fraction_digits = 0;
    if (pos < text.size() && text[pos] == '.') {
        ++pos;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
            if (fraction_digits < 20) {
                fraction = fraction * 10 + static_cast<unsigned>(text[pos] - '0');
                scale *= 10;
            }
            ++fraction_digits;
            ++pos;
            ++digits;
        }
    }
    if (digits == 0) {
        return ref;
    }
    std::string const suffix = lowered(text.substr(pos));
    u128 unit = 0;
    if (!sizes) {
        unit = suffix.empty() ? u128{86'400'000'000'000ULL} : 0;
    } else if (suffix.empty() || suffix == "b") {
        unit = 1;
    } else if (suffix == "kib") {
        unit = u128{1} << 10U;
    } else if (suffix == "mib") {
        unit = u128{1} << 20U;
    } else if (suffix == "gib") {
        unit = u128{1} << 30U;
    } else if (suffix == "tib") {
        unit = u128{1} << 40U;
    } else if (suffix == "kb") {
        unit = 1'000U;
    } else if (suffix == "mb") {
        unit = 1'000'000U;
    } else if (suffix == "gb") {
        unit = 1'000'000'000U;
    } else if (suffix == "tb") {
        unit = 1'000'000'000'000ULL;
    }
    if (unit == 0) {
        return ref;
    }
    ref.valid = true;
    ref.exact = fraction_digits <= 20;
    ref.value = whole * unit + fraction * unit / scale;
    ref.too_big = big || ref.value > std::numeric_limits<std::uint64_t>::max();
    return ref;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    bool const sizes = (data[0] & 1U) == 0;
    std::string_view const text(reinterpret_cast<char const*>(data) + 1, size - 1);
    Reference const ref = reference(text, sizes);
    std::optional<std::uint64_t> parsed;
    try {
        parsed = sizes ? tensoracle::parse_size_bytes(text, "--max-size")
                       : static_cast<std::uint64_t>(
                             tensoracle::parse_days_nanoseconds(text, "--unused-for"));
    } catch (tensoracle::InvalidArgument const&) {
        // Rejected: fine when the reference rejects it too (or, for sizes, finds it too big).
    }
    if (!ref.valid) {
        if (parsed) {
            std::abort(); // accepted a text of the wrong shape
        }
        return 0;
    }
    if (sizes && ref.exact && ref.too_big) {
        if (parsed) {
            std::abort(); // accepted a size beyond 2^64 - 1
        }
        return 0;
    }
    if (!parsed) {
        if (sizes && !ref.exact) {
            return 0; // too many digits for the reference to decide overflow
        }
        std::abort(); // rejected a well-formed value
    }
    if (!ref.exact) {
        return 0;
    }
    auto const limit = static_cast<u128>(std::numeric_limits<std::int64_t>::max());
    u128 const expected =
        sizes ? ref.value : (ref.too_big || ref.value > limit ? limit : ref.value);
    if (*parsed != expected) {
        std::abort(); // a value other than floor(number * unit)
    }
    return 0;
}
