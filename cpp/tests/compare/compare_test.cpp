// Tests of compare_floating and count_mismatches: measures against long double references,
// None rules, strided views, mixed types, rescaling, statistics, errors and threading.
#include "tensoracle/compare/compare.hpp"
#include "tensoracle/errors.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <gtest/gtest.h>
#include <limits>
#include <random>
#include <vector>

namespace {

using tensoracle::ArrayView;
using tensoracle::CompareOptions;
using tensoracle::ElementType;
using tensoracle::InvalidArgument;
using tensoracle::Tolerance;

// An owned 1-D or N-D array plus the view the core reads.
template <class T>
struct Array {
    std::vector<T> values;
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> strides;
    ElementType type;
    std::int64_t offset = 0; // in elements, for views that start inside the buffer

    ArrayView view() const {
        auto const* base = reinterpret_cast<std::byte const*>(values.data());
        return ArrayView{base + offset * static_cast<std::int64_t>(sizeof(T)), type, shape,
                         strides};
    }
};

template <class T>
Array<T> vector_of(std::vector<T> values, ElementType type) {
    auto const n = static_cast<std::int64_t>(values.size());
    return Array<T>{std::move(values), {n}, {static_cast<std::int64_t>(sizeof(T))}, type};
}

Array<double> doubles(std::vector<double> values) {
    return vector_of(std::move(values), ElementType::float64);
}

void expect_message(auto&& call, std::string const& expected) {
    try {
        call();
        FAIL() << "no exception; expected: " << expected;
    } catch (InvalidArgument const& error) {
        EXPECT_EQ(std::string{error.what()}, expected);
    }
}

TEST(CompareFloating, MeasuresASmallExample) {
    auto const c = doubles({1.0, 2.0, 3.0});
    auto const r = doubles({1.0, 2.0, 4.0});
    auto const result = tensoracle::compare_floating(c.view(), r.view());
    EXPECT_EQ(result.element_count, 3U);
    EXPECT_EQ(result.candidate_nonfinite_count, 0U);
    EXPECT_EQ(*result.max_abs_error, 1.0);
    EXPECT_DOUBLE_EQ(*result.relative_l2_error, 1.0 / std::sqrt(21.0));
    EXPECT_DOUBLE_EQ(*result.cosine_similarity, 17.0 / (std::sqrt(14.0) * std::sqrt(21.0)));
    EXPECT_FALSE(result.outside_tolerance_count.has_value());
    EXPECT_FALSE(result.statistics.has_value());
}

TEST(CompareFloating, CountsElementsOutsideToleranceWithInclusiveBound) {
    auto const c = doubles({1.5, 2.0, -3.0, 10.0});
    auto const r = doubles({1.0, 2.0, -2.0, 8.0});
    CompareOptions options;
    options.tolerance = Tolerance{0.5, 0.25}; // bounds 0.75, 1.0, 1.0, 2.5
    auto const result = tensoracle::compare_floating(c.view(), r.view(), options);
    EXPECT_EQ(*result.outside_tolerance_count, 0U);
    options.tolerance = Tolerance{0.5, 0.0};
    EXPECT_EQ(*tensoracle::compare_floating(c.view(), r.view(), options).outside_tolerance_count,
              2U);
}

TEST(CompareFloating, NonFiniteValuesLeaveEveryMeasureEmpty) {
    double const nan = std::numeric_limits<double>::quiet_NaN();
    double const inf = std::numeric_limits<double>::infinity();
    auto const c = doubles({nan, 1.0, inf});
    auto const r = doubles({1.0, -inf, 2.0});
    CompareOptions options;
    options.tolerance = Tolerance{1.0, 1.0};
    options.statistics = true;
    auto const result = tensoracle::compare_floating(c.view(), r.view(), options);
    EXPECT_EQ(result.candidate_nonfinite_count, 2U);
    EXPECT_EQ(result.reference_nonfinite_count, 1U);
    EXPECT_FALSE(result.max_abs_error || result.relative_l2_error || result.cosine_similarity ||
                 result.outside_tolerance_count || result.statistics);
}

TEST(CompareFloating, ZeroNormsLeaveRatiosEmpty) {
    auto const zeros = doubles({0.0, -0.0});
    auto const ones = doubles({1.0, 1.0});
    auto const zero_reference = tensoracle::compare_floating(ones.view(), zeros.view());
    EXPECT_EQ(*zero_reference.max_abs_error, 1.0);
    EXPECT_FALSE(zero_reference.relative_l2_error.has_value());
    EXPECT_FALSE(zero_reference.cosine_similarity.has_value());
    auto const zero_candidate = tensoracle::compare_floating(zeros.view(), ones.view());
    EXPECT_EQ(*zero_candidate.relative_l2_error, 1.0);
    EXPECT_FALSE(zero_candidate.cosine_similarity.has_value());
}

TEST(CompareFloating, RescalesWhenSquaresOverflowOrUnderflow) {
    auto const big_c = doubles({1e300, 2e300});
    auto const big_r = doubles({2e300, 1e300});
    auto const big = tensoracle::compare_floating(big_c.view(), big_r.view());
    EXPECT_NEAR(*big.relative_l2_error, std::sqrt(2.0 / 5.0), 1e-15);
    EXPECT_NEAR(*big.cosine_similarity, 4.0 / 5.0, 1e-15);
    auto const tiny_c = doubles({1e-200, 0.0});
    auto const tiny_r = doubles({2e-200, 0.0});
    auto const tiny = tensoracle::compare_floating(tiny_c.view(), tiny_r.view());
    EXPECT_NEAR(*tiny.relative_l2_error, 0.5, 1e-15);
    EXPECT_NEAR(*tiny.cosine_similarity, 1.0, 1e-15);
    // A subnormal maximum: 2^-exponent is not a double, so the rescaling goes element by element.
    auto const zero = doubles({0.0, 0.0});
    auto const subnormal = doubles({0x1p-1030, -0x1p-1040});
    auto const lost = tensoracle::compare_floating(zero.view(), subnormal.view());
    EXPECT_EQ(*lost.relative_l2_error, 1.0);
    auto const half = doubles({0x1p-1031, -0x1p-1041});
    EXPECT_NEAR(*tensoracle::compare_floating(half.view(), subnormal.view()).relative_l2_error, 0.5,
                1e-15);
    // A difference whose square underflows although the values' squares do not.
    auto const one = doubles({1.0, 1.0});
    auto const nearly_one = doubles({1.0, 1.0 + 0x1p-52});
    auto const close = tensoracle::compare_floating(nearly_one.view(), one.view());
    EXPECT_EQ(*close.relative_l2_error, 0x1p-52 / std::sqrt(2.0));
    auto const big_one = doubles({0x1p600, 0x1p600});
    auto const big_nearly = doubles({0x1p600, 0x1p600 + 0x1p548});
    auto const far = tensoracle::compare_floating(big_nearly.view(), big_one.view());
    EXPECT_NEAR(*far.relative_l2_error, 0x1p-52 / std::sqrt(2.0), 1e-15 * 0x1p-52);
    auto const small = doubles({0x1p-400, 0x1p-400});
    auto const small_nearly = doubles({0x1p-400, 0x1p-400 + 0x1p-452});
    auto const tiny_gap = tensoracle::compare_floating(small_nearly.view(), small.view());
    EXPECT_NEAR(*tiny_gap.relative_l2_error, 0x1p-52 / std::sqrt(2.0), 1e-15 * 0x1p-52);
    // Large values agree; the only difference is in tiny ones, whose squares underflow.
    auto const mixed_r = doubles({1.0, 1e-300});
    auto const mixed_c = doubles({1.0, 2e-300});
    double const gap = 2e-300 - 1e-300;
    auto const mixed = tensoracle::compare_floating(mixed_c.view(), mixed_r.view());
    EXPECT_NEAR(*mixed.relative_l2_error, gap, 1e-15 * gap);
    // The difference itself exceeds the float64 range; its norm ratio does not.
    auto const opposite_c = doubles({1.5e308});
    auto const opposite_r = doubles({-1.5e308});
    auto const opposite = tensoracle::compare_floating(opposite_c.view(), opposite_r.view());
    EXPECT_TRUE(std::isinf(*opposite.max_abs_error));
    EXPECT_NEAR(*opposite.relative_l2_error, 2.0, 1e-15);
    EXPECT_NEAR(*opposite.cosine_similarity, -1.0, 1e-15);
}

TEST(CompareFloating, ReadsFloat16AgainstFloat32) {
    auto const c = vector_of<std::uint16_t>({0x3C00, 0x4000, 0x3555}, ElementType::float16);
    auto const r = vector_of<float>({1.0F, 2.5F, 0.25F}, ElementType::float32);
    auto const result = tensoracle::compare_floating(c.view(), r.view());
    double const third = 0x1.554p-2; // the float16 nearest 1/3
    EXPECT_EQ(*result.max_abs_error, 0.5);
    double const dd = 0.25 + (third - 0.25) * (third - 0.25);
    EXPECT_DOUBLE_EQ(*result.relative_l2_error, std::sqrt(dd) / std::sqrt(1.0 + 6.25 + 0.0625));
}

TEST(CompareFloating, ReadsNegativeAndTransposedStrides) {
    // 2 x 3 row-major values read as the transposed 3 x 2 array, against a reversed copy.
    Array<double> c{{1, 2, 3, 4, 5, 6}, {3, 2}, {8, 24}, ElementType::float64};
    // Reference holds the transposed order [1, 4, 2, 5, 3, 6] reversed in memory.
    Array<double> r{{6, 3, 5, 2, 4, 1}, {3, 2}, {-16, -8}, ElementType::float64, 5};
    auto const same = tensoracle::compare_floating(c.view(), r.view());
    EXPECT_EQ(*same.max_abs_error, 0.0);
    EXPECT_EQ(*same.relative_l2_error, 0.0);
    Array<double> shifted = r;
    shifted.values[0] = 7.0; // the last element of the reversed view
    auto const different = tensoracle::compare_floating(c.view(), shifted.view());
    EXPECT_EQ(*different.max_abs_error, 1.0);
}

TEST(CompareFloating, BroadcastZeroStrideReadsOneValue) {
    Array<float> c{{2.0F}, {4}, {0}, ElementType::float32};
    auto const r = doubles({2.0, 2.0, 2.0, 3.0});
    auto const result = tensoracle::compare_floating(c.view(), r.view());
    EXPECT_EQ(*result.max_abs_error, 1.0);
}

struct Random {
    std::vector<double> candidate;
    std::vector<double> reference;
};

Random random_arrays(std::size_t n, unsigned seed) {
    std::mt19937_64 generator(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    Random arrays;
    arrays.candidate.resize(n);
    arrays.reference.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        arrays.reference[i] = normal(generator) * std::exp(normal(generator));
        arrays.candidate[i] = arrays.reference[i] + 1e-3 * normal(generator);
    }
    return arrays;
}

TEST(CompareFloating, MatchesALongDoubleReferenceOnMillionsOfElements) {
    std::size_t const n = 3'000'017;
    auto const arrays = random_arrays(n, 7);
    long double dd = 0, rr = 0, cc = 0, cr = 0;
    for (std::size_t i = 0; i < n; ++i) {
        long double const c = arrays.candidate[i];
        long double const r = arrays.reference[i];
        long double const d = static_cast<long double>(arrays.candidate[i] - arrays.reference[i]);
        dd += d * d;
        rr += r * r;
        cc += c * c;
        cr += c * r;
    }
    auto const c = doubles(arrays.candidate);
    auto const r = doubles(arrays.reference);
    auto const result = tensoracle::compare_floating(c.view(), r.view());
    auto const relative = static_cast<double>(std::sqrt(dd) / std::sqrt(rr));
    auto const cosine = static_cast<double>(cr / (std::sqrt(cc) * std::sqrt(rr)));
    EXPECT_NEAR(*result.relative_l2_error, relative, 1e-13 * relative);
    EXPECT_NEAR(*result.cosine_similarity, cosine, 1e-13);
}

TEST(CompareFloating, ThreadCountDoesNotChangeAnyBit) {
    auto const arrays = random_arrays(1'234'567, 11);
    auto const c = doubles(arrays.candidate);
    auto const r = doubles(arrays.reference);
    CompareOptions options;
    options.tolerance = Tolerance{1e-3, 1e-3};
    options.statistics = true;
    options.threads = 1;
    auto const single = tensoracle::compare_floating(c.view(), r.view(), options);
    for (unsigned threads : {2U, 3U, 8U}) {
        options.threads = threads;
        auto const multi = tensoracle::compare_floating(c.view(), r.view(), options);
        EXPECT_EQ(*multi.max_abs_error, *single.max_abs_error);
        EXPECT_EQ(*multi.relative_l2_error, *single.relative_l2_error);
        EXPECT_EQ(*multi.cosine_similarity, *single.cosine_similarity);
        EXPECT_EQ(*multi.outside_tolerance_count, *single.outside_tolerance_count);
        EXPECT_EQ(multi.statistics->mean_abs_error, single.statistics->mean_abs_error);
        EXPECT_EQ(multi.statistics->histogram_counts, single.statistics->histogram_counts);
    }
    EXPECT_GT(*single.outside_tolerance_count, 0U);
}

TEST(CompareFloating, DescribesTheErrorDistribution) {
    std::vector<double> reference(101, 0.0);
    std::vector<double> candidate(101);
    for (std::size_t i = 0; i < candidate.size(); ++i) {
        candidate[(i * 37) % 101] = -static_cast<double>(i); // errors 0..100, shuffled
    }
    auto const c = doubles(candidate);
    auto const r = doubles(reference);
    CompareOptions options;
    options.statistics = true;
    options.histogram_bins = 4;
    auto const stats = *tensoracle::compare_floating(c.view(), r.view(), options).statistics;
    EXPECT_EQ(stats.mean_abs_error, 50.0);
    ASSERT_EQ(stats.percentiles.size(), 4U);
    EXPECT_EQ(stats.percentiles[0], (std::pair{50.0, 50.0}));
    EXPECT_EQ(stats.percentiles[1], (std::pair{90.0, 90.0}));
    EXPECT_EQ(stats.percentiles[2], (std::pair{99.0, 99.0}));
    EXPECT_NEAR(stats.percentiles[3].second, 99.9, 1e-12);
    EXPECT_EQ(stats.histogram_edges, (std::vector<double>{0.0, 25.0, 50.0, 75.0, 100.0}));
    EXPECT_EQ(stats.histogram_counts, (std::vector<std::uint64_t>{25, 25, 25, 26}));
}

TEST(CompareFloating, RejectsShapeKindEmptinessAndTolerance) {
    auto const three = doubles({1, 2, 3});
    auto const two = doubles({1, 2});
    expect_message([&] { tensoracle::compare_floating(three.view(), two.view()); },
                   "candidate shape (3,) differs from reference shape (2,)");
    auto const integers = vector_of<std::int32_t>({1, 2, 3}, ElementType::int32);
    expect_message([&] { tensoracle::compare_floating(three.view(), integers.view()); },
                   "candidate dtype float64 (floating point) and reference dtype int32 "
                   "(integer) are different kinds");
    Array<double> empty{{}, {2, 0}, {0, 8}, ElementType::float64};
    expect_message([&] { tensoracle::compare_floating(empty.view(), empty.view()); },
                   "candidate and reference are empty (shape (2, 0)); at least one element is "
                   "needed");
    CompareOptions options;
    options.tolerance = Tolerance{-1.0, 0.0};
    expect_message([&] { tensoracle::compare_floating(three.view(), three.view(), options); },
                   "atol must be finite and >= 0, got -1.000000");
    expect_message([] { tensoracle::parse_element_type("complex64", "candidate"); },
                   "candidate has dtype 'complex64', which is not supported; supported dtypes: "
                   "float16 bfloat16 float8_e4m3fn float8_e5m2 float32 float64 int8 int16 int32 "
                   "int64 uint8 uint16 uint32 uint64 bool");
}

TEST(CountMismatches, ComparesIntegersExactlyAcrossWidthsAndSignedness) {
    auto const c = vector_of<std::int32_t>({-1, 5, 7, 0}, ElementType::int32);
    auto const r = vector_of<std::int64_t>({-1, 5, 8, 0}, ElementType::int64);
    EXPECT_EQ(tensoracle::count_mismatches(c.view(), r.view()), 1U);
    auto const minus_one = vector_of<std::int64_t>({-1}, ElementType::int64);
    auto const largest = vector_of<std::uint64_t>({~std::uint64_t{0}}, ElementType::uint64);
    EXPECT_EQ(tensoracle::count_mismatches(minus_one.view(), largest.view()), 1U);
    auto const byte = vector_of<std::uint8_t>({255}, ElementType::uint8);
    auto const wide = vector_of<std::uint64_t>({255}, ElementType::uint64);
    EXPECT_EQ(tensoracle::count_mismatches(byte.view(), wide.view()), 0U);
}

TEST(CountMismatches, ComparesBooleansAndSameResultOnThreads) {
    std::vector<std::uint8_t> a(700'001);
    std::vector<std::uint8_t> b(a.size());
    std::mt19937 generator(3);
    std::size_t expected = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        a[i] = static_cast<std::uint8_t>(generator() & 1U);
        b[i] = static_cast<std::uint8_t>(generator() & 1U);
        expected += a[i] != b[i] ? 1U : 0U;
    }
    auto const c = vector_of(a, ElementType::boolean);
    auto const r = vector_of(b, ElementType::boolean);
    EXPECT_EQ(tensoracle::count_mismatches(c.view(), r.view(), 1), expected);
    EXPECT_EQ(tensoracle::count_mismatches(c.view(), r.view(), 4), expected);
    auto const floats = doubles({1.0});
    expect_message([&] { tensoracle::count_mismatches(floats.view(), floats.view()); },
                   "candidate dtype float64 is floating point; compare it with compare_floating");
}

} // namespace
