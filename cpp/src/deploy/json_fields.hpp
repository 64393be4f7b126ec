// The members of one JSON object of a manifest or a trust policy, each read with its type
// checked, and refusals that name the file, the field and the value. Private to the deploy
// library.
#pragma once

#include "tensoracle/errors.hpp"
#include "tensoracle/text/json_excerpt.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

namespace tensoracle::deploy {

using Json = nlohmann::json;

// A value as messages show it: its JSON, cut short when long.
inline std::string shown(Json const& value) {
    return json_excerpt(value);
}

// The members of one JSON object, each read with its type checked; `where` names the object in
// messages: the file for the document (`root`), else the path to it ("deploy.json: entries[0]").
class Fields {
public:
    Fields(Json const& object, std::string where, bool root = false)
        : object_(object), where_(std::move(where)), root_(root) {
        if (!object_.is_object()) {
            throw InvalidArgument(where_ + " is " + shown(object_) + ", expected an object");
        }
    }

    Json const& any(char const* name) const {
        auto const found = object_.find(name);
        if (found == object_.end()) {
            throw InvalidArgument(where_ + " has no member \"" + name + "\"");
        }
        return *found;
    }
    // Refuses a document whose "schema_version" is not `readable`, the version this library
    // reads.
    void schema_version(int readable) const {
        Json const& version = any("schema_version");
        if (!version.is_number_integer() || version.get<std::int64_t>() != readable) {
            throw InvalidArgument(at("schema_version") + " is " + shown(version) +
                                  ": this library reads version " + std::to_string(readable));
        }
    }
    // The member, or nullptr when the object has none.
    Json const* find(char const* name) const {
        auto const found = object_.find(name);
        return found == object_.end() ? nullptr : &*found;
    }
    std::string text(char const* name) const {
        Json const& value = any(name);
        if (!value.is_string()) {
            refuse(name, value, "a string");
        }
        return value.get<std::string>();
    }
    std::optional<std::string> optional_text(char const* name) const {
        Json const& value = any(name);
        if (value.is_null()) {
            return std::nullopt;
        }
        return text(name);
    }
    std::uint64_t count(char const* name) const {
        Json const& value = any(name);
        if (!value.is_number_unsigned() &&
            !(value.is_number_integer() && value.get<std::int64_t>() >= 0)) {
            refuse(name, value, "a whole number >= 0");
        }
        return value.get<std::uint64_t>();
    }
    std::optional<bool> optional_flag(char const* name) const {
        Json const& value = any(name);
        if (value.is_null()) {
            return std::nullopt;
        }
        if (!value.is_boolean()) {
            refuse(name, value, "true, false or null");
        }
        return value.get<bool>();
    }
    std::string at(char const* name) const { return where_ + (root_ ? ": " : ".") + name; }

    [[noreturn]] void refuse(char const* name, Json const& value, char const* expected) const {
        throw InvalidArgument(at(name) + " is " + shown(value) + ", expected " + expected);
    }

private:
    Json const& object_;
    std::string where_;
    bool root_;
};

} // namespace tensoracle::deploy
