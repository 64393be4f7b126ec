// compare_floating's vector first passes (AVX-512 and AVX2, chosen at run time) against its
// portable pass: for every pair of the types they read, lengths around their steps and buffers,
// non-finite values, tolerances and statistics, the AVX2 pass gives the portable results bit for
// bit, and the AVX-512 pass (which adds in eight lanes) the same counts and maxima and sums
// within 1e-14 relative. A pass is chosen with TENSORACLE_COMPARE_KERNEL, as a user may.
#include "tensoracle/compare/compare.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <gtest/gtest.h>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using tensoracle::ArrayView;
using tensoracle::CompareOptions;
using tensoracle::ElementType;
using tensoracle::FloatComparison;

// Chooses the pass ("portable", "avx2"; empty: the best the CPU has).
void choose(char const* kernel) {
#if defined(_WIN32)
    _putenv_s("TENSORACLE_COMPARE_KERNEL", kernel);
#else
    if (*kernel != '\0') {
        setenv("TENSORACLE_COMPARE_KERNEL", kernel, 1);
    } else {
        unsetenv("TENSORACLE_COMPARE_KERNEL");
    }
#endif
}

// Random values of one type, as raw bytes, with a NaN or infinity where asked.
struct Values {
    std::vector<std::byte> bytes;
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> strides;
    ElementType type;

    ArrayView view() const { return ArrayView{bytes.data(), type, shape, strides}; }
};

std::size_t size_of(ElementType type) {
    return type == ElementType::float64 ? 8 : type == ElementType::float32 ? 4 : 2;
}

std::uint16_t to_half(float value) {
    // Round-to-nearest is not needed here: any float16 code is a test value.
    auto const bits = std::bit_cast<std::uint32_t>(value);
    std::uint32_t const sign = (bits >> 16U) & 0x8000U;
    int const exponent = static_cast<int>((bits >> 23U) & 0xFFU) - 127 + 15;
    if (exponent <= 0) {
        return static_cast<std::uint16_t>(sign); // zero
    }
    if (exponent >= 31) {
        return static_cast<std::uint16_t>(sign | 0x7BFFU); // the largest finite
    }
    return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(exponent) << 10U) |
                                      ((bits >> 13U) & 0x3FFU));
}

Values values_of(std::vector<double> const& numbers, ElementType type) {
    Values made{{},
                {static_cast<std::int64_t>(numbers.size())},
                {static_cast<std::int64_t>(size_of(type))},
                type};
    made.bytes.resize(numbers.size() * size_of(type));
    for (std::size_t i = 0; i < numbers.size(); ++i) {
        std::byte* at = made.bytes.data() + i * size_of(type);
        auto const single = static_cast<float>(numbers[i]);
        if (type == ElementType::float64) {
            std::memcpy(at, &numbers[i], 8);
        } else if (type == ElementType::float32) {
            std::memcpy(at, &single, 4);
        } else if (type == ElementType::float16) {
            std::uint16_t const half = std::isnan(single)   ? std::uint16_t{0x7E00}
                                       : std::isinf(single) ? std::uint16_t{0x7C00}
                                                            : to_half(single);
            std::memcpy(at, &half, 2);
        } else { // bfloat16: the upper half of the float32
            auto const upper =
                static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(single) >> 16U);
            std::memcpy(at, &upper, 2);
        }
    }
    return made;
}

bool same(std::optional<double> const& one, std::optional<double> const& other) {
    return one.has_value() == other.has_value() &&
           (!one || std::bit_cast<std::uint64_t>(*one) == std::bit_cast<std::uint64_t>(*other));
}

bool close(std::optional<double> const& one, std::optional<double> const& other) {
    return one.has_value() == other.has_value() &&
           (!one || std::abs(*one - *other) <= 1e-14 * std::abs(*other));
}

void expect_same(FloatComparison const& vector, FloatComparison const& portable,
                 std::string const& what, bool exact) {
    EXPECT_EQ(vector.candidate_nonfinite_count, portable.candidate_nonfinite_count) << what;
    EXPECT_EQ(vector.reference_nonfinite_count, portable.reference_nonfinite_count) << what;
    EXPECT_TRUE(same(vector.max_abs_error, portable.max_abs_error)) << what;
    auto const agree = exact ? same : close;
    EXPECT_TRUE(agree(vector.relative_l2_error, portable.relative_l2_error)) << what;
    EXPECT_TRUE(agree(vector.cosine_similarity, portable.cosine_similarity)) << what;
    EXPECT_EQ(vector.outside_tolerance_count, portable.outside_tolerance_count) << what;
    ASSERT_EQ(vector.statistics.has_value(), portable.statistics.has_value()) << what;
    if (vector.statistics) {
        EXPECT_TRUE(agree(vector.statistics->mean_abs_error, portable.statistics->mean_abs_error))
            << what;
        EXPECT_EQ(vector.statistics->histogram_counts, portable.statistics->histogram_counts)
            << what;
    }
}

// The vector passes this CPU has, each as TENSORACLE_COMPARE_KERNEL chooses it.
std::vector<std::pair<std::string, char const*>> vector_passes() {
    auto const probe = values_of({1.0}, ElementType::float16);
    std::vector<std::pair<std::string, char const*>> passes;
    for (char const* chosen : {"", "avx2"}) {
        choose(chosen);
        std::string const name(tensoracle::compare_kernel(probe.view(), probe.view()));
        if (name != "portable" && (passes.empty() || passes.back().first != name)) {
            passes.emplace_back(name, chosen);
        }
    }
    choose("");
    return passes;
}

TEST(CompareKernel, EveryVectorPassGivesThePortableResults) {
    auto const passes = vector_passes();
    if (passes.empty()) {
        GTEST_SKIP()
            << "no vector pass in this build (x86-64 Linux builds have them) or on this CPU "
               "(AVX2 and F16C): only the portable pass runs here";
    }
    std::cout << "vector passes checked:";
    for (auto const& [name, chosen] : passes) {
        std::cout << " " << name;
    }
    std::cout << "\n";
    std::mt19937_64 generator(3);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<ElementType> const types{ElementType::float64, ElementType::float32,
                                         ElementType::float16, ElementType::bfloat16};
    for (std::size_t const n : {1U, 3U, 4U, 5U, 1023U, 1024U, 1027U, 70'001U}) {
        std::vector<double> reference(n);
        std::vector<double> candidate(n);
        for (std::size_t i = 0; i < n; ++i) {
            reference[i] = normal(generator) * 4.0;
            candidate[i] = reference[i] + 0.01 * normal(generator);
        }
        for (int const special : {0, 1, 2}) {
            std::vector<double> c = candidate;
            if (special == 1) {
                c[n / 2] = std::nan(""); // a NaN never replaces a maximum; counted
            } else if (special == 2) {
                c[n - 1] = -INFINITY;
            }
            for (ElementType const c_type : types) {
                for (ElementType const r_type : types) {
                    auto const cv = values_of(c, c_type);
                    auto const rv = values_of(reference, r_type);
                    for (auto const& [name, chosen] : passes) {
                        choose(chosen);
                        ASSERT_EQ(tensoracle::compare_kernel(cv.view(), rv.view()), name);
                        for (bool const extras : {false, true}) {
                            CompareOptions options;
                            if (extras) {
                                options.tolerance = tensoracle::Tolerance{1e-3, 1e-2};
                                options.statistics = true;
                            }
                            std::string const what =
                                name + " n=" + std::to_string(n) +
                                " special=" + std::to_string(special) +
                                " types=" + std::to_string(static_cast<int>(c_type)) + "," +
                                std::to_string(static_cast<int>(r_type)) +
                                (extras ? " with tolerance and statistics" : "");
                            choose(chosen);
                            FloatComparison const vector =
                                tensoracle::compare_floating(cv.view(), rv.view(), options);
                            choose("portable");
                            FloatComparison const portable =
                                tensoracle::compare_floating(cv.view(), rv.view(), options);
                            expect_same(vector, portable, what, name == "avx2");
                            if (special == 0 && extras && n >= 1023) {
                                EXPECT_GT(*vector.outside_tolerance_count, 0U) << what;
                            }
                        }
                    }
                    choose("");
                }
            }
        }
    }
}

TEST(CompareKernel, StridedArraysAndOtherTypesRunThePortablePass) {
    choose("");
    auto const half = values_of({1.0, 2.0, 3.0, 4.0}, ElementType::float16);
    Values strided = half;
    strided.shape = {2};
    strided.strides = {4};
    EXPECT_EQ(tensoracle::compare_kernel(strided.view(), strided.view()), "portable");
    std::vector<std::byte> const fp8(4, std::byte{0x38});
    std::vector<std::int64_t> const shape{4};
    std::vector<std::int64_t> const strides{1};
    ArrayView const e4m3{fp8.data(), ElementType::float8_e4m3fn, shape, strides};
    EXPECT_EQ(tensoracle::compare_kernel(e4m3, half.view()), "portable");
    choose("portable");
    EXPECT_EQ(tensoracle::compare_kernel(half.view(), half.view()), "portable");
    choose("");
}

} // namespace
