// libFuzzer target: the core's JSON reader (parse_bounded_json) against nlohmann::json::parse,
// which it replaced. For every input both accept it and build the same value, with numbers of
// the same types, or both refuse it at the same byte, or both find a number beyond a double; an
// input past the reader's limits (depth 64) or holding a NUL byte is the reader's alone. Any
// disagreement aborts, so that the fuzzer keeps the input.
#include "text/bounded_json.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace {

using nlohmann::json;

// Equal values of equal types all the way down (json's == takes 1, 1u and 1.0 for equal).
bool same(json const& a, json const& b) {
    if (a.type() != b.type() || a.size() != b.size()) {
        return false;
    }
    if (a.is_object()) {
        for (auto const& [key, member] : a.items()) {
            if (!b.contains(key) || !same(member, b.at(key))) {
                return false;
            }
        }
        return true;
    }
    if (a.is_array()) {
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (!same(a[i], b[i])) {
                return false;
            }
        }
        return true;
    }
    return a == b;
}

[[noreturn]] void disagree(char const* what) {
    std::fprintf(stderr, "fuzz_json_text: the reader and nlohmann disagree: %s\n", what);
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    std::string_view const text(reinterpret_cast<char const*>(data), size);
    json ours;
    std::size_t our_offset = 0;
    enum class Kind : std::uint8_t { value, syntax_error, overflow };
    Kind our_kind = Kind::value;
    try {
        ours = tensoracle::parse_bounded_json(text, {.max_bytes = 1U << 20U});
    } catch (tensoracle::JsonSyntaxError const& error) {
        our_kind = Kind::syntax_error;
        our_offset = error.offset();
    } catch (tensoracle::JsonLimitError const& error) {
        if (std::string_view(error.what()).find("number overflow") == std::string_view::npos) {
            return 0; // past the reader's depth limit: nlohmann has none
        }
        our_kind = Kind::overflow;
    }
    if (text.find('\0') != std::string_view::npos) {
        return 0; // nlohmann takes a NUL between tokens for the end of the text
    }
    json theirs;
    std::size_t their_offset = 0;
    Kind their_kind = Kind::value;
    try {
        theirs = json::parse(text);
    } catch (json::parse_error const& error) {
        their_kind = Kind::syntax_error;
        their_offset = error.byte - 1;
    } catch (json::out_of_range const&) {
        their_kind = Kind::overflow;
    }
    if (our_kind != their_kind) {
        disagree("one accepts what the other refuses");
    }
    if (our_kind == Kind::value && !same(ours, theirs)) {
        disagree("different values");
    }
    if (our_kind == Kind::syntax_error && our_offset != their_offset) {
        disagree("refused at different bytes");
    }
    return 0;
}
