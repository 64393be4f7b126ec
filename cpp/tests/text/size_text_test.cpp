// Exact parsing of --max-size / --unused-for values and the text forms of sizes and times.
#include "tensoracle/errors.hpp"
#include "text/size_text.hpp"

#include <cstdint>
#include <gtest/gtest.h>
#include <limits>
#include <string>

namespace tensoracle {
namespace {

std::uint64_t size(std::string const& text) {
    return parse_size_bytes(text, "--max-size");
}
std::int64_t days(std::string const& text) {
    return parse_days_nanoseconds(text, "--unused-for");
}

TEST(ParseSizeBytes, PlainNumbersAreBytes) {
    EXPECT_EQ(size("0"), 0U);
    EXPECT_EQ(size("123"), 123U);
    EXPECT_EQ(size("007"), 7U);
    EXPECT_EQ(size("18446744073709551615"), std::numeric_limits<std::uint64_t>::max());
}

TEST(ParseSizeBytes, UnitsArePowersOf1024InAnyCase) {
    EXPECT_EQ(size("5B"), 5U);
    EXPECT_EQ(size("5b"), 5U);
    EXPECT_EQ(size("1KiB"), 1024U);
    EXPECT_EQ(size("1kib"), 1024U);
    EXPECT_EQ(size("1KIB"), 1024U);
    EXPECT_EQ(size("3MiB"), 3U << 20);
    EXPECT_EQ(size("10GiB"), 10ULL << 30);
    EXPECT_EQ(size("10gIb"), 10ULL << 30);
    EXPECT_EQ(size("2TiB"), 2ULL << 40);
}

TEST(ParseSizeBytes, FractionsRoundDownToWholeBytes) {
    EXPECT_EQ(size("1.5GiB"), 1610612736U);
    EXPECT_EQ(size("1.5KiB"), 1536U);
    EXPECT_EQ(size(".5KiB"), 512U);
    EXPECT_EQ(size("2."), 2U);
    EXPECT_EQ(size("0.5"), 0U);
    EXPECT_EQ(size("1.999"), 1U);
    EXPECT_EQ(size("0.999B"), 0U);
    EXPECT_EQ(size("0.001KiB"), 1U);        // 1.024 bytes
    EXPECT_EQ(size("0.0009765625KiB"), 1U); // exactly one byte
    EXPECT_EQ(size("0.0009765624KiB"), 0U); // just below one byte
    // 2^-40 TiB is exactly one byte and needs 40 decimal places: no floating point rounding.
    EXPECT_EQ(size("0.0000000000009094947017729282379150390625TiB"), 1U);
    EXPECT_EQ(size("0.0000000000009094947017729282379150390624TiB"), 0U);
    EXPECT_EQ(size("16777215.99999999999999TiB"), std::numeric_limits<std::uint64_t>::max());
}

TEST(ParseSizeBytes, RejectsWhatIsNotANonnegativeSize) {
    for (std::string const text :
         {"",           "-1",    "+1",    "-0",    "nan",  "NaN",   "inf",
          "infinity",   "1.5XB", "1KiBB", "1e3",   " 1",   "1 ",    "1 GiB",
          "GiB",        ".",     "1..5",  "1.2.3", "0x10", "1GiBs", "18446744073709551616",
          "16777216TiB"}) {
        SCOPED_TRACE(text);
        try {
            size(text);
            ADD_FAILURE() << "accepted";
        } catch (InvalidArgument const& error) {
            std::string const message = error.what();
            EXPECT_NE(message.find("--max-size"), std::string::npos) << message;
            EXPECT_NE(message.find("'" + std::string(text) + "'"), std::string::npos) << message;
        }
    }
}

TEST(ParseSizeBytes, DecimalUnitsArePowersOf1000InAnyCase) {
    EXPECT_EQ(size("10GB"), 10'000'000'000ULL);
    EXPECT_EQ(size("1.5kb"), 1'500ULL);
    EXPECT_EQ(size("2MB"), 2'000'000ULL);
    EXPECT_EQ(size("0.5TB"), 500'000'000'000ULL);
    EXPECT_EQ(size("10GB"), size("10000000000"));
    EXPECT_LT(size("10GB"), size("10GiB"));
}

TEST(ParseSizeBytes, NamesTheUnknownUnit) {
    try {
        size("1.5XB");
        FAIL() << "accepted";
    } catch (InvalidArgument const& error) {
        EXPECT_NE(std::string(error.what()).find("unknown unit 'XB'"), std::string::npos)
            << error.what();
    }
}

TEST(ParseDaysNanoseconds, DaysAre24Hours) {
    EXPECT_EQ(days("0"), 0);
    EXPECT_EQ(days("1"), kNanosecondsPerDay);
    EXPECT_EQ(days("30"), 30 * kNanosecondsPerDay);
    EXPECT_EQ(days("0.5"), 12LL * 3600 * 1'000'000'000);
    EXPECT_EQ(days(".25"), 6LL * 3600 * 1'000'000'000);
    EXPECT_EQ(days("1.5"), 36LL * 3600 * 1'000'000'000);
}

TEST(ParseDaysNanoseconds, FractionsRoundDownExactly) {
    // One nanosecond is 1/86400e9 day = 0.0000000000000115740740...
    EXPECT_EQ(days("0.0000000000000115740740740740741"), 1);
    EXPECT_EQ(days("0.0000000000000115740740740740740"), 0);
    EXPECT_EQ(days("0.00001"), 864'000'000); // 0.864 s
}

TEST(ParseDaysNanoseconds, HugeValuesSaturate) {
    EXPECT_EQ(days("106751"), 106751 * kNanosecondsPerDay);
    EXPECT_EQ(days("1000000"), std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(days("99999999999999999999999999"), std::numeric_limits<std::int64_t>::max());
}

TEST(ParseDaysNanoseconds, RejectsWhatIsNotAFiniteNonnegativeNumber) {
    for (std::string const text :
         {"", "-1", "+1", "nan", "inf", "-inf", "infinity", "1e3", "1d", " 1", "1 ", ".", "1,5"}) {
        SCOPED_TRACE(text);
        try {
            days(text);
            ADD_FAILURE() << "accepted";
        } catch (InvalidArgument const& error) {
            std::string const message = error.what();
            EXPECT_NE(message.find("--unused-for"), std::string::npos) << message;
            EXPECT_NE(message.find("'" + std::string(text) + "'"), std::string::npos) << message;
        }
    }
}

TEST(FormatSizeHuman, OneDecimalRoundedDown) {
    EXPECT_EQ(format_size_human(0), "0 B");
    EXPECT_EQ(format_size_human(1023), "1023 B");
    EXPECT_EQ(format_size_human(1024), "1.0 KiB");
    EXPECT_EQ(format_size_human(1536), "1.5 KiB");
    EXPECT_EQ(format_size_human((1U << 20) - 1), "1023.9 KiB");
    EXPECT_EQ(format_size_human(10ULL << 30), "10.0 GiB");
    EXPECT_EQ(format_size_human(3ULL << 40), "3.0 TiB");
}

TEST(FormatUtcTime, WholeSecondsTowardThePast) {
    EXPECT_EQ(format_utc_time(0), "1970-01-01T00:00:00Z");
    EXPECT_EQ(format_utc_time(-1), "1969-12-31T23:59:59Z");
    EXPECT_EQ(format_utc_time(1'700'000'000'000'000'000), "2023-11-14T22:13:20Z");
    EXPECT_EQ(format_utc_time(1'700'000'000'999'999'999), "2023-11-14T22:13:20Z");
    EXPECT_EQ(format_utc_time(951'782'400'000'000'000), "2000-02-29T00:00:00Z");
}

// The message of the InvalidArgument `call` throws (empty when it throws none).
template <typename Call>
std::string refusal_of(Call const& call) {
    try {
        call();
    } catch (InvalidArgument const& error) {
        return error.what();
    }
    return {};
}

TEST(UtcTime, ParsesExactlyTheFormItWrites) {
    EXPECT_EQ(parse_utc_time("1970-01-01T00:00:01Z", "t"), 1'000'000'000);
    EXPECT_EQ(format_utc_time(parse_utc_time("2027-03-01T12:34:56Z", "t")), "2027-03-01T12:34:56Z");
    for (char const* bad : {"2027-02-30T00:00:00Z", "2027-03-01 00:00:00Z", "2027-03-01T24:00:00Z",
                            "2027-03-01T00:00:00", "2027-3-01T00:00:00Z"}) {
        EXPECT_NE(refusal_of([&] {
                      (void)parse_utc_time(bad, "expires");
                  }).find(std::string("expires is \"") + bad + "\""),
                  std::string::npos)
            << bad;
    }
}

} // namespace
} // namespace tensoracle
