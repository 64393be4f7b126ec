// Private to the core: the first pass of compare_floating over one chunk of contiguous elements,
// as per-lane values (lane k holds the elements whose index within the chunk is k mod 4), with
// kernels compiled for the CPU's vector instructions and chosen at run time. Only plain data
// crosses this interface: a kernel's file is compiled with other instruction sets than the rest
// of the core, so it must share no inline function with it (the linker would keep one copy).
#pragma once

#include "tensoracle/compare/array_view.hpp"

#include <cstddef>

namespace tensoracle::detail {

inline constexpr std::size_t first_pass_lanes = 4;

// The first pass's running values, lane by lane: C arrays, not std::array, whose inline member
// functions a kernel's file would compile with its own instruction sets.
// NOLINTBEGIN(modernize-avoid-c-arrays)
struct FirstPassLanes {
    double dd[first_pass_lanes];     // sum of (c - r)^2
    double rr[first_pass_lanes];     // sum of r^2
    double cc[first_pass_lanes];     // sum of c^2
    double cr[first_pass_lanes];     // sum of c * r
    double ad[first_pass_lanes];     // sum of |c - r|
    double max_ad[first_pass_lanes]; // maxima (a NaN never replaces one)
    double max_c[first_pass_lanes];
    double max_r[first_pass_lanes];
    double outside[first_pass_lanes]; // elements outside atol + rtol * |r|
};
// NOLINTEND(modernize-avoid-c-arrays)

// Adds `n` elements of `candidate` and `reference` (contiguous, of the given types) into `lanes`
// (zeroed by the caller), counting those outside the tolerance when `with_tolerance`, and writes
// each |c - r| to `abs_errors` unless it is null. The AVX2 kernel's results equal the portable
// pass's bit for bit (the same operations in the same order, without fused multiply-adds). The
// AVX-512 kernel adds in eight lanes, folded into four at the end: its counts and maxima are the
// same, its sums may differ from the others' in their last bits.
using FirstPassKernel = void (*)(void const* candidate, void const* reference, std::size_t n,
                                 bool with_tolerance, double atol, double rtol, double* abs_errors,
                                 FirstPassLanes* lanes);

// A kernel and the instruction set it was compiled for ("avx512", "avx2").
struct FirstPass {
    FirstPassKernel kernel = nullptr;
    char const* name = "portable";
};

// The kernel for this pair of element types on this CPU: AVX-512 where the CPU has AVX-512F,
// AVX2 and F16C, else AVX2 where it has AVX2 and F16C, else none (the portable pass runs, also
// for other element types). TENSORACLE_COMPARE_KERNEL=avx2 or =portable in the environment
// chooses no more than that.
FirstPass first_pass_kernel(ElementType candidate, ElementType reference) noexcept;

} // namespace tensoracle::detail
