// Private to the core: describes the absolute errors collected by compare_floating.
#pragma once

#include "tensoracle/compare/compare.hpp"

#include <cstddef>
#include <vector>

namespace tensoracle::detail {

// Mean, statistics_percentiles and a `bins`-bin histogram of `errors` (nonempty, all finite and
// at most `max_error`). Reorders `errors`.
ErrorStatistics describe_errors(std::vector<double>& errors, double max_error, double abs_error_sum,
                                std::size_t bins);

} // namespace tensoracle::detail
