// The optional error distribution of a comparison: mean, percentiles and histogram.
#include "error_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace tensoracle::detail {
namespace {

// Linear interpolation between order statistics, as NumPy's default percentile method.
double interpolate(double low, double high, double fraction) noexcept {
    double const step = high - low;
    return fraction >= 0.5 ? high - step * (1.0 - fraction) : low + step * fraction;
}

} // namespace

ErrorStatistics describe_errors(std::vector<double>& errors, double max_error, double abs_error_sum,
                                std::size_t bins) {
    ErrorStatistics statistics;
    std::size_t const count = errors.size();
    statistics.mean_abs_error = abs_error_sum / static_cast<double>(count);

    double const upper = max_error > 0.0 ? max_error : 1.0;
    double const step = upper / static_cast<double>(bins);
    statistics.histogram_edges.resize(bins + 1);
    for (std::size_t i = 0; i < bins; ++i) {
        statistics.histogram_edges[i] = static_cast<double>(i) * step;
    }
    statistics.histogram_edges[bins] = upper;
    statistics.histogram_counts.assign(bins, 0);
    auto const& edges = statistics.histogram_edges;
    for (double error : errors) {
        auto const above = std::upper_bound(edges.begin(), edges.end(), error) - edges.begin();
        std::size_t const bin = std::min(bins, static_cast<std::size_t>(above)) - 1;
        ++statistics.histogram_counts[bin];
    }

    // Ascending percentiles let each selection start where the previous one ended.
    auto first = errors.begin();
    for (double percentile : statistics_percentiles) {
        double const position = percentile / 100.0 * static_cast<double>(count - 1);
        auto const low_index = static_cast<std::ptrdiff_t>(std::floor(position));
        auto const low = errors.begin() + low_index;
        std::nth_element(first, low, errors.end());
        double const high_value =
            low + 1 == errors.end() ? *low : *std::min_element(low + 1, errors.end());
        statistics.percentiles.emplace_back(
            percentile, interpolate(*low, high_value, position - static_cast<double>(low_index)));
        first = low;
    }
    return statistics;
}

} // namespace tensoracle::detail
