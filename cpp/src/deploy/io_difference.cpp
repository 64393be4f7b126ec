// The one IO comparison (see io_difference.hpp).
#include "deploy/io_difference.hpp"

#include "text/message_text.hpp"

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

namespace tensoracle::deploy {
namespace {

using Tensors = std::vector<TensorDescription>;

std::string named(std::string const& name) {
    return "'" + name + "'";
}

std::string names_text(Tensors const& tensors) {
    std::vector<std::string> parts;
    parts.reserve(tensors.size());
    for (auto const& tensor : tensors) {
        parts.push_back(named(tensor.name));
    }
    std::string text = "[";
    text += joined(parts, ", ");
    text += ']';
    return text;
}

bool dynamic(Shape const& shape) {
    return std::find(shape.begin(), shape.end(), -1) != shape.end();
}

TensorDescription const* find(Tensors const& tensors, std::string const& name) {
    auto const found =
        std::find_if(tensors.begin(), tensors.end(),
                     [&](TensorDescription const& tensor) { return tensor.name == name; });
    return found == tensors.end() ? nullptr : &*found;
}

std::string mode(TensorDescription const& tensor) {
    return tensor.is_input ? "INPUT" : "OUTPUT";
}

std::optional<IoDifference> field_difference(TensorDescription const& seen,
                                             TensorDescription const& wanted,
                                             IoComparison const& rules) {
    bool const placement = !rules.placement_where_stated;
    std::array<std::pair<char const*, std::pair<std::string, std::string>>, 5> const fields{{
        {"mode", {mode(seen), mode(wanted)}},
        {"dtype", {seen.dtype, wanted.dtype}},
        {"shape", {shape_text(seen.shape), shape_text(wanted.shape)}},
        {"location", {seen.location, wanted.location}},
        {"format", {seen.format, wanted.format}},
    }};
    for (auto const& [field, values] : fields) {
        bool const stated = placement || std::string_view(field) == "mode" ||
                            std::string_view(field) == "dtype" ||
                            std::string_view(field) == "shape" || !values.second.empty();
        if (stated && values.first != values.second) {
            return IoDifference{wanted.name, field, values.first, values.second};
        }
    }
    return std::nullopt;
}

bool same_profile(ShapeProfile const& one, ShapeProfile const& other) {
    return one.min == other.min && one.opt == other.opt && one.max == other.max;
}

std::optional<IoDifference> profile_difference(TensorDescription const& seen,
                                               TensorDescription const& wanted) {
    if (!wanted.is_input || !wanted.profile ||
        (seen.profile && same_profile(*seen.profile, *wanted.profile))) {
        return std::nullopt;
    }
    // A fixed input's profile is its shape: TensorRT reports one only for dynamic inputs.
    bool const fixed_and_equal =
        !seen.profile && !dynamic(seen.shape) && wanted.profile->min == seen.shape &&
        wanted.profile->opt == seen.shape && wanted.profile->max == seen.shape;
    if (fixed_and_equal) {
        return std::nullopt;
    }
    return IoDifference{wanted.name, "profile", profile_text(seen.profile),
                        profile_text(wanted.profile)};
}

} // namespace

std::string profile_text(std::optional<ShapeProfile> const& profile) {
    if (!profile) {
        return "none";
    }
    return "min " + shape_text(profile->min) + " opt " + shape_text(profile->opt) + " max " +
           shape_text(profile->max);
}

std::optional<IoDifference> first_io_difference(Tensors const& observed, Tensors const& expected,
                                                IoComparison const& rules) {
    for (auto const& wanted : expected) {
        if (find(observed, wanted.name) == nullptr) {
            return IoDifference{wanted.name, "name",
                                "no such tensor (engine has " + names_text(observed) + ")",
                                named(wanted.name)};
        }
    }
    for (auto const& seen : observed) {
        if (find(expected, seen.name) == nullptr) {
            return IoDifference{seen.name, "name", named(seen.name),
                                "only the manifest's tensors " + names_text(expected)};
        }
    }
    for (auto const& wanted : expected) {
        TensorDescription const& seen = *find(observed, wanted.name);
        if (auto difference = field_difference(seen, wanted, rules)) {
            return difference;
        }
        if (!rules.profiles_last) {
            if (auto difference = profile_difference(seen, wanted)) {
                return difference;
            }
        }
    }
    if (rules.profiles_last) {
        for (auto const& wanted : expected) {
            if (auto difference = profile_difference(*find(observed, wanted.name), wanted)) {
                return difference;
            }
        }
    }
    return std::nullopt;
}

std::string io_field(IoDifference const& difference,
                     std::vector<TensorDescription> const& expected) {
    auto const recorded =
        std::find_if(expected.begin(), expected.end(), [&](TensorDescription const& tensor) {
            return tensor.name == difference.tensor;
        });
    std::string field = "io.tensors";
    if (recorded != expected.end()) {
        field += '[';
        field += std::to_string(recorded - expected.begin());
        field += "].";
        field += difference.field;
    }
    return field;
}

} // namespace tensoracle::deploy
