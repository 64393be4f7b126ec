// compare_floating's first pass with AVX-512F: eight doubles per step in eight lanes, folded into
// the four lanes of the other passes at the end of each chunk, float16 read
// with vcvtph2ps (F16C), bfloat16 by a shift (AVX2). Compiled with -mavx512f -mavx2 -mf16c and
// -ffp-contract=off (AVX-512F has fused multiply-adds, whose rounding differs from the portable
// pass's) and called only where the CPU has all three. As in first_pass_avx2.cpp, everything here
// has internal linkage and calls nothing of the C++ library.
#include "compare/first_pass.hpp"

// GCC 12 warns that _mm512_undefined_pd(), which its own AVX-512 intrinsics pass as the unused
// source of unmasked operations, may be used uninitialized: a false positive in its header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

namespace tensoracle::detail {
namespace {

constexpr std::size_t kWidth = 8; // doubles per step

template <ElementType Type>
__m512d load8(void const* base, std::size_t i) noexcept {
    if constexpr (Type == ElementType::float64) {
        return _mm512_loadu_pd(static_cast<double const*>(base) + i);
    } else if constexpr (Type == ElementType::float32) {
        return _mm512_cvtps_pd(_mm256_loadu_ps(static_cast<float const*>(base) + i));
    } else if constexpr (Type == ElementType::float16) {
        __m128i const bits =
            _mm_loadu_si128(reinterpret_cast<__m128i const*>(static_cast<short const*>(base) + i));
        return _mm512_cvtps_pd(_mm256_cvtph_ps(bits));
    } else { // bfloat16: the upper half of a float32
        __m128i const bits =
            _mm_loadu_si128(reinterpret_cast<__m128i const*>(static_cast<short const*>(base) + i));
        return _mm512_cvtps_pd(
            _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16)));
    }
}

template <ElementType Type>
double load1(void const* base, std::size_t i) noexcept {
    if constexpr (Type == ElementType::float64) {
        return static_cast<double const*>(base)[i];
    } else if constexpr (Type == ElementType::float32) {
        return static_cast<double>(static_cast<float const*>(base)[i]);
    } else {
        // C arrays: no std::array in this file (see first_pass.hpp).
        short const lanes[8] = {static_cast<short const*>(base)[i], 0, 0, 0, 0, 0, 0, 0}; // NOLINT
        double out[8];                                                                    // NOLINT
        _mm512_storeu_pd(out, load8<Type>(lanes, 0));
        return out[0];
    }
}

// Lanes k and k + 4 of `values` into `out[k]`: summed, or the larger of the two.
void fold(__m512d values, double* out, bool maximum) noexcept {
    __m256d const low = _mm512_castpd512_pd256(values);
    __m256d const high = _mm512_extractf64x4_pd(values, 1);
    _mm256_storeu_pd(out, maximum ? _mm256_max_pd(high, low) : _mm256_add_pd(low, high));
}

template <ElementType C, ElementType R, bool WithTolerance>
void first_pass(void const* candidate, void const* reference, std::size_t n, double atol,
                double rtol, double* abs_errors, FirstPassLanes* lanes) noexcept {
    __m512d const vatol = _mm512_set1_pd(atol);
    __m512d const vrtol = _mm512_set1_pd(rtol);
    __m512d const one = _mm512_set1_pd(1.0);
    __m512d dd = _mm512_setzero_pd(), rr = dd, cc = dd, cr = dd, ad_sum = dd;
    __m512d max_ad = dd, max_c = dd, max_r = dd, outside = dd;
    std::size_t i = 0;
    for (; i + kWidth <= n; i += kWidth) {
        __m512d const c = load8<C>(candidate, i);
        __m512d const r = load8<R>(reference, i);
        __m512d const d = _mm512_sub_pd(c, r);
        __m512d const ad = _mm512_abs_pd(d);
        __m512d const ar = _mm512_abs_pd(r);
        // max(a, b) is (a > b) ? a : b, so a NaN never replaces the running maximum.
        max_ad = _mm512_max_pd(ad, max_ad);
        max_c = _mm512_max_pd(_mm512_abs_pd(c), max_c);
        max_r = _mm512_max_pd(ar, max_r);
        dd = _mm512_add_pd(dd, _mm512_mul_pd(d, d));
        rr = _mm512_add_pd(rr, _mm512_mul_pd(r, r));
        cc = _mm512_add_pd(cc, _mm512_mul_pd(c, c));
        cr = _mm512_add_pd(cr, _mm512_mul_pd(c, r));
        ad_sum = _mm512_add_pd(ad_sum, ad);
        if constexpr (WithTolerance) {
            __m512d const bound = _mm512_add_pd(vatol, _mm512_mul_pd(vrtol, ar));
            __mmask8 const inside = _mm512_cmp_pd_mask(ad, bound, _CMP_LE_OQ);
            outside = _mm512_mask_add_pd(outside, static_cast<__mmask8>(~inside), outside, one);
        }
        if (abs_errors != nullptr) {
            _mm512_storeu_pd(abs_errors + i, ad);
        }
    }
    // Eight lanes folded into the four the other passes keep: lane k + 4 into lane k.
    fold(dd, lanes->dd, false);
    fold(rr, lanes->rr, false);
    fold(cc, lanes->cc, false);
    fold(cr, lanes->cr, false);
    fold(ad_sum, lanes->ad, false);
    fold(max_ad, lanes->max_ad, true);
    fold(max_c, lanes->max_c, true);
    fold(max_r, lanes->max_r, true);
    fold(outside, lanes->outside, false);
    // The last n mod 8 elements, in lanes 0, 1, 2, 3, 0, 1, 2.
    for (std::size_t j = 0; i < n; ++i, ++j) {
        std::size_t const k = j % first_pass_lanes;
        double const c = load1<C>(candidate, i);
        double const r = load1<R>(reference, i);
        double const d = c - r;
        double const ad = __builtin_fabs(d);
        double const ac = __builtin_fabs(c);
        double const ar = __builtin_fabs(r);
        lanes->max_ad[k] = ad > lanes->max_ad[k] ? ad : lanes->max_ad[k];
        lanes->max_c[k] = ac > lanes->max_c[k] ? ac : lanes->max_c[k];
        lanes->max_r[k] = ar > lanes->max_r[k] ? ar : lanes->max_r[k];
        lanes->dd[k] += d * d;
        lanes->rr[k] += r * r;
        lanes->cc[k] += c * c;
        lanes->cr[k] += c * r;
        lanes->ad[k] += ad;
        if constexpr (WithTolerance) {
            bool const inside = ad <= atol + rtol * ar;
            lanes->outside[k] += 1.0 - static_cast<double>(inside);
        }
        if (abs_errors != nullptr) {
            abs_errors[i] = ad;
        }
    }
}

template <ElementType C, ElementType R>
void first_pass_of(void const* candidate, void const* reference, std::size_t n, bool with_tolerance,
                   double atol, double rtol, double* abs_errors, FirstPassLanes* lanes) noexcept {
    if (with_tolerance) {
        first_pass<C, R, true>(candidate, reference, n, atol, rtol, abs_errors, lanes);
    } else {
        first_pass<C, R, false>(candidate, reference, n, atol, rtol, abs_errors, lanes);
    }
}

template <ElementType C>
FirstPassKernel with_reference(ElementType reference) noexcept {
    switch (reference) {
    case ElementType::float64:
        return first_pass_of<C, ElementType::float64>;
    case ElementType::float32:
        return first_pass_of<C, ElementType::float32>;
    case ElementType::float16:
        return first_pass_of<C, ElementType::float16>;
    case ElementType::bfloat16:
        return first_pass_of<C, ElementType::bfloat16>;
    default:
        return nullptr;
    }
}

} // namespace

// Called only after the CPU was found to have AVX-512F, AVX2 and F16C (first_pass.cpp).
FirstPassKernel first_pass_kernel_avx512(ElementType candidate, ElementType reference) noexcept {
    switch (candidate) {
    case ElementType::float64:
        return with_reference<ElementType::float64>(reference);
    case ElementType::float32:
        return with_reference<ElementType::float32>(reference);
    case ElementType::float16:
        return with_reference<ElementType::float16>(reference);
    case ElementType::bfloat16:
        return with_reference<ElementType::bfloat16>(reference);
    default:
        return nullptr;
    }
}

} // namespace tensoracle::detail
