// Binds the comparison core: Python passes each array as (address, shape, byte strides, dtype
// name) and keeps the arrays alive for the call; the work runs with the GIL released.
#include "tensoracle/compare/compare.hpp"

#include "bindings.hpp"
#include "compare/float_formats.hpp"
#include "tensoracle/errors.hpp"

#include <cstdint>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <string>
#include <tuple>
#include <vector>

namespace nb = nanobind;

namespace tensoracle::bindings {
namespace {

using ViewArguments =
    std::tuple<std::uintptr_t, std::vector<std::int64_t>, std::vector<std::int64_t>, std::string>;

ArrayView to_view(ViewArguments const& arguments, std::string_view field) {
    auto const& [address, shape, strides, dtype] = arguments;
    return ArrayView{reinterpret_cast<std::byte const*>(address), parse_element_type(dtype, field),
                     shape, strides};
}

nb::dict compare_floating_binding(ViewArguments const& candidate, ViewArguments const& reference,
                                  std::optional<double> atol, std::optional<double> rtol,
                                  bool statistics, std::size_t histogram_bins, unsigned threads) {
    ArrayView const candidate_view = to_view(candidate, "candidate");
    ArrayView const reference_view = to_view(reference, "reference");
    CompareOptions options;
    if (atol.has_value() != rtol.has_value()) {
        throw InvalidArgument("atol and rtol must be given together");
    }
    if (atol) {
        options.tolerance = Tolerance{*atol, *rtol};
    }
    options.statistics = statistics;
    options.histogram_bins = histogram_bins;
    options.threads = threads;
    FloatComparison result;
    {
        nb::gil_scoped_release released;
        result = compare_floating(candidate_view, reference_view, options);
    }
    nb::dict out;
    out["element_count"] = result.element_count;
    out["candidate_nonfinite_count"] = result.candidate_nonfinite_count;
    out["reference_nonfinite_count"] = result.reference_nonfinite_count;
    out["max_abs_error"] = result.max_abs_error;
    out["relative_l2_error"] = result.relative_l2_error;
    out["cosine_similarity"] = result.cosine_similarity;
    out["outside_tolerance_count"] = result.outside_tolerance_count;
    if (result.statistics) {
        ErrorStatistics const& stats = *result.statistics;
        nb::dict described;
        described["mean_abs_error"] = stats.mean_abs_error;
        described["percentiles"] = stats.percentiles;
        described["histogram_edges"] = stats.histogram_edges;
        described["histogram_counts"] = stats.histogram_counts;
        out["statistics"] = described;
    } else {
        out["statistics"] = nb::none();
    }
    return out;
}

std::uint64_t count_mismatches_binding(ViewArguments const& candidate,
                                       ViewArguments const& reference, unsigned threads) {
    ArrayView const candidate_view = to_view(candidate, "candidate");
    ArrayView const reference_view = to_view(reference, "reference");
    nb::gil_scoped_release released;
    return count_mismatches(candidate_view, reference_view, threads);
}

// Decodes raw codes of a narrow float format; lets the tests check every code against ml_dtypes.
std::vector<double> decode_codes(std::string const& dtype,
                                 std::vector<std::uint32_t> const& codes) {
    std::vector<double> values;
    values.reserve(codes.size());
    for (std::uint32_t code : codes) {
        auto const wide = static_cast<std::uint16_t>(code);
        auto const narrow = static_cast<std::uint8_t>(code);
        if (dtype == "float16") {
            values.push_back(decode_float16(wide));
        } else if (dtype == "bfloat16") {
            values.push_back(decode_bfloat16(wide));
        } else if (dtype == "float8_e4m3fn") {
            values.push_back(decode_float8_e4m3fn(narrow));
        } else if (dtype == "float8_e5m2") {
            values.push_back(decode_float8_e5m2(narrow));
        } else {
            throw InvalidArgument("no decoder for dtype '" + dtype + "'");
        }
    }
    return values;
}

} // namespace

void bind_compare(nb::module_& module) {
    module.def("compare_floating", &compare_floating_binding, nb::arg("candidate"),
               nb::arg("reference"), nb::arg("atol").none(), nb::arg("rtol").none(),
               nb::arg("statistics"), nb::arg("histogram_bins"), nb::arg("threads"));
    module.def("count_mismatches", &count_mismatches_binding, nb::arg("candidate"),
               nb::arg("reference"), nb::arg("threads"));
    module.def("decode_codes", &decode_codes, nb::arg("dtype"), nb::arg("codes"));
    module.def(
        "compare_kernel",
        [](ViewArguments const& candidate, ViewArguments const& reference) {
            return std::string(
                compare_kernel(to_view(candidate, "candidate"), to_view(reference, "reference")));
        },
        nb::arg("candidate"), nb::arg("reference"),
        "Which first pass compare_floating runs for these arrays: \"avx512\", \"avx2\" or "
        "\"portable\" "
        "(tensoracle::compare_kernel).");
}

} // namespace tensoracle::bindings
