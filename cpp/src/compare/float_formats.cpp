// Bit-level decoders of fp16, bf16 and fp8 values; every value of these formats is exact in double.
#include "compare/float_formats.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace tensoracle {
namespace {

// Decodes a sign/exponent/fraction triple of a binary format with subnormals. `has_infinity`
// selects IEEE behaviour for the all-ones exponent; without it, only `nan_fraction` there is NaN
// and the other all-ones-exponent codes are ordinary normal numbers (the E4M3 "fn" convention).
double decode_binary(unsigned bits, int exponent_bits, int fraction_bits, bool has_infinity,
                     unsigned nan_fraction) noexcept {
    unsigned const fraction_mask = (1U << fraction_bits) - 1U;
    unsigned const exponent_mask = (1U << exponent_bits) - 1U;
    bool const negative = ((bits >> (exponent_bits + fraction_bits)) & 1U) != 0;
    unsigned const fraction = bits & fraction_mask;
    unsigned const exponent = (bits >> fraction_bits) & exponent_mask;
    int const bias = (1 << (exponent_bits - 1)) - 1;

    double magnitude = 0.0;
    if (exponent == exponent_mask && has_infinity) {
        magnitude = fraction == 0 ? std::numeric_limits<double>::infinity()
                                  : std::numeric_limits<double>::quiet_NaN();
    } else if (exponent == exponent_mask && fraction == nan_fraction) {
        magnitude = std::numeric_limits<double>::quiet_NaN();
    } else if (exponent == 0) {
        // Subnormal: no implicit leading one, and the exponent of the smallest normal number.
        magnitude = std::ldexp(static_cast<double>(fraction), 1 - bias - fraction_bits);
    } else {
        unsigned const significand = (1U << fraction_bits) | fraction;
        magnitude = std::ldexp(static_cast<double>(significand),
                               static_cast<int>(exponent) - bias - fraction_bits);
    }
    return negative ? -magnitude : magnitude;
}

} // namespace

double decode_float16(std::uint16_t bits) noexcept {
    return decode_binary(bits, 5, 10, true, 0);
}

double decode_bfloat16(std::uint16_t bits) noexcept {
    std::uint32_t const wide = static_cast<std::uint32_t>(bits) << 16U;
    return static_cast<double>(std::bit_cast<float>(wide));
}

double decode_float8_e4m3fn(std::uint8_t bits) noexcept {
    return decode_binary(bits, 4, 3, false, 0x7U);
}

double decode_float8_e5m2(std::uint8_t bits) noexcept {
    return decode_binary(bits, 5, 2, true, 0);
}

} // namespace tensoracle
