// The pieces messages are made of (src/text/message_text.hpp): a JSON value shown as an excerpt,
// a shape, a list.
#include "text/message_text.hpp"

#include <cstdint>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tensoracle {
namespace {

TEST(Shown, CompactJsonCutAtTheExcerptLength) {
    EXPECT_EQ(shown(nlohmann::json{{"a", 1}}), R"({"a":1})");
    std::string const cut = shown(nlohmann::json(std::string(400, 'y')));
    EXPECT_EQ(cut.size(), kJsonExcerptCharacters + 3);
    EXPECT_EQ(cut.substr(cut.size() - 3), "...");
}

TEST(ShapeText, DimensionsInBrackets) {
    EXPECT_EQ(shape_text(std::vector<std::int64_t>{1, -1, 224}), "[1, -1, 224]");
    EXPECT_EQ(shape_text(std::vector<std::int64_t>{}), "[]");
}

TEST(Joined, SeparatorBetweenEachTwo) {
    EXPECT_EQ(joined({"a", "b", "c"}, ", "), "a, b, c");
    EXPECT_EQ(joined({"a"}, "; "), "a");
    EXPECT_EQ(joined({}, ", "), "");
}

} // namespace
} // namespace tensoracle
