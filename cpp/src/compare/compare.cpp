// The comparison kernels: one fused pass over both arrays in float64, compensated block sums
// combined in block order, a rescaled second pass only when squares over- or underflow.
// Just over 400 lines: the floating and exact kernels share the blocks and the dtype dispatch;
// the error description is error_statistics.cpp.
#include "tensoracle/compare/compare.hpp"

#include "compare/element_readers.hpp"
#include "error_statistics.hpp"
#include "first_pass.hpp"
#include "parallel_blocks.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

namespace tensoracle {
namespace {

// Elements converted per step; the conversion buffers stay in L1.
constexpr std::size_t buffer_elements = 1024;
// Lanes of independent plain sums inside one buffer, each covering at most 256 terms.
constexpr std::size_t lanes = detail::first_pass_lanes;
// Sums of squares below this may have lost bits to underflow, so they are recomputed scaled.
constexpr double smallest_safe_sum = 0x1p-900;

// Neumaier's compensated sum: the running error is kept and added back at the end.
struct Compensated {
    double sum = 0.0;
    double compensation = 0.0;

    void add(double value) noexcept {
        double const total = sum + value;
        if (std::abs(sum) >= std::abs(value)) {
            compensation += (sum - total) + value;
        } else {
            compensation += (value - total) + sum;
        }
        sum = total;
    }
    void add(Compensated const& other) noexcept {
        add(other.sum);
        add(other.compensation);
    }
    double value() const noexcept { return sum + compensation; }
};

struct Sums {
    Compensated difference; // sum of d * d
    Compensated reference;  // sum of r * r
    Compensated candidate;  // sum of c * c
    Compensated product;    // sum of c * r

    void add(Sums const& other) noexcept {
        difference.add(other.difference);
        reference.add(other.reference);
        candidate.add(other.candidate);
        product.add(other.product);
    }
};

struct FloatPartial {
    std::uint64_t candidate_nonfinite = 0;
    std::uint64_t reference_nonfinite = 0;
    std::uint64_t outside = 0;
    double max_abs_error = 0.0;
    double max_candidate = 0.0;
    double max_reference = 0.0;
    Sums sums;
    Compensated abs_error;
};

// Power-of-two exponents applied to candidate, reference and difference: exact except for
// results below the normal range. ldexp per element, since 2^-exponent itself may not be a
// double when the maximum is subnormal.
struct Scales {
    int candidate = 0;
    int reference = 0;
    int difference = 0;
    // The difference is computed before scaling (the usual case: it is then the same rounded
    // value as in the first pass), or, when that overflows, from the scaled inputs.
    bool scale_inputs_of_difference = false;
};

// The lanes' sum in one fixed order, which every pass uses.
template <class Values>
double lane_sum(Values const& values) noexcept {
    static_assert(lanes == 4);
    return (values[0] + values[1]) + (values[2] + values[3]);
}

// Adds the sums of squares and products of one buffer into `sums`.
void accumulate_sums(double const* c, double const* r, std::size_t n, Scales const& scales,
                     Sums& sums) noexcept {
    std::array<double, lanes> dd{}, rr{}, cc{}, cr{};
    for (std::size_t i = 0; i < n; ++i) {
        std::size_t const lane = i % lanes;
        double const cs = std::ldexp(c[i], -scales.candidate);
        double const rs = std::ldexp(r[i], -scales.reference);
        double const d =
            scales.scale_inputs_of_difference
                ? std::ldexp(c[i], -scales.difference) - std::ldexp(r[i], -scales.difference)
                : std::ldexp(c[i] - r[i], -scales.difference);
        dd[lane] += d * d;
        rr[lane] += rs * rs;
        cc[lane] += cs * cs;
        cr[lane] += cs * rs;
    }
    sums.difference.add(lane_sum(dd));
    sums.reference.add(lane_sum(rr));
    sums.candidate.add(lane_sum(cc));
    sums.product.add(lane_sum(cr));
}

// Per-lane running state of the first pass (detail::FirstPassLanes); independent lanes keep the
// additions of neighbouring elements out of one dependency chain. A count kept in double is
// exact far beyond one buffer, and vectorizes with the rest.
using LaneState = detail::FirstPassLanes;

// Non-finite values are not counted in the hot loop: any of them makes a sum of squares
// non-finite, and only then is the buffer counted (see count_nonfinite).
template <bool WithTolerance>
inline void step(double cv, double rv, Tolerance const& tolerance, LaneState& s,
                 std::size_t k) noexcept {
    double const d = cv - rv;
    double const ad = std::abs(d);
    s.max_ad[k] = ad > s.max_ad[k] ? ad : s.max_ad[k];
    s.max_c[k] = std::abs(cv) > s.max_c[k] ? std::abs(cv) : s.max_c[k];
    s.max_r[k] = std::abs(rv) > s.max_r[k] ? std::abs(rv) : s.max_r[k];
    s.dd[k] += d * d;
    s.rr[k] += rv * rv;
    s.cc[k] += cv * cv;
    s.cr[k] += cv * rv;
    s.ad[k] += ad;
    if constexpr (WithTolerance) {
        // Branch-free: the outcome is data dependent and would defeat branch prediction.
        bool const inside = ad <= tolerance.atol + tolerance.rtol * std::abs(rv);
        s.outside[k] += 1.0 - static_cast<double>(inside);
    }
}

std::uint64_t count_nonfinite(double const* values, std::size_t n) noexcept {
    std::uint64_t count = 0;
    for (std::size_t i = 0; i < n; ++i) {
        count += std::isfinite(values[i]) ? 0U : 1U;
    }
    return count;
}

template <bool WithTolerance>
void accumulate_lanes(double const* c, double const* r, std::size_t n, Tolerance const& tolerance,
                      LaneState& s) noexcept {
    std::size_t i = 0;
    for (; i + lanes <= n; i += lanes) {
        for (std::size_t k = 0; k < lanes; ++k) {
            step<WithTolerance>(c[i + k], r[i + k], tolerance, s, k);
        }
    }
    for (std::size_t k = 0; i < n; ++i, ++k) {
        step<WithTolerance>(c[i], r[i], tolerance, s, k);
    }
}

template <class Values>
double lane_max(Values const& values, double start) noexcept {
    for (double value : values) {
        start = value > start ? value : start;
    }
    return start;
}

// Folds one buffer's lanes into `partial`; `count` counts the buffer's non-finite values (only
// called when a sum of squares is not finite).
template <typename CountNonfinite>
void fold(LaneState const& s, bool with_abs_errors, CountNonfinite&& count, FloatPartial& partial) {
    if (with_abs_errors) {
        partial.abs_error.add(lane_sum(s.ad));
    }
    double const rr = lane_sum(s.rr);
    double const cc = lane_sum(s.cc);
    if (!std::isfinite(rr) || !std::isfinite(cc)) {
        count(partial);
    }
    partial.outside += static_cast<std::uint64_t>(lane_sum(s.outside));
    partial.max_abs_error = lane_max(s.max_ad, partial.max_abs_error);
    partial.max_candidate = lane_max(s.max_c, partial.max_candidate);
    partial.max_reference = lane_max(s.max_r, partial.max_reference);
    partial.sums.difference.add(lane_sum(s.dd));
    partial.sums.reference.add(rr);
    partial.sums.candidate.add(cc);
    partial.sums.product.add(lane_sum(s.cr));
}

// The fused first pass over one buffer: counts, maxima, tolerance and unscaled sums.
void accumulate(double const* c, double const* r, std::size_t n,
                std::optional<Tolerance> const& tolerance, double* abs_errors,
                FloatPartial& partial) noexcept {
    LaneState s{};
    if (tolerance) {
        accumulate_lanes<true>(c, r, n, *tolerance, s);
    } else {
        accumulate_lanes<false>(c, r, n, Tolerance{}, s);
    }
    if (abs_errors != nullptr) {
        for (std::size_t i = 0; i < n; ++i) {
            abs_errors[i] = std::abs(c[i] - r[i]);
        }
    }
    fold(
        s, abs_errors != nullptr,
        [&](FloatPartial& counted) {
            counted.candidate_nonfinite += count_nonfinite(c, n);
            counted.reference_nonfinite += count_nonfinite(r, n);
        },
        partial);
}

std::string shape_text(std::span<std::int64_t const> shape) {
    std::string text = "(";
    for (std::size_t d = 0; d < shape.size(); ++d) {
        text += std::to_string(shape[d]);
        text += (shape.size() == 1 || d + 1 < shape.size()) ? "," : "";
        text += d + 1 < shape.size() ? " " : "";
    }
    return text + ")";
}

// Checks one shape, one kind and at least one element; returns the element count.
std::uint64_t validate_pair(ArrayView const& candidate, ArrayView const& reference) {
    std::uint64_t const count = checked_element_count(candidate, "candidate");
    checked_element_count(reference, "reference");
    if (!std::equal(candidate.shape.begin(), candidate.shape.end(), reference.shape.begin(),
                    reference.shape.end())) {
        throw InvalidArgument("candidate shape " + shape_text(candidate.shape) +
                              " differs from reference shape " + shape_text(reference.shape));
    }
    ElementKind const candidate_kind = element_kind(candidate.type);
    ElementKind const reference_kind = element_kind(reference.type);
    if (candidate_kind != reference_kind) {
        throw InvalidArgument(
            "candidate dtype " + std::string{element_type_name(candidate.type)} + " (" +
            std::string{element_kind_name(candidate_kind)} + ") and reference dtype " +
            std::string{element_type_name(reference.type)} + " (" +
            std::string{element_kind_name(reference_kind)} + ") are different kinds");
    }
    if (count == 0) {
        throw InvalidArgument("candidate and reference are empty (shape " +
                              shape_text(candidate.shape) + "); at least one element is needed");
    }
    return count;
}

void validate_tolerance(Tolerance const& tolerance) {
    for (auto const& [name, value] :
         {std::pair{"atol", tolerance.atol}, std::pair{"rtol", tolerance.rtol}}) {
        if (!std::isfinite(value) || value < 0.0) {
            throw InvalidArgument(std::string{name} + " must be finite and >= 0, got " +
                                  std::to_string(value));
        }
    }
}

// Reads elements [first, first + n) of both arrays as doubles, buffer_elements at a time, and
// hands each chunk to consume(candidate, reference, count, offset of the chunk from first).
template <typename Consume>
void for_each_chunk(ArrayView const& candidate, ArrayView const& reference, std::uint64_t first,
                    std::size_t n, Consume&& consume) {
    std::array<double, buffer_elements> c{};
    std::array<double, buffer_elements> r{};
    for (std::size_t done = 0; done < n; done += buffer_elements) {
        std::size_t const step = std::min(buffer_elements, n - done);
        load_doubles(candidate, first + done, step, c.data());
        load_doubles(reference, first + done, step, r.data());
        consume(c.data(), r.data(), step, done);
    }
}

} // namespace

FloatComparison compare_floating(ArrayView const& candidate, ArrayView const& reference,
                                 CompareOptions const& options) {
    std::uint64_t const count = validate_pair(candidate, reference);
    if (element_kind(candidate.type) != ElementKind::floating) {
        throw InvalidArgument("candidate dtype " + std::string{element_type_name(candidate.type)} +
                              " is not floating point; count mismatches instead");
    }
    if (options.tolerance) {
        validate_tolerance(*options.tolerance);
    }
    if (options.statistics && options.histogram_bins == 0) {
        throw InvalidArgument("histogram_bins must be at least 1, got 0");
    }

    std::vector<double> abs_errors;
    if (options.statistics) {
        abs_errors.resize(static_cast<std::size_t>(count));
    }
    double* const abs_output = options.statistics ? abs_errors.data() : nullptr;
    // Contiguous arrays of float64, float32, float16 and bfloat16 run a vector kernel where the
    // CPU has one, with the portable pass's results bit for bit.
    detail::FirstPassKernel const kernel =
        is_contiguous(candidate) && is_contiguous(reference)
            ? detail::first_pass_kernel(candidate.type, reference.type).kernel
            : nullptr;
    std::size_t const candidate_size = element_size(candidate.type);
    std::size_t const reference_size = element_size(reference.type);
    auto const partials = detail::run_blocks<FloatPartial>(
        count, options.threads, [&](std::uint64_t first, std::size_t n, FloatPartial& partial) {
            if (kernel != nullptr) {
                for (std::size_t done = 0; done < n; done += buffer_elements) {
                    std::size_t const step = std::min(buffer_elements, n - done);
                    std::uint64_t const at = first + done;
                    double* const out = abs_output == nullptr ? nullptr : abs_output + at;
                    LaneState s{};
                    kernel(candidate.data + at * candidate_size,
                           reference.data + at * reference_size, step,
                           options.tolerance.has_value(),
                           options.tolerance ? options.tolerance->atol : 0.0,
                           options.tolerance ? options.tolerance->rtol : 0.0, out, &s);
                    fold(
                        s, out != nullptr,
                        [&](FloatPartial& counted) {
                            std::array<double, buffer_elements> values{};
                            load_doubles(candidate, at, step, values.data());
                            counted.candidate_nonfinite += count_nonfinite(values.data(), step);
                            load_doubles(reference, at, step, values.data());
                            counted.reference_nonfinite += count_nonfinite(values.data(), step);
                        },
                        partial);
                }
                return;
            }
            for_each_chunk(
                candidate, reference, first, n,
                [&](double const* c, double const* r, std::size_t step, std::size_t done) {
                    double* const out = abs_output == nullptr ? nullptr : abs_output + first + done;
                    accumulate(c, r, step, options.tolerance, out, partial);
                });
        });

    FloatPartial total;
    for (FloatPartial const& partial : partials) {
        total.candidate_nonfinite += partial.candidate_nonfinite;
        total.reference_nonfinite += partial.reference_nonfinite;
        total.outside += partial.outside;
        total.max_abs_error = std::max(total.max_abs_error, partial.max_abs_error);
        total.max_candidate = std::max(total.max_candidate, partial.max_candidate);
        total.max_reference = std::max(total.max_reference, partial.max_reference);
        total.sums.add(partial.sums);
        total.abs_error.add(partial.abs_error);
    }

    FloatComparison result;
    result.element_count = count;
    result.candidate_nonfinite_count = total.candidate_nonfinite;
    result.reference_nonfinite_count = total.reference_nonfinite;
    if (total.candidate_nonfinite != 0 || total.reference_nonfinite != 0) {
        return result;
    }
    result.max_abs_error = total.max_abs_error;
    if (options.tolerance) {
        result.outside_tolerance_count = total.outside;
    }

    double dd = total.sums.difference.value();
    double rr = total.sums.reference.value();
    double cc = total.sums.candidate.value();
    double cr = total.sums.product.value();
    auto const unsafe = [](double sum, double maximum) {
        return !std::isfinite(sum) || (maximum > 0.0 && sum < smallest_safe_sum);
    };
    // Exponents of the scales applied to the difference and the reference (0: unscaled).
    int difference_exponent = 0;
    int reference_exponent = 0;
    if (unsafe(dd, total.max_abs_error) || unsafe(rr, total.max_reference) ||
        unsafe(cc, total.max_candidate)) {
        int const candidate_exponent =
            total.max_candidate > 0.0 ? std::ilogb(total.max_candidate) : 0;
        reference_exponent = total.max_reference > 0.0 ? std::ilogb(total.max_reference) : 0;
        bool const difference_overflows = !std::isfinite(total.max_abs_error);
        if (!difference_overflows) {
            difference_exponent = total.max_abs_error > 0.0 ? std::ilogb(total.max_abs_error) : 0;
        } else {
            // Both sides are nonzero when their difference overflows.
            difference_exponent = std::max(candidate_exponent, reference_exponent);
        }
        Scales const scales{candidate_exponent, reference_exponent, difference_exponent,
                            difference_overflows};
        auto const rescaled = detail::run_blocks<Sums>(
            count, options.threads, [&](std::uint64_t first, std::size_t n, Sums& sums) {
                for_each_chunk(
                    candidate, reference, first, n,
                    [&](double const* c, double const* r, std::size_t step, std::size_t /*done*/) {
                        accumulate_sums(c, r, step, scales, sums);
                    });
            });
        Sums sums;
        for (Sums const& partial : rescaled) {
            sums.add(partial);
        }
        dd = sums.difference.value();
        rr = sums.reference.value();
        cc = sums.candidate.value();
        cr = sums.product.value();
    }

    if (total.max_reference > 0.0) {
        double const ratio = std::sqrt(dd) / std::sqrt(rr);
        result.relative_l2_error = std::ldexp(ratio, difference_exponent - reference_exponent);
    }
    if (total.max_reference > 0.0 && total.max_candidate > 0.0) {
        double const cosine = cr / (std::sqrt(cc) * std::sqrt(rr));
        result.cosine_similarity = std::clamp(cosine, -1.0, 1.0);
    }
    if (options.statistics) {
        result.statistics = detail::describe_errors(
            abs_errors, total.max_abs_error, total.abs_error.value(), options.histogram_bins);
    }
    return result;
}

std::uint64_t count_mismatches(ArrayView const& candidate, ArrayView const& reference,
                               unsigned threads) {
    std::uint64_t const count = validate_pair(candidate, reference);
    ElementKind const kind = element_kind(candidate.type);
    if (kind == ElementKind::floating) {
        throw InvalidArgument("candidate dtype " + std::string{element_type_name(candidate.type)} +
                              " is floating point; compare it with compare_floating");
    }
    auto const partials = detail::run_blocks<std::uint64_t>(
        count, threads, [&](std::uint64_t first, std::size_t n, std::uint64_t& mismatches) {
            if (kind == ElementKind::integer) {
                std::array<IntegerValue, buffer_elements> c{};
                std::array<IntegerValue, buffer_elements> r{};
                for (std::size_t done = 0; done < n; done += buffer_elements) {
                    std::size_t const step = std::min(buffer_elements, n - done);
                    load_integers(candidate, first + done, step, c.data());
                    load_integers(reference, first + done, step, r.data());
                    for (std::size_t i = 0; i < step; ++i) {
                        mismatches += c[i] == r[i] ? 0U : 1U;
                    }
                }
            } else {
                std::array<std::uint8_t, buffer_elements> c{};
                std::array<std::uint8_t, buffer_elements> r{};
                for (std::size_t done = 0; done < n; done += buffer_elements) {
                    std::size_t const step = std::min(buffer_elements, n - done);
                    load_booleans(candidate, first + done, step, c.data());
                    load_booleans(reference, first + done, step, r.data());
                    for (std::size_t i = 0; i < step; ++i) {
                        mismatches += c[i] == r[i] ? 0U : 1U;
                    }
                }
            }
        });
    std::uint64_t total = 0;
    for (std::uint64_t partial : partials) {
        total += partial;
    }
    return total;
}

} // namespace tensoracle
