// The one wording of a refusal (tensoracle/errors.hpp): refusal_text, render, and the JSON member
// reader's messages, which are made by it.
#include "tensoracle/errors.hpp"
#include "text/json_members.hpp"

#include <gtest/gtest.h>
#include <string>

namespace tensoracle {
namespace {

TEST(RefusalText, EachPartLeftOutWhereEmpty) {
    EXPECT_EQ(refusal_text("a.json: x", "is 3", "a text", "fix it"),
              "a.json: x is 3, expected a text. fix it");
    EXPECT_EQ(refusal_text("a.json: x", "is missing", ""), "a.json: x is missing");
    EXPECT_EQ(refusal_text("a.json", "", "a signed manifest"),
              "a.json: expected a signed manifest");
}

TEST(Render, TheFieldsInTheOneWording) {
    EXPECT_EQ(render(Refusal{.subject = "deploy.json",
                             .field = "entries[0].plan.size",
                             .observed = "\"9\"",
                             .expected = "a whole number >= 0"}),
              "deploy.json: entries[0].plan.size is \"9\", expected a whole number >= 0");
    EXPECT_EQ(render(Refusal{.subject = "deploy.json",
                             .observed = "not signed",
                             .expected = "a signed manifest",
                             .remedy = "sign it"}),
              "deploy.json is not signed, expected a signed manifest. sign it");
    EXPECT_EQ(render(Refusal{.field = "io"}), "io");
}

TEST(Render, AnErrorMadeOfFieldsTellsThem) {
    Refusal const refusal{
        .subject = "m.json", .field = "expires", .observed = "2020", .expected = "later"};
    InvalidArgument const error(refusal);
    EXPECT_STREQ(error.what(), "m.json: expires is 2020, expected later");
    EXPECT_EQ(error.refusal().field, "expires");
}

TEST(Render, TheJsonReaderSpeaksTheSameWording) {
    JsonPlace const place = JsonPlace("deploy.json").member("entries").index(0).member("plan");
    try {
        refuse_json<InvalidArgument>(place.member("size"), nlohmann::json("9"), "a whole number");
        FAIL() << "not refused";
    } catch (InvalidArgument const& error) {
        EXPECT_EQ(std::string(error.what()), render(error.refusal()));
    }
}

} // namespace
} // namespace tensoracle
