// Type checks of the known members of a saved header (see header_schema.hpp).
#include "cache/header_schema.hpp"

#include "text/json_members.hpp"

#include <string_view>

namespace tensoracle {
namespace {

using Json = nlohmann::json;
using Problem = std::optional<std::string>;

Problem mistyped(Json const& value, JsonPlace const& at, std::string_view expected) {
    return refused_text(at, "is " + shown(value), expected);
}

Problem lacks(JsonPlace const& at, std::string_view name) {
    return missing_text(at.member(name), "");
}

Problem check_string(Json const& value, JsonPlace const& at) {
    return value.is_string() ? Problem{} : mistyped(value, at, "a string");
}

Problem check_integer(Json const& value, JsonPlace const& at) {
    return value.is_number_integer() ? Problem{} : mistyped(value, at, "an integer");
}

// An array whose items are all strings (`strings`) or all integers.
Problem check_array(Json const& value, JsonPlace const& at, bool strings) {
    if (!value.is_array()) {
        return mistyped(value, at, strings ? "an array of strings" : "an array of integers");
    }
    for (std::size_t i = 0; i < value.size(); ++i) {
        Problem found =
            strings ? check_string(value[i], at.index(i)) : check_integer(value[i], at.index(i));
        if (found) {
            return found;
        }
    }
    return {};
}

// Calls `check(member, path)` for the member `name` of `object` when present; when it is absent,
// a problem only if `required`.
template <typename Check>
Problem member(Json const& object, JsonPlace const& at, char const* name, bool required,
               Check const& check) {
    auto const found = object.find(name);
    if (found == object.end()) {
        return required ? lacks(at, name) : Problem{};
    }
    return check(*found, at.member(name));
}

auto const kString = [](Json const& value, JsonPlace const& at) { return check_string(value, at); };
auto const kInteger = [](Json const& value, JsonPlace const& at) {
    return check_integer(value, at);
};
auto const kStrings = [](Json const& value, JsonPlace const& at) {
    return check_array(value, at, true);
};
auto const kIntegers = [](Json const& value, JsonPlace const& at) {
    return check_array(value, at, false);
};

Problem check_profile(Json const& value, JsonPlace const& at) {
    if (!value.is_object()) {
        return mistyped(value, at, "an object");
    }
    for (char const* name : {"min", "opt", "max"}) {
        if (Problem found = member(value, at, name, true, kIntegers)) {
            return found;
        }
    }
    return {};
}

Problem check_conditions(Json const& conditions) {
    JsonPlace const at = JsonPlace("").member("conditions");
    for (char const* name :
         {"graph_version", "backend", "backend_version", "os", "arch", "hardware_compatibility"}) {
        if (Problem found = member(conditions, at, name, false, kString)) {
            return found;
        }
    }
    for (char const* name : {"weights", "plugins", "targets"}) {
        if (Problem found = member(conditions, at, name, false, kStrings)) {
            return found;
        }
    }
    Problem found = member(conditions, at, "name", false, [](Json const& value, auto const& path) {
        bool const ok = value.is_string() && !value.get_ref<std::string const&>().empty();
        return ok ? Problem{} : mistyped(value, path, "a non-empty string");
    });
    if (!found) {
        found = member(conditions, at, "optimization_level", false, kInteger);
    }
    if (!found) {
        found = member(conditions, at, "tf32", false, [](Json const& value, auto const& path) {
            return value.is_boolean() ? Problem{} : mistyped(value, path, "true or false");
        });
    }
    if (!found) {
        found = member(conditions, at, "inputs", false, [](Json const& value, auto const& path) {
            if (!value.is_object()) {
                return mistyped(value, path, "an object of input profiles");
            }
            for (auto const& [name, profile] : value.items()) {
                if (Problem problem = check_profile(profile, path.key(name))) {
                    return problem;
                }
            }
            return Problem{};
        });
    }
    if (!found) {
        found = member(conditions, at, "gpu", false, [](Json const& value, auto const& path) {
            if (value.is_null()) {
                return Problem{};
            }
            if (!value.is_object()) {
                return mistyped(value, path, "an object or null");
            }
            return member(value, path, "name", false, kString);
        });
    }
    return found;
}

Problem check_tensor(Json const& tensor, JsonPlace const& at) {
    if (!tensor.is_object()) {
        return mistyped(tensor, at, "a tensor object");
    }
    for (char const* name : {"name", "mode", "dtype"}) {
        if (Problem found = member(tensor, at, name, true, kString)) {
            return found;
        }
    }
    for (char const* name : {"location", "format"}) {
        if (Problem found = member(tensor, at, name, false, kString)) {
            return found;
        }
    }
    if (Problem found = member(tensor, at, "shape", true, kIntegers)) {
        return found;
    }
    return member(tensor, at, "profile", false,
                  [](Json const& value, auto const& path) { return check_profile(value, path); });
}

Problem check_io(Json const& io, JsonPlace const& at) {
    if (!io.is_object()) {
        return mistyped(io, at, "an object");
    }
    return member(io, at, "tensors", true, [](Json const& value, auto const& path) {
        if (!value.is_array()) {
            return mistyped(value, path, "an array of tensor objects");
        }
        for (std::size_t i = 0; i < value.size(); ++i) {
            if (Problem found = check_tensor(value[i], path.index(i))) {
                return found;
            }
        }
        return Problem{};
    });
}

Problem check_rebuild_reason(Json const& reason, JsonPlace const& at) {
    if (!reason.is_object()) {
        return mistyped(reason, at, "an object");
    }
    if (Problem found = member(reason, at, "compared_with", true, kString)) {
        return found;
    }
    if (Problem found = member(reason, at, "cannot_run_here", false, kString)) {
        return found;
    }
    return member(reason, at, "differences", true, [](Json const& value, auto const& path) {
        if (!value.is_array()) {
            return mistyped(value, path, "an array of difference objects");
        }
        for (std::size_t i = 0; i < value.size(); ++i) {
            JsonPlace const item = path.index(i);
            if (!value[i].is_object()) {
                return mistyped(value[i], item, "a difference object");
            }
            Problem found = member(value[i], item, "key", true, kString);
            if (!found) {
                found = member(value[i], item, "description", false, kString);
            }
            if (found) {
                return found;
            }
        }
        return Problem{};
    });
}

Problem check_references(Json const& references) {
    JsonPlace const at = JsonPlace("").member("references");
    for (char const* name : {"tensoracle_version", "built_at"}) {
        if (Problem found = member(references, at, name, false, kString)) {
            return found;
        }
    }
    for (char const* name : {"shape_tensor_outputs", "targets"}) {
        if (Problem found = member(references, at, name, false, kStrings)) {
            return found;
        }
    }
    Problem found = member(references, at, "build_milliseconds", false, kInteger);
    if (!found) {
        found = member(references, at, "workspace_limit", false,
                       [](Json const& value, auto const& path) {
                           return value.is_null() || value.is_number_integer()
                                      ? Problem{}
                                      : mistyped(value, path, "an integer or null");
                       });
    }
    if (!found) {
        found = member(references, at, "io", false,
                       [](Json const& value, auto const& path) { return check_io(value, path); });
    }
    if (!found) {
        found = member(
            references, at, "rebuild_reason", false,
            [](Json const& value, auto const& path) { return check_rebuild_reason(value, path); });
    }
    return found;
}

} // namespace

std::optional<std::string> header_schema_violation(Json const& conditions, Json const& references) {
    if (!conditions.is_object()) {
        return mistyped(conditions, JsonPlace("").member("conditions"), "an object");
    }
    if (!references.is_object()) {
        return mistyped(references, JsonPlace("").member("references"), "an object");
    }
    if (Problem found = check_conditions(conditions)) {
        return found;
    }
    return check_references(references);
}

} // namespace tensoracle
