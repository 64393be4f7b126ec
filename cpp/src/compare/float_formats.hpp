// Decoders for the narrow floating point formats NumPy cannot hold natively (fp16 aside):
// IEEE binary16, bfloat16 and the two OCP fp8 formats, each widened exactly to double.
#pragma once

#include <cstdint>

namespace tensoracle {

// IEEE 754 binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits; infinities and NaNs.
double decode_float16(std::uint16_t bits) noexcept;

// bfloat16: the upper half of an IEEE binary32 value.
double decode_bfloat16(std::uint16_t bits) noexcept;

// OCP fp8 E4M3 "fn": 1 sign, 4 exponent (bias 7), 3 fraction bits; no infinities, and only
// S.1111.111 is NaN, so the largest finite magnitude is 448.
double decode_float8_e4m3fn(std::uint8_t bits) noexcept;

// OCP fp8 E5M2: 1 sign, 5 exponent (bias 15), 2 fraction bits, with IEEE infinities and NaNs.
double decode_float8_e5m2(std::uint8_t bits) noexcept;

} // namespace tensoracle
