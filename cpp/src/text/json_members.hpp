// The one reader of typed JSON members: the members of one object of a document (a manifest, a
// bundle manifest, a trust policy, a saved header's IO or conditions), each read with its type
// checked. A refusal names the document (the Refusal's subject), the member's path in one syntax
// (`entries[0].io.tensors[1].shape`, the Refusal's field), the value found and what was expected;
// the caller chooses the exception class (the template parameter). One wording for every reader:
// "<place> is missing[, expected <expected>]" and "<place> is <value>, expected <expected>", the
// value cut at kJsonExcerptCharacters.
// Private to the project's sources.
#pragma once

#include "tensoracle/errors.hpp"
#include "text/message_text.hpp"

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tensoracle {

// A place in a JSON document: the document (a file name, or what the value is) and the path of
// members and indexes inside it. Kept in two syntaxes: the field (`entries[0].io`, the Refusal's)
// and the JSON pointer (`/entries/0/io`).
class JsonPlace {
public:
    // The document as a whole. Implicit: a text names a document.
    JsonPlace(std::string subject) // NOLINT(google-explicit-constructor)
        : subject_(std::move(subject)) {}
    // A value that `where` already names with its path ("deploy.json: entries[0].io"): its
    // members are written after it with '.', as callers that pass such a text have written them.
    static JsonPlace within(std::string where) {
        JsonPlace place(std::move(where));
        place.within_ = true;
        return place;
    }

    JsonPlace member(std::string_view name) const {
        JsonPlace inner = *this;
        if (!inner.field_.empty()) {
            inner.field_ += '.';
        }
        inner.field_ += name;
        inner.pointer_ += '/';
        inner.pointer_ += name;
        return inner;
    }
    JsonPlace index(std::size_t position) const {
        JsonPlace inner = *this;
        inner.field_ += '[' + std::to_string(position) + ']';
        inner.pointer_ += '/' + std::to_string(position);
        return inner;
    }
    // The member `name` of an object whose members are names of the document's own (tensor
    // names, key ids): `inputs["x"]`, which a name with dots in it cannot be mistaken in.
    JsonPlace key(std::string_view name) const {
        JsonPlace inner = *this;
        inner.field_ += "[\"";
        inner.field_ += name;
        inner.field_ += "\"]";
        inner.pointer_ += '/';
        inner.pointer_ += name;
        return inner;
    }
    std::string const& subject() const noexcept { return subject_; }
    // `entries[0].io.tensors[1].shape`; empty for the document as a whole.
    std::string const& field() const noexcept { return field_; }
    // `/entries/0/io/tensors/1/shape`; empty for the document as a whole.
    std::string const& pointer() const noexcept { return pointer_; }
    // "<subject>: <field>", the subject alone for the document as a whole, the field alone where
    // the subject is unnamed.
    std::string text() const {
        if (subject_.empty() || field_.empty()) {
            return subject_ + field_;
        }
        bool const indexed = field_.front() == '[';
        return subject_ + (within_ ? (indexed ? "" : ".") : ": ") + field_;
    }

private:
    std::string subject_;
    std::string field_;
    std::string pointer_;
    bool within_ = false;
};

// The message of a member that is absent: "deploy.json: entries[0].plan is missing", followed by
// ", expected <expected>" where the reader says what it expected.
inline std::string missing_text(JsonPlace const& at, std::string_view expected) {
    return refusal_text(at.text(), "is missing", expected);
}

// The message of a value that is not what was expected, `found` saying what is there ("is 3",
// "holds 9 arguments"): "deploy.json: entries[0].plan.size is "9", expected a whole number >= 0".
inline std::string refused_text(JsonPlace const& at, std::string_view found,
                                std::string_view expected) {
    return refusal_text(at.text(), found, expected);
}

// Refuses the value at `at`, found there as `found` ("is 3", "holds 9 arguments"), which shows
// `observed`: throws ErrorType with its message and the Refusal.
template <typename ErrorType>
[[noreturn]] void refuse_json_found(JsonPlace const& at, std::string_view found,
                                    std::string observed, std::string_view expected) {
    throw ErrorType(refused_text(at, found, expected), Refusal{.subject = at.subject(),
                                                               .field = at.field(),
                                                               .observed = std::move(observed),
                                                               .expected = std::string(expected)});
}

// Refuses `value`, found at `at`, for not being `expected`.
template <typename ErrorType>
[[noreturn]] void refuse_json(JsonPlace const& at, nlohmann::json const& value,
                              std::string_view expected) {
    std::string observed = shown(value);
    std::string const found = "is " + observed;
    refuse_json_found<ErrorType>(at, found, std::move(observed), expected);
}

// The members of one JSON object, each read with its type checked; a refusal throws ErrorType
// (constructed from a message and a Refusal) unless the call names another class.
template <typename ErrorType>
class JsonMembers {
public:
    using Json = nlohmann::json;

    JsonMembers(Json const& object, JsonPlace place) : object_(object), place_(std::move(place)) {}

    JsonPlace const& place() const noexcept { return place_; }
    JsonPlace place(std::string_view name) const { return place_.member(name); }
    // The member's place as messages write it ("deploy.json: entries[0].plan").
    std::string at(std::string_view name) const { return place(name).text(); }
    Json const& object() const noexcept { return object_; }

    // The member, or nullptr when the object has none (or is not an object).
    Json const* find(std::string_view name) const {
        if (!object_.is_object()) {
            return nullptr;
        }
        auto const found = object_.find(name);
        return found == object_.end() ? nullptr : &*found;
    }
    // The member, refused when absent; `expected` says what it should have been.
    Json const& any(std::string_view name, std::string_view expected = "") const {
        Json const* found = find(name);
        if (found == nullptr) {
            missing(name, expected);
        }
        return *found;
    }
    std::string text(std::string_view name, std::string_view expected = "a string") const {
        Json const& value = any(name, expected);
        if (!value.is_string()) {
            refuse(name, value, expected);
        }
        return value.get<std::string>();
    }
    // A string, or nothing where the member is null.
    std::optional<std::string> optional_text(std::string_view name) const {
        Json const& value = any(name, "a string or null");
        if (value.is_null()) {
            return std::nullopt;
        }
        return text(name);
    }
    // A whole number >= `minimum` (never a boolean or a fraction).
    std::uint64_t count(std::string_view name, std::string_view expected = "a whole number >= 0",
                        std::uint64_t minimum = 0) const {
        Json const& value = any(name, expected);
        bool const whole = value.is_number_unsigned() ||
                           (value.is_number_integer() && value.get<std::int64_t>() >= 0);
        if (!whole || value.get<std::uint64_t>() < minimum) {
            refuse(name, value, expected);
        }
        return value.get<std::uint64_t>();
    }
    // true or false, or nothing where the member is null.
    std::optional<bool> optional_flag(std::string_view name) const {
        Json const& value = any(name, "true, false or null");
        if (value.is_null()) {
            return std::nullopt;
        }
        if (!value.is_boolean()) {
            refuse(name, value, "true, false or null");
        }
        return value.get<bool>();
    }

    // Refuses the member `name`, whose value is `value`.
    template <typename As = ErrorType>
    [[noreturn]] void refuse(std::string_view name, Json const& value,
                             std::string_view expected) const {
        refuse_at<As>(place(name), value, expected);
    }
    // Refuses the value at `at` (this object, or a place inside it).
    template <typename As = ErrorType>
    [[noreturn]] void refuse_at(JsonPlace const& at, Json const& value,
                                std::string_view expected) const {
        refuse_json<As>(at, value, expected);
    }
    // Refuses what is at `at`, found there as `found` ("holds 9 arguments"), which shows
    // `observed`.
    template <typename As = ErrorType>
    [[noreturn]] void refuse_found(JsonPlace const& at, std::string_view found,
                                   std::string observed, std::string_view expected) const {
        refuse_json_found<As>(at, found, std::move(observed), expected);
    }
    // Refuses the object for lacking the member `name`.
    template <typename As = ErrorType>
    [[noreturn]] void missing(std::string_view name, std::string_view expected) const {
        JsonPlace const at = place(name);
        throw As(missing_text(at, expected), Refusal{.subject = at.subject(),
                                                     .field = at.field(),
                                                     .observed = "missing",
                                                     .expected = std::string(expected)});
    }

private:
    Json const& object_;
    JsonPlace place_;
};

} // namespace tensoracle
