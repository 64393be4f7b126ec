// Tests of the fp16, bf16 and fp8 decoders: known codes, special values and, over every code,
// sign symmetry and strictly increasing magnitudes.
#include "compare/float_formats.hpp"

#include <cmath>
#include <cstdint>
#include <functional>
#include <gtest/gtest.h>
#include <limits>

namespace {

using tensoracle::decode_bfloat16;
using tensoracle::decode_float16;
using tensoracle::decode_float8_e4m3fn;
using tensoracle::decode_float8_e5m2;

constexpr double infinity = std::numeric_limits<double>::infinity();

TEST(Float16, DecodesKnownCodes) {
    EXPECT_EQ(decode_float16(0x3C00), 1.0);
    EXPECT_EQ(decode_float16(0xC000), -2.0);
    EXPECT_EQ(decode_float16(0x3555), 0x1.554p-2);
    EXPECT_EQ(decode_float16(0x7BFF), 65504.0);
    EXPECT_EQ(decode_float16(0x0400), std::ldexp(1.0, -14)); // smallest normal
    EXPECT_EQ(decode_float16(0x0001), std::ldexp(1.0, -24)); // smallest subnormal
    EXPECT_EQ(decode_float16(0x03FF), std::ldexp(1023.0, -24));
    EXPECT_EQ(decode_float16(0x7C00), infinity);
    EXPECT_EQ(decode_float16(0xFC00), -infinity);
    EXPECT_TRUE(std::isnan(decode_float16(0x7E00)));
    EXPECT_TRUE(std::isnan(decode_float16(0xFC01)));
    EXPECT_TRUE(std::signbit(decode_float16(0x8000)));
    EXPECT_EQ(decode_float16(0x8000), 0.0);
}

TEST(BFloat16, DecodesKnownCodes) {
    EXPECT_EQ(decode_bfloat16(0x3F80), 1.0);
    EXPECT_EQ(decode_bfloat16(0xC0A0), -5.0);
    EXPECT_EQ(decode_bfloat16(0x7F7F), 0x1.FEp127);
    EXPECT_EQ(decode_bfloat16(0x0001), std::ldexp(1.0, -133));
    EXPECT_EQ(decode_bfloat16(0x7F80), infinity);
    EXPECT_TRUE(std::isnan(decode_bfloat16(0x7FC0)));
}

TEST(Float8E4M3FN, DecodesKnownCodes) {
    EXPECT_EQ(decode_float8_e4m3fn(0x38), 1.0);
    EXPECT_EQ(decode_float8_e4m3fn(0xC0), -2.0);
    EXPECT_EQ(decode_float8_e4m3fn(0x7E), 448.0); // largest finite
    EXPECT_EQ(decode_float8_e4m3fn(0x78), 256.0); // the all-ones exponent is not infinity here
    EXPECT_EQ(decode_float8_e4m3fn(0x08), std::ldexp(1.0, -6));
    EXPECT_EQ(decode_float8_e4m3fn(0x01), std::ldexp(1.0, -9));
    EXPECT_TRUE(std::isnan(decode_float8_e4m3fn(0x7F)));
    EXPECT_TRUE(std::isnan(decode_float8_e4m3fn(0xFF)));
}

TEST(Float8E5M2, DecodesKnownCodes) {
    EXPECT_EQ(decode_float8_e5m2(0x3C), 1.0);
    EXPECT_EQ(decode_float8_e5m2(0x7B), 57344.0);
    EXPECT_EQ(decode_float8_e5m2(0x04), std::ldexp(1.0, -14));
    EXPECT_EQ(decode_float8_e5m2(0x01), std::ldexp(1.0, -16));
    EXPECT_EQ(decode_float8_e5m2(0x7C), infinity);
    EXPECT_EQ(decode_float8_e5m2(0xFC), -infinity);
    EXPECT_TRUE(std::isnan(decode_float8_e5m2(0x7D)));
}

// Over all non-negative codes below the first NaN: strictly increasing values (the ordering of
// sign-magnitude codes), and the negative code decodes to the negated value.
void expect_ordered(std::function<double(unsigned)> const& decode, unsigned first_nan,
                    unsigned sign_bit) {
    double previous = -1.0;
    for (unsigned code = 0; code < first_nan; ++code) {
        double const value = decode(code);
        ASSERT_GT(value, previous) << "code " << code;
        ASSERT_EQ(decode(code | sign_bit), -value) << "code " << code;
        previous = value;
    }
    for (unsigned code = first_nan; code < sign_bit; ++code) {
        ASSERT_TRUE(std::isnan(decode(code))) << "code " << code;
        ASSERT_TRUE(std::isnan(decode(code | sign_bit))) << "code " << code;
    }
}

TEST(FloatFormats, EveryCodeIsOrderedAndSymmetric) {
    expect_ordered([](unsigned b) { return decode_float16(static_cast<std::uint16_t>(b)); }, 0x7C01,
                   0x8000);
    expect_ordered([](unsigned b) { return decode_bfloat16(static_cast<std::uint16_t>(b)); },
                   0x7F81, 0x8000);
    expect_ordered([](unsigned b) { return decode_float8_e4m3fn(static_cast<std::uint8_t>(b)); },
                   0x7F, 0x80);
    expect_ordered([](unsigned b) { return decode_float8_e5m2(static_cast<std::uint8_t>(b)); },
                   0x7D, 0x80);
}

} // namespace
