// Text forms of sizes, durations and times used by `tensoracle cache`: exact parsing of
// `--max-size` / `--unused-for` values, human-readable sizes and UTC ISO-8601 time stamps.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tensoracle {

inline constexpr std::int64_t kNanosecondsPerDay = 86'400'000'000'000;

// Parses a nonnegative decimal number ("10", "1.5", ".5", "2.") with an optional unit suffix B,
// KiB, MiB, GiB or TiB (case-insensitive, powers of 1024) into whole bytes. Fractional bytes
// are rounded down, exactly (no floating point). Throws InvalidArgument naming `option` and
// `text` for an empty value, a sign, an exponent, an unknown unit or a value beyond 2^64 - 1.
std::uint64_t parse_size_bytes(std::string_view text, std::string_view option);

// Parses a nonnegative decimal number of 24-hour days into nanoseconds, rounded down exactly.
// Values beyond what int64 nanoseconds hold (about 106,751 days) saturate at INT64_MAX; "nan",
// "inf", signs and exponents are rejected with InvalidArgument naming `option` and `text`.
std::int64_t parse_days_nanoseconds(std::string_view text, std::string_view option);

// "0 B", "512 B", "1.5 KiB", "10.0 GiB": one decimal digit above bytes, rounded down.
std::string format_size_human(std::uint64_t bytes);

// "2026-11-29T08:23:26Z": UTC, whole seconds (rounded toward the past), for any int64 time.
std::string format_utc_time(std::int64_t nanoseconds_since_epoch);

// The time format_utc_time writes ("2026-11-29T08:23:26Z", exactly that form: UTC, whole
// seconds, a valid date), in nanoseconds since the Unix epoch. Throws InvalidArgument naming
// `field` and `text` for anything else.
std::int64_t parse_utc_time(std::string_view text, std::string_view field);

// The current wall-clock time in nanoseconds since the Unix epoch.
std::int64_t now_nanoseconds();

} // namespace tensoracle
