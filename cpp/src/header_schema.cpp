// Type checks of the known members of a saved header (see header_schema.hpp).
#include "tensoracle/header_schema.hpp"

#include <functional>
#include <initializer_list>
#include <utility>

namespace tensoracle {
namespace {

using Json = nlohmann::json;

// A check returns what it expected when `value` does not fit, else std::nullopt.
using Check = std::function<std::optional<std::string>(Json const& value, std::string const& at,
                                                       std::string& where)>;

// Reports "<at> is a JSON <type>, expected <expected>" through `where`.
std::optional<std::string> refuse(Json const& value, std::string const& at, std::string& where,
                                  std::string expected) {
    where =
        at + " is a JSON " + std::string(value.type_name()) + ", expected " + std::move(expected);
    return where;
}

Check string() {
    return [](Json const& value, std::string const& at, std::string& where) {
        return value.is_string() ? std::nullopt : refuse(value, at, where, "a string");
    };
}

Check non_empty_string() {
    return [](Json const& value, std::string const& at, std::string& where) {
        if (value.is_string() && !value.get_ref<std::string const&>().empty()) {
            return std::optional<std::string>{};
        }
        return refuse(value, at, where, "a non-empty string");
    };
}

Check integer() {
    return [](Json const& value, std::string const& at, std::string& where) {
        return value.is_number_integer() ? std::nullopt : refuse(value, at, where, "an integer");
    };
}

Check boolean() {
    return [](Json const& value, std::string const& at, std::string& where) {
        return value.is_boolean() ? std::nullopt : refuse(value, at, where, "true or false");
    };
}

Check array_of(Check item, std::string const& items) {
    return [item = std::move(item), items](Json const& value, std::string const& at,
                                           std::string& where) -> std::optional<std::string> {
        if (!value.is_array()) {
            return refuse(value, at, where, "an array of " + items);
        }
        for (std::size_t i = 0; i < value.size(); ++i) {
            if (auto found = item(value[i], at + "[" + std::to_string(i) + "]", where)) {
                return found;
            }
        }
        return std::nullopt;
    };
}

Check or_null(Check check, std::string const& expected) {
    return [check = std::move(check), expected](Json const& value, std::string const& at,
                                                std::string& where) -> std::optional<std::string> {
        if (value.is_null()) {
            return std::nullopt;
        }
        if (check(value, at, where)) {
            return refuse(value, at, where, expected + " or null");
        }
        return std::nullopt;
    };
}

struct Member {
    char const* name;
    Check check;
    bool required = false;
};

Check object_of(std::vector<Member> members) {
    return [members = std::move(members)](Json const& value, std::string const& at,
                                          std::string& where) -> std::optional<std::string> {
        if (!value.is_object()) {
            return refuse(value, at, where, "an object");
        }
        for (Member const& member : members) {
            auto const found = value.find(member.name);
            std::string const inner = at + "." + member.name;
            if (found == value.end()) {
                if (member.required) {
                    where = at + " lacks the member \"" + member.name + "\"";
                    return where;
                }
                continue;
            }
            if (auto problem = member.check(*found, inner, where)) {
                return problem;
            }
        }
        return std::nullopt;
    };
}

Check map_of(Check item, std::string const& items) {
    return [item = std::move(item), items](Json const& value, std::string const& at,
                                           std::string& where) -> std::optional<std::string> {
        if (!value.is_object()) {
            return refuse(value, at, where, "an object of " + items);
        }
        for (auto const& [key, member] : value.items()) {
            if (auto found = item(member, at + "[\"" + key + "\"]", where)) {
                return found;
            }
        }
        return std::nullopt;
    };
}

Check dimensions() {
    return array_of(integer(), "integers");
}

Check profile(bool required) {
    return object_of({{"min", dimensions(), required},
                      {"opt", dimensions(), required},
                      {"max", dimensions(), required}});
}

Check conditions_schema() {
    return object_of({
        {"name", non_empty_string()},
        {"graph_version", string()},
        {"backend", string()},
        {"backend_version", string()},
        {"inputs", map_of(profile(true), "input profiles")},
        {"optimization_level", integer()},
        {"tf32", boolean()},
        {"weights", array_of(string(), "strings")},
        {"plugins", array_of(string(), "strings")},
        {"os", string()},
        {"arch", string()},
        {"gpu", or_null(object_of({{"name", string()}}), "an object")},
        {"targets", array_of(string(), "strings")},
    });
}

Check references_schema() {
    Check const tensor = object_of({
        {"name", string(), true},
        {"mode", string(), true},
        {"dtype", string(), true},
        {"shape", dimensions(), true},
        {"location", string()},
        {"format", string()},
        {"profile", profile(true)},
    });
    Check const difference = object_of({{"key", string(), true}, {"description", string()}});
    return object_of({
        {"workspace_limit", or_null(integer(), "an integer")},
        {"shape_tensor_outputs", array_of(string(), "strings")},
        {"io", object_of({{"tensors", array_of(tensor, "tensor objects"), true}})},
        {"targets", array_of(string(), "strings")},
        {"tensoracle_version", string()},
        {"built_at", string()},
        {"build_milliseconds", integer()},
        {"rebuild_reason",
         object_of({{"compared_with", string(), true},
                    {"differences", array_of(difference, "difference objects"), true}})},
    });
}

} // namespace

std::optional<std::string> header_schema_violation(Json const& conditions, Json const& references) {
    static Check const kConditions = conditions_schema();
    static Check const kReferences = references_schema();
    std::string where;
    if (kConditions(conditions, "conditions", where) ||
        kReferences(references, "references", where)) {
        return where;
    }
    return std::nullopt;
}

} // namespace tensoracle
