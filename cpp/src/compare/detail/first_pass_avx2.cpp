// compare_floating's first pass with AVX2 and F16C: four doubles per step, one per lane, float16
// read with vcvtph2ps, bfloat16 by a shift. Compiled with
// -mavx2 -mf16c and -ffp-contract=off (never a fused multiply-add, which would round differently
// from the portable pass) and called only where the CPU has both. Every function here has internal
// linkage and nothing of the C++ library is called, so none of this file's code can stand in for a
// function of another file.
#include "compare/first_pass.hpp"

#include <immintrin.h>

namespace tensoracle::detail {
namespace {

template <ElementType Type>
__m256d load4(void const* base, std::size_t i) noexcept {
    if constexpr (Type == ElementType::float64) {
        return _mm256_loadu_pd(static_cast<double const*>(base) + i);
    } else if constexpr (Type == ElementType::float32) {
        return _mm256_cvtps_pd(_mm_loadu_ps(static_cast<float const*>(base) + i));
    } else if constexpr (Type == ElementType::float16) {
        __m128i const bits =
            _mm_loadl_epi64(reinterpret_cast<__m128i const*>(static_cast<short const*>(base) + i));
        return _mm256_cvtps_pd(_mm_cvtph_ps(bits));
    } else { // bfloat16: the upper half of a float32
        __m128i const bits =
            _mm_loadl_epi64(reinterpret_cast<__m128i const*>(static_cast<short const*>(base) + i));
        return _mm256_cvtps_pd(_mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), bits)));
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
        short const lanes[4] = {static_cast<short const*>(base)[i], 0, 0, 0}; // NOLINT
        double out[4];                                                        // NOLINT
        _mm256_storeu_pd(out, load4<Type>(lanes, 0));
        return out[0];
    }
}

// Four lanes' running values.
struct Set {
    __m256d dd, rr, cc, cr, ad, max_ad, max_c, max_r, outside;
};

Set zero_set() noexcept {
    __m256d const zero = _mm256_setzero_pd();
    return Set{zero, zero, zero, zero, zero, zero, zero, zero, zero};
}

void store(Set const& set, FirstPassLanes* lanes) noexcept {
    _mm256_storeu_pd(lanes->dd, set.dd);
    _mm256_storeu_pd(lanes->rr, set.rr);
    _mm256_storeu_pd(lanes->cc, set.cc);
    _mm256_storeu_pd(lanes->cr, set.cr);
    _mm256_storeu_pd(lanes->ad, set.ad);
    _mm256_storeu_pd(lanes->max_ad, set.max_ad);
    _mm256_storeu_pd(lanes->max_c, set.max_c);
    _mm256_storeu_pd(lanes->max_r, set.max_r);
    _mm256_storeu_pd(lanes->outside, set.outside);
}

// Inlined into the sweep, so that the set's accumulators stay in registers.
template <ElementType C, ElementType R, bool WithTolerance>
__attribute__((always_inline)) inline __m256d step(void const* candidate, void const* reference,
                                                   std::size_t i, __m256d atol, __m256d rtol,
                                                   Set& set) noexcept {
    __m256d const sign = _mm256_set1_pd(-0.0);
    __m256d const c = load4<C>(candidate, i);
    __m256d const r = load4<R>(reference, i);
    __m256d const d = _mm256_sub_pd(c, r);
    __m256d const ad = _mm256_andnot_pd(sign, d);
    __m256d const ar = _mm256_andnot_pd(sign, r);
    // max(a, b) is (a > b) ? a : b, so a NaN never replaces the running maximum.
    set.max_ad = _mm256_max_pd(ad, set.max_ad);
    set.max_c = _mm256_max_pd(_mm256_andnot_pd(sign, c), set.max_c);
    set.max_r = _mm256_max_pd(ar, set.max_r);
    set.dd = _mm256_add_pd(set.dd, _mm256_mul_pd(d, d));
    set.rr = _mm256_add_pd(set.rr, _mm256_mul_pd(r, r));
    set.cc = _mm256_add_pd(set.cc, _mm256_mul_pd(c, c));
    set.cr = _mm256_add_pd(set.cr, _mm256_mul_pd(c, r));
    set.ad = _mm256_add_pd(set.ad, ad);
    if constexpr (WithTolerance) {
        __m256d const bound = _mm256_add_pd(atol, _mm256_mul_pd(rtol, ar));
        __m256d const inside = _mm256_cmp_pd(ad, bound, _CMP_LE_OQ);
        set.outside = _mm256_add_pd(set.outside, _mm256_andnot_pd(inside, _mm256_set1_pd(1.0)));
    }
    return ad;
}

template <ElementType C, ElementType R, bool WithTolerance>
void first_pass(void const* candidate, void const* reference, std::size_t n, double atol,
                double rtol, double* abs_errors, FirstPassLanes* lanes) noexcept {
    __m256d const vatol = _mm256_set1_pd(atol);
    __m256d const vrtol = _mm256_set1_pd(rtol);
    Set set = zero_set();
    std::size_t i = 0;
    for (; i + first_pass_lanes <= n; i += first_pass_lanes) {
        __m256d const ad = step<C, R, WithTolerance>(candidate, reference, i, vatol, vrtol, set);
        if (abs_errors != nullptr) {
            _mm256_storeu_pd(abs_errors + i, ad);
        }
    }
    store(set, lanes);
    // The last n mod 4 elements, in lanes 0, 1, 2 as the portable pass places them.
    for (std::size_t k = 0; i < n; ++i, ++k) {
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

// Called only after the CPU was found to have AVX2 and F16C (first_pass.cpp).
FirstPassKernel first_pass_kernel_avx2(ElementType candidate, ElementType reference) noexcept {
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
