// Comparison of a candidate output array against a reference array: float64 error measures for
// floating point arrays, exact mismatch counts for integer and boolean arrays.
#pragma once

#include "tensoracle/compare/array_view.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace tensoracle {

// An element is outside tolerance unless abs(candidate - reference) <= atol + rtol *
// abs(reference).
struct Tolerance {
    double atol = 0.0;
    double rtol = 0.0;
};

struct CompareOptions {
    std::optional<Tolerance> tolerance;
    // Also compute ErrorStatistics (needs 8 bytes of memory per element).
    bool statistics = false;
    std::size_t histogram_bins = 10;
    // Worker threads; 0 picks one per hardware thread, and one for arrays too small to share.
    unsigned threads = 0;
};

// Distribution of abs(candidate - reference), computed only on request.
struct ErrorStatistics {
    double mean_abs_error = 0.0;
    // (percentile in [0, 100], value), interpolated linearly between order statistics.
    std::vector<std::pair<double, double>> percentiles;
    // histogram_counts[i] counts errors in [edges[i], edges[i + 1]); the last bin includes its
    // upper edge. Edges run from 0 to the maximum error (to 1 when every error is 0).
    std::vector<double> histogram_edges;
    std::vector<std::uint64_t> histogram_counts;
};

// Measurements of two floating point arrays. A non-finite element on either side leaves every
// optional measurement empty; a zero reference norm leaves relative_l2_error empty; a zero norm
// on either side leaves cosine_similarity empty.
struct FloatComparison {
    std::uint64_t element_count = 0;
    std::uint64_t candidate_nonfinite_count = 0;
    std::uint64_t reference_nonfinite_count = 0;
    std::optional<double> max_abs_error;
    std::optional<double> relative_l2_error;
    std::optional<double> cosine_similarity;
    std::optional<std::uint64_t> outside_tolerance_count; // only with CompareOptions::tolerance
    std::optional<ErrorStatistics> statistics;            // only with CompareOptions::statistics
};

// The percentiles that ErrorStatistics reports.
inline constexpr std::array<double, 4> statistics_percentiles{50.0, 90.0, 99.0, 99.9};

// Compares two floating point arrays of one nonempty shape, in float64. Throws InvalidArgument
// (naming the argument and the value) for a shape, kind or emptiness problem, or a tolerance
// that is negative or not finite.
FloatComparison compare_floating(ArrayView const& candidate, ArrayView const& reference,
                                 CompareOptions const& options = {});

// Which first pass compare_floating runs for these arrays: for contiguous float64, float32,
// float16 or bfloat16 arrays on x86-64 Linux, "avx512" (eight doubles per step, where it has
// AVX-512F, AVX2 and F16C) or "avx2" (where it has AVX2 and F16C); else "portable". Every pass
// gives the same results bit for bit. TENSORACLE_COMPARE_KERNEL=avx2 (or =portable) in the
// environment chooses no more than that pass.
std::string_view compare_kernel(ArrayView const& candidate, ArrayView const& reference) noexcept;

// Counts elements that differ between two integer arrays, or two boolean arrays, of one
// nonempty shape. Integer values compare exactly across widths and signedness.
std::uint64_t count_mismatches(ArrayView const& candidate, ArrayView const& reference,
                               unsigned threads = 0);

} // namespace tensoracle
