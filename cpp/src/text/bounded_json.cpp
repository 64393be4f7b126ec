// Parsing untrusted JSON within limits: nlohmann::json's lexer and parser feed the SAX events to
// BoundedDomBuilder, which builds the value on a stack of its own, counting depth and values as
// it goes. Every event costs constant time, so a text is parsed in time linear in its size.
//
// It replaces nlohmann::json::parse with a parser callback (nlohmann 3.11's
// json_sax_dom_callback_parser), which is quadratic: after every object ends, end_object scans
// the enclosing array or object from its start for a discarded value to erase, so an array of n
// objects costs n²/2 steps (a 768 KB header of 256,000 empty objects took 20 s to read).
#include "tensoracle/text/bounded_json.hpp"

#include "tensoracle/text/utf8_text.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace tensoracle {
namespace {

using json = nlohmann::json;

// Builds the DOM from nlohmann's SAX events, refusing a container opened beyond
// limits.max_depth or a value beyond limits.max_values (JsonLimitError), and a text that is not
// JSON (JsonSyntaxError, or JsonLimitError for a number beyond a double).
class BoundedDomBuilder final : public nlohmann::json_sax<json> {
public:
    explicit BoundedDomBuilder(JsonLimits limits) : limits_(limits) {}

    bool null() override { return add(json(nullptr)); }
    bool boolean(bool value) override { return add(json(value)); }
    bool number_integer(number_integer_t value) override { return add(json(value)); }
    bool number_unsigned(number_unsigned_t value) override { return add(json(value)); }
    bool number_float(number_float_t value, string_t const& /*spelling*/) override {
        return add(json(value));
    }
    bool string(string_t& value) override { return add(json(std::move(value))); }
    // Only the binary formats (CBOR, MessagePack...) have binary values; JSON text never does.
    bool binary(binary_t& value) override { return add(json::binary(std::move(value))); }

    bool start_object(std::size_t /*elements*/) override {
        open(json::value_t::object);
        return true;
    }
    bool key(string_t& name) override {
        // A repeated key keeps its last value, as nlohmann::json::parse does.
        member_ = &open_.back()->get_ref<json::object_t&>()[std::move(name)];
        return true;
    }
    bool end_object() override {
        open_.pop_back();
        return true;
    }
    bool start_array(std::size_t /*elements*/) override {
        open(json::value_t::array);
        return true;
    }
    bool end_array() override {
        open_.pop_back();
        return true;
    }

    // `position` counts the bytes read, the one the parser stopped at included.
    bool parse_error(std::size_t position, std::string const& /*last_token*/,
                     nlohmann::detail::exception const& error) override {
        // The parser quotes the bytes it last read, which may be anything: keep the message text.
        std::string const message = escape_invalid_utf8(error.what());
        if (dynamic_cast<json::parse_error const*>(&error) == nullptr) {
            throw JsonLimitError(message); // a number beyond a double
        }
        throw JsonSyntaxError(message, position == 0 ? 0 : position - 1);
    }

    json take() && { return std::move(root_); }

private:
    bool add(json&& value) {
        place(std::move(value));
        return true;
    }

    // Puts `value` where the parser is (the root, the end of the open array, or the member whose
    // key came last) and returns where it lies.
    json* place(json&& value) {
        if (++values_ > limits_.max_values) {
            throw JsonLimitError("the JSON text holds more values than the limit of " +
                                 std::to_string(limits_.max_values));
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
            throw JsonLimitError("the JSON text nests deeper than the limit of " +
                                 std::to_string(limits_.max_depth) + " levels (level " +
                                 std::to_string(open_.size() + 1) + " opens)");
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
    BoundedDomBuilder builder(limits);
    bool parsed = false;
    try {
        // Strict: the value must end the text (whitespace aside). Every error reaches
        // parse_error, which throws.
        parsed = json::sax_parse(text, &builder);
    } catch (json::exception const& error) {
        throw JsonLimitError(escape_invalid_utf8(error.what()));
    }
    if (!parsed) {
        throw JsonLimitError("the JSON text was not parsed to its end");
    }
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
