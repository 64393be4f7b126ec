// Parsing untrusted JSON within limits, in two passes. First a byte-level pre-scan (prescan)
// follows the text's structure (brackets, braces, commas, colons, strings skipped honouring their
// escapes) counting depth and values, and refuses at the first byte past a limit, before any value
// is built: a hostile text at the size limit is refused at memory speed, whatever its shape. Then,
// for a text within the limits, the parser (json_parser.hpp: nlohmann's grammar, strings read a
// word at a time) feeds its events to BoundedDomBuilder, which builds the value on a stack of its
// own, counting depth and values again as it goes. Every event costs constant time, so a text is
// parsed in time linear in its size.
//
// Which error a text gets: the pre-scan judges the limits on the structure alone. Where the
// structure itself is broken before a limit is passed (a byte that JSON allows nowhere outside a
// string, a comma or colon out of place, an unmatched bracket, a string that does not end), it
// stops and leaves the text to the parser, which reports the syntax error at its position. What
// lies inside a scalar or a string (a misspelt number or literal, an invalid escape, bytes that
// are not UTF-8) is the parser's alone: a text whose structure passes a limit is refused for the
// limit even where such an error comes earlier. A text within the limits is accepted or refused
// exactly as the parser alone would, and so as nlohmann::json::parse would, a NUL byte between
// tokens aside (json_parser.hpp).
//
// nlohmann::json::parse with a parser callback (nlohmann 3.11's json_sax_dom_callback_parser) is
// not used: it is quadratic (after every object ends, end_object scans the enclosing array or
// object from its start for a discarded value to erase, so a 768 KB header of 256,000 empty
// objects took 20 s to read), and nlohmann's lexer copies a string byte by byte.
#include "text/bounded_json.hpp"

#include "json_parser.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace tensoracle {
namespace {

using json = nlohmann::json;

[[noreturn]] void too_deep(std::size_t max_depth) {
    throw JsonLimitError("the JSON text nests deeper than the limit of " +
                         std::to_string(max_depth) + " levels (level " +
                         std::to_string(max_depth + 1) + " opens)");
}

[[noreturn]] void too_many_values(std::size_t max_values) {
    throw JsonLimitError("the JSON text holds more values than the limit of " +
                         std::to_string(max_values));
}

// What a byte is to the pre-scan outside strings. `scalar` is every byte a number or one of the
// literals true, false and null is spelt with; `other` is a byte JSON allows only inside strings.
enum class ByteClass : std::uint8_t {
    other,
    space,
    scalar,
    quote,
    open_array,
    open_object,
    close_array,
    close_object,
    comma,
    colon
};

constexpr std::array<ByteClass, 256> kByteClasses = [] {
    std::array<ByteClass, 256> classes{};
    classes.fill(ByteClass::other);
    for (char const c : std::string_view(" \t\n\r")) {
        classes[static_cast<unsigned char>(c)] = ByteClass::space;
    }
    for (char const c : std::string_view("0123456789+-.eEtrufalsn")) {
        classes[static_cast<unsigned char>(c)] = ByteClass::scalar;
    }
    classes['"'] = ByteClass::quote;
    classes['['] = ByteClass::open_array;
    classes['{'] = ByteClass::open_object;
    classes[']'] = ByteClass::close_array;
    classes['}'] = ByteClass::close_object;
    classes[','] = ByteClass::comma;
    classes[':'] = ByteClass::colon;
    return classes;
}();

// Where the string whose opening quote precedes `from` ends (just past its closing quote), or
// std::string_view::npos when the text ends first. A backslash escapes the byte after it.
std::size_t past_string(std::string_view text, std::size_t from) {
    char const* const begin = text.data();
    char const* const end = begin + text.size();
    char const* at = begin + from;
    while (at < end) {
        auto const* quote =
            static_cast<char const*>(std::memchr(at, '"', static_cast<std::size_t>(end - at)));
        if (quote == nullptr) {
            return std::string_view::npos;
        }
        auto const* backslash =
            static_cast<char const*>(std::memchr(at, '\\', static_cast<std::size_t>(quote - at)));
        if (backslash == nullptr) {
            return static_cast<std::size_t>(quote + 1 - begin);
        }
        at = backslash + 2; // the escaped byte, a quote or a backslash included, is skipped
    }
    return std::string_view::npos;
}

// The pre-scan: follows the structure of `text`, counting the containers open and the values
// begun (each counted at its first byte, as BoundedDomBuilder counts them), and throws
// JsonLimitError at the first byte past limits.max_depth or limits.max_values. Returns at the
// text's end, or at the first byte the structure does not allow there: the parser then reports
// that byte or one before it, since up to it both count alike.
void prescan(std::string_view text, JsonLimits const& limits) {
    // What the next byte that is not white space may be.
    enum class Expect : std::uint8_t {
        value,       // a value: at the start, after a colon, after a comma in an array
        first_value, // a value or the end of the array just opened
        key,         // a member's name: after a comma in an object
        first_key,   // a member's name or the end of the object just opened
        colon,       // after a member's name
        more,        // a value has ended: a comma or the end of its container
        scalar       // inside a number or a literal
    };
    // The open containers, innermost last: 1 for an object, 0 for an array.
    std::vector<std::uint8_t> objects;
    std::size_t values = 0;
    std::size_t at = 0;
    if (text.starts_with("\xEF\xBB\xBF")) {
        at = 3; // a byte order mark, which the parser skips
    }
    Expect expect = Expect::value;
    std::size_t const size = text.size();
    while (at < size) {
        ByteClass const byte = kByteClasses[static_cast<unsigned char>(text[at])];
        if (byte == ByteClass::space) {
            if (expect == Expect::scalar) {
                expect = Expect::more;
            }
            ++at;
            continue;
        }
        switch (expect) {
        case Expect::scalar:
            if (byte == ByteClass::scalar) {
                ++at;
                continue;
            }
            expect = Expect::more;
            [[fallthrough]];
        case Expect::more:
            if (objects.empty()) {
                return; // text after the value
            }
            if (byte == ByteClass::comma) {
                expect = objects.back() != 0 ? Expect::key : Expect::value;
            } else if (byte ==
                       (objects.back() != 0 ? ByteClass::close_object : ByteClass::close_array)) {
                objects.pop_back();
            } else {
                return;
            }
            ++at;
            continue;
        case Expect::first_key:
            if (byte == ByteClass::close_object) {
                objects.pop_back();
                expect = Expect::more;
                ++at;
                continue;
            }
            [[fallthrough]];
        case Expect::key:
            if (byte != ByteClass::quote) {
                return;
            }
            at = past_string(text, at + 1);
            if (at == std::string_view::npos) {
                return;
            }
            expect = Expect::colon;
            continue;
        case Expect::colon:
            if (byte != ByteClass::colon) {
                return;
            }
            expect = Expect::value;
            ++at;
            continue;
        case Expect::first_value:
            if (byte == ByteClass::close_array) {
                objects.pop_back();
                expect = Expect::more;
                ++at;
                continue;
            }
            [[fallthrough]];
        case Expect::value:
            break;
        }
        // A value begins here, unless the byte cannot begin one.
        bool const opens = byte == ByteClass::open_array || byte == ByteClass::open_object;
        if (!opens && byte != ByteClass::quote && byte != ByteClass::scalar) {
            return;
        }
        // The depth first, then the count, in the order BoundedDomBuilder checks them.
        if (opens && objects.size() >= limits.max_depth) {
            too_deep(limits.max_depth);
        }
        if (++values > limits.max_values) {
            too_many_values(limits.max_values);
        }
        if (opens) {
            bool const object = byte == ByteClass::open_object;
            objects.push_back(object ? 1 : 0);
            expect = object ? Expect::first_key : Expect::first_value;
            ++at;
        } else if (byte == ByteClass::quote) {
            at = past_string(text, at + 1);
            if (at == std::string_view::npos) {
                return;
            }
            expect = Expect::more;
        } else {
            expect = Expect::scalar;
            ++at;
        }
    }
}

// Builds the DOM from the parser's events, refusing a container opened beyond limits.max_depth
// or a value beyond limits.max_values (JsonLimitError).
class BoundedDomBuilder final : public json_text::Events {
public:
    explicit BoundedDomBuilder(JsonLimits limits) : limits_(limits) {}

    void null() override { place(json(nullptr)); }
    void boolean(bool value) override { place(json(value)); }
    void number_integer(std::int64_t value) override { place(json(value)); }
    void number_unsigned(std::uint64_t value) override { place(json(value)); }
    void number_float(double value) override { place(json(value)); }
    void string(std::string& value) override { place(json(std::move(value))); }

    void start_object() override { open(json::value_t::object); }
    void key(std::string& name) override {
        // A repeated key keeps its last value, as nlohmann::json::parse does.
        member_ = &open_.back()->get_ref<json::object_t&>()[std::move(name)];
    }
    void end_object() override { open_.pop_back(); }
    void start_array() override { open(json::value_t::array); }
    void end_array() override { open_.pop_back(); }

    json take() && { return std::move(root_); }

private:
    // Puts `value` where the parser is (the root, the end of the open array, or the member whose
    // key came last) and returns where it lies.
    json* place(json&& value) {
        if (++values_ > limits_.max_values) {
            too_many_values(limits_.max_values);
        }
        if (open_.empty()) {
            root_ = std::move(value);
            return &root_;
        }
        json& container = *open_.back();
        if (container.is_array()) {
            auto& elements = container.get_ref<json::array_t&>();
            elements.push_back(std::move(value));
            return &elements.back();
        }
        *member_ = std::move(value);
        return member_;
    }

    void open(json::value_t type) {
        // The containers already open around this one, as nlohmann's callback counted them.
        if (open_.size() >= limits_.max_depth) {
            too_deep(limits_.max_depth);
        }
        // Only the innermost open container grows, so the addresses on the stack stay valid.
        open_.push_back(place(json(type)));
    }

    JsonLimits limits_;
    json root_;
    std::vector<json*> open_;
    json* member_ = nullptr;
    std::size_t values_ = 0;
};

} // namespace

JsonSyntaxError::JsonSyntaxError(std::string const& message, std::size_t offset)
    : JsonLimitError(message), offset_(offset) {}

nlohmann::json parse_bounded_json(std::string_view text, JsonLimits limits) {
    if (text.size() > limits.max_bytes) {
        throw JsonLimitError("the JSON text of " + std::to_string(text.size()) +
                             " bytes exceeds the limit of " + std::to_string(limits.max_bytes) +
                             " bytes");
    }
    // Refuses a text past a limit before anything is built. A NUL byte is refused by the parser,
    // where it reads one (the pre-scan leaves it there: outside a string no JSON has it).
    prescan(text, limits);
    BoundedDomBuilder builder(limits);
    // Strict: the value must end the text (white space aside).
    json_text::parse(text, builder);
    return std::move(builder).take();
}

std::size_t json_depth(nlohmann::json const& value) {
    std::size_t deepest = 0;
    std::vector<std::pair<nlohmann::json const*, std::size_t>> pending{{&value, 0}};
    while (!pending.empty()) {
        auto const [item, depth] = pending.back();
        pending.pop_back();
        if (!item->is_structured()) {
            continue;
        }
        std::size_t const inside = depth + 1;
        deepest = std::max(deepest, inside);
        for (auto const& member : *item) {
            pending.emplace_back(&member, inside);
        }
    }
    return deepest;
}

} // namespace tensoracle
