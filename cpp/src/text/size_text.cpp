// Exact parsing of the size and day values of `tensoracle cache prune`, and the text forms of
// sizes and times that `tensoracle cache` prints.
#include "text/size_text.hpp"

#include "tensoracle/errors.hpp"

#include <array>
#include <chrono>
#include <cstdio>
#include <limits>
#include <span>

namespace tensoracle {
namespace {

struct DecimalText {
    std::string_view whole;    // digits before the point (may be empty)
    std::string_view fraction; // digits after the point (may be empty)
    std::string_view suffix;   // everything after the number
};

bool is_digit(char c) noexcept {
    return c >= '0' && c <= '9';
}

// Splits "12.5GiB" into "12", "5", "GiB". Returns false when there is no digit at all.
bool split_decimal(std::string_view text, DecimalText& out) {
    std::size_t position = 0;
    while (position < text.size() && is_digit(text[position])) {
        ++position;
    }
    out.whole = text.substr(0, position);
    out.fraction = {};
    if (position < text.size() && text[position] == '.') {
        std::size_t const start = ++position;
        while (position < text.size() && is_digit(text[position])) {
            ++position;
        }
        out.fraction = text.substr(start, position - start);
    }
    out.suffix = text.substr(position);
    return !out.whole.empty() || !out.fraction.empty();
}

// floor(whole.fraction * multiplier), or false when it does not fit in uint64.
bool scale_decimal(DecimalText const& number, std::uint64_t multiplier, std::uint64_t& result) {
    std::uint64_t whole = 0;
    for (char const c : number.whole) {
        auto const digit = static_cast<std::uint64_t>(c - '0');
        if (__builtin_mul_overflow(whole, std::uint64_t{10}, &whole) ||
            __builtin_add_overflow(whole, digit, &whole)) {
            return false;
        }
    }
    // Long multiplication of the decimal fraction by the multiplier, least significant digit
    // first; what carries out past the point is exactly the rounded-down fractional part.
    std::uint64_t carry = 0;
    for (std::size_t index = number.fraction.size(); index-- > 0;) {
        auto const digit = static_cast<std::uint64_t>(number.fraction[index] - '0');
        carry = (digit * multiplier + carry) / 10;
    }
    std::uint64_t scaled = 0;
    if (__builtin_mul_overflow(whole, multiplier, &scaled) ||
        __builtin_add_overflow(scaled, carry, &scaled)) {
        return false;
    }
    result = scaled;
    return true;
}

char lower(char c) noexcept {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (lower(a[i]) != lower(b[i])) {
            return false;
        }
    }
    return true;
}

[[noreturn]] void reject(std::string_view option, std::string_view text, std::string_view why) {
    throw InvalidArgument("invalid value '" + std::string(text) + "' for " + std::string(option) +
                          ": " + std::string(why));
}

struct SizeUnit {
    std::string_view name;
    std::uint64_t bytes;
};

// The units sizes are written in (powers of 1024), which parsing also accepts ...
constexpr std::array<SizeUnit, 5> kSizeUnits{
    {{"B", 1}, {"KiB", 1ULL << 10}, {"MiB", 1ULL << 20}, {"GiB", 1ULL << 30}, {"TiB", 1ULL << 40}}};
// ... with the decimal ones (powers of 1000) that disk sizes and `df -H` are written in.
constexpr std::array<SizeUnit, 4> kDecimalSizeUnits{{{"KB", 1'000ULL},
                                                     {"MB", 1'000'000ULL},
                                                     {"GB", 1'000'000'000ULL},
                                                     {"TB", 1'000'000'000'000ULL}}};

} // namespace

std::uint64_t parse_size_bytes(std::string_view text, std::string_view option) {
    char const* const expected =
        "expected a nonnegative number of bytes, optionally followed by B, KiB, MiB, GiB or TiB "
        "(powers of 1024) or KB, MB, GB or TB (powers of 1000), for example 500MiB, 1.5GiB or "
        "10GB";
    DecimalText number;
    if (text.empty() || !split_decimal(text, number)) {
        reject(option, text, expected);
    }
    std::uint64_t multiplier = 0;
    if (number.suffix.empty()) {
        multiplier = 1;
    } else {
        for (auto const& units : {std::span<SizeUnit const>(kSizeUnits),
                                  std::span<SizeUnit const>(kDecimalSizeUnits)}) {
            for (SizeUnit const& unit : units) {
                if (equals_ignoring_case(number.suffix, unit.name)) {
                    multiplier = unit.bytes;
                }
            }
        }
    }
    if (multiplier == 0) {
        reject(option, text,
               "unknown unit '" + std::string(number.suffix) + "'; " + std::string(expected));
    }
    std::uint64_t bytes = 0;
    if (!scale_decimal(number, multiplier, bytes)) {
        reject(option, text, "the size exceeds 2^64 - 1 bytes");
    }
    return bytes;
}

std::int64_t parse_days_nanoseconds(std::string_view text, std::string_view option) {
    DecimalText number;
    if (text.empty() || !split_decimal(text, number) || !number.suffix.empty()) {
        reject(option, text,
               "expected a finite nonnegative number of days (for example 30 or 0.5)");
    }
    std::uint64_t nanoseconds = 0;
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (!scale_decimal(number, static_cast<std::uint64_t>(kNanosecondsPerDay), nanoseconds) ||
        nanoseconds > kMax) {
        return std::numeric_limits<std::int64_t>::max();
    }
    return static_cast<std::int64_t>(nanoseconds);
}

std::string format_size_human(std::uint64_t bytes) {
    SizeUnit const* chosen = &kSizeUnits[0];
    for (SizeUnit const& unit : kSizeUnits) {
        if (bytes >= unit.bytes) {
            chosen = &unit;
        }
    }
    if (chosen->bytes == 1) {
        return std::to_string(bytes) + " B";
    }
    std::uint64_t const whole = bytes / chosen->bytes;
    std::uint64_t const tenths = (bytes % chosen->bytes) * 10 / chosen->bytes;
    return std::to_string(whole) + "." + std::to_string(tenths) + " " + std::string(chosen->name);
}

std::string format_utc_time(std::int64_t nanoseconds_since_epoch) {
    using namespace std::chrono;
    auto const time = sys_time<nanoseconds>{nanoseconds{nanoseconds_since_epoch}};
    auto const day = floor<days>(time);
    year_month_day const date{day};
    hh_mm_ss const clock{floor<seconds>(time - day)};
    std::array<char, 40> buffer{};
    std::snprintf(buffer.data(), buffer.size(), "%04d-%02u-%02uT%02ld:%02ld:%02ldZ",
                  static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                  static_cast<unsigned>(date.day()), static_cast<long>(clock.hours().count()),
                  static_cast<long>(clock.minutes().count()),
                  static_cast<long>(clock.seconds().count()));
    return {buffer.data()};
}

std::int64_t parse_utc_time(std::string_view text, std::string_view field) {
    using namespace std::chrono;
    // "YYYY-MM-DDTHH:MM:SSZ": the digits' places, then the separators between them.
    constexpr std::string_view kForm = "0000-00-00T00:00:00Z";
    bool formed = text.size() == kForm.size();
    for (std::size_t i = 0; formed && i < kForm.size(); ++i) {
        formed = kForm[i] == '0' ? is_digit(text[i]) : text[i] == kForm[i];
    }
    auto number = [text](std::size_t at, std::size_t digits) {
        int value = 0;
        for (std::size_t i = at; i < at + digits; ++i) {
            value = value * 10 + (text[i] - '0');
        }
        return value;
    };
    if (formed) {
        year_month_day const date{year{number(0, 4)}, month{static_cast<unsigned>(number(5, 2))},
                                  day{static_cast<unsigned>(number(8, 2))}};
        int const hour = number(11, 2);
        int const minute = number(14, 2);
        int const second = number(17, 2);
        if (date.ok() && hour < 24 && minute < 60 && second < 60) {
            seconds const since_epoch =
                (sys_days{date} + hours{hour} + minutes{minute} + seconds{second})
                    .time_since_epoch();
            // Beyond int64 nanoseconds (before 1677 or after 2262): the nearest it holds.
            auto const limit = duration_cast<seconds>(nanoseconds::max());
            if (since_epoch >= limit || since_epoch <= -limit) {
                return since_epoch > seconds{0} ? std::numeric_limits<std::int64_t>::max()
                                                : std::numeric_limits<std::int64_t>::min();
            }
            return duration_cast<nanoseconds>(since_epoch).count();
        }
    }
    throw InvalidArgument(std::string(field) + R"( is ")" + std::string(text) +
                          R"(", expected a UTC time such as "2027-03-01T00:00:00Z")");
}

std::int64_t now_nanoseconds() {
    using namespace std::chrono;
    return duration_cast<nanoseconds>(system_clock::now().time_since_epoch()).count();
}

} // namespace tensoracle
