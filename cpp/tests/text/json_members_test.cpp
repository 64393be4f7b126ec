// The one reader of typed JSON members (src/text/json_members.hpp): a missing member, a value of
// the wrong type, the path of a nested member in both syntaxes, the Refusal's fields, and the
// exception class the caller chose.
#include "tensoracle/errors.hpp"
#include "text/json_members.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace tensoracle {
namespace {

using Json = nlohmann::json;

// Runs `read` and returns the refusal it throws as ErrorType, failing the test when it throws
// nothing.
template <typename ErrorType, typename Read>
ErrorType refused(Read const& read) {
    try {
        read();
    } catch (ErrorType const& error) {
        return error;
    }
    ADD_FAILURE() << "nothing was refused";
    return ErrorType("", Refusal{});
}

JsonPlace entry_place() {
    return JsonPlace("deploy.json").member("entries").index(0);
}

TEST(JsonPlace, NestedPathInOneSyntaxAndAsPointer) {
    JsonPlace const place = entry_place().member("io").member("tensors").index(1).member("shape");
    EXPECT_EQ(place.subject(), "deploy.json");
    EXPECT_EQ(place.field(), "entries[0].io.tensors[1].shape");
    EXPECT_EQ(place.pointer(), "/entries/0/io/tensors/1/shape");
    EXPECT_EQ(place.text(), "deploy.json: entries[0].io.tensors[1].shape");
}

TEST(JsonPlace, TheDocumentAsAWholeHasNoField) {
    JsonPlace const place("bundle.json");
    EXPECT_EQ(place.field(), "");
    EXPECT_EQ(place.pointer(), "");
    EXPECT_EQ(place.text(), "bundle.json");
    EXPECT_EQ(place.index(2).field(), "[2]");
}

TEST(JsonMembers, MissingMemberNamesItsPathAndFillsTheRefusal) {
    Json const object = {{"recipe", "resnet"}};
    JsonMembers<InvalidArgument> const members(object, entry_place());
    auto const error = refused<InvalidArgument>([&] { (void)members.text("plan"); });
    EXPECT_STREQ(error.what(), "deploy.json: entries[0].plan is missing, expected a string");
    EXPECT_EQ(error.refusal().subject, "deploy.json");
    EXPECT_EQ(error.refusal().field, "entries[0].plan");
    EXPECT_EQ(error.refusal().observed, "missing");
    EXPECT_EQ(error.refusal().expected, "a string");
}

TEST(JsonMembers, WrongTypeShowsTheValueAndWhatWasExpected) {
    Json const object = {{"size", "9"}, {"signed", 1}, {"name", 3}};
    JsonMembers<InvalidArgument> const members(object, entry_place().member("plan"));
    auto const count = refused<InvalidArgument>([&] { (void)members.count("size"); });
    EXPECT_STREQ(count.what(),
                 "deploy.json: entries[0].plan.size is \"9\", expected a whole number >= 0");
    EXPECT_EQ(count.refusal().subject, "deploy.json");
    EXPECT_EQ(count.refusal().field, "entries[0].plan.size");
    EXPECT_EQ(count.refusal().observed, "\"9\"");
    EXPECT_EQ(count.refusal().expected, "a whole number >= 0");
    auto const flag = refused<InvalidArgument>([&] { (void)members.optional_flag("signed"); });
    EXPECT_EQ(flag.refusal().observed, "1");
    EXPECT_EQ(flag.refusal().expected, "true, false or null");
    auto const text = refused<InvalidArgument>([&] { (void)members.text("name"); });
    EXPECT_EQ(text.refusal().field, "entries[0].plan.name");
}

TEST(JsonMembers, ReadsWellTypedMembers) {
    Json const object = {{"size", 9}, {"signed", nullptr}, {"remote", nullptr}, {"spec", "s"}};
    JsonMembers<InvalidArgument> const members(object, JsonPlace("deploy.json"));
    EXPECT_EQ(members.count("size"), 9U);
    EXPECT_EQ(members.optional_flag("signed"), std::nullopt);
    EXPECT_EQ(members.optional_text("remote"), std::nullopt);
    EXPECT_EQ(members.text("spec"), "s");
    EXPECT_EQ(members.find("absent"), nullptr);
    EXPECT_EQ(members.at("spec"), "deploy.json: spec");
}

TEST(JsonMembers, CountRefusesBooleansFractionsNegativesAndValuesBelowTheMinimum) {
    Json const object = {{"flag", true}, {"fraction", 1.5}, {"negative", -1}, {"zero", 0}};
    JsonMembers<InvalidArgument> const members(object, JsonPlace("f"));
    for (char const* name : {"flag", "fraction", "negative"}) {
        auto const error = refused<InvalidArgument>([&] { (void)members.count(name); });
        EXPECT_EQ(error.refusal().field, name);
    }
    auto const below =
        refused<InvalidArgument>([&] { (void)members.count("zero", "an integer >= 1", 1); });
    EXPECT_EQ(below.refusal().expected, "an integer >= 1");
    EXPECT_EQ(below.refusal().observed, "0");
}

TEST(JsonMembers, TheCallerChoosesTheExceptionClass) {
    Json const object = {{"bytes", -1}};
    JsonMembers<BundleError> const members(object,
                                           JsonPlace("bundle.json").member("entries").index(2));
    auto const bundle = refused<BundleError>([&] { (void)members.count("bytes"); });
    EXPECT_EQ(bundle.path(), "bundle.json");
    EXPECT_EQ(bundle.refusal().field, "entries[2].bytes");
    auto const abi = refused<BundleAbiError>(
        [&] { members.refuse<BundleAbiError>("bytes", object.at("bytes"), "an integer >= 0"); });
    EXPECT_EQ(abi.path(), "bundle.json");
    auto const corrupt = refused<CorruptEngineError>([&] {
        refuse_json<CorruptEngineError>(JsonPlace("a.engine").member("references"), Json(3),
                                        "an object");
    });
    EXPECT_EQ(corrupt.path(), "a.engine");
    EXPECT_EQ(corrupt.refusal().field, "references");
    EXPECT_STREQ(corrupt.what(), "a.engine: references is 3, expected an object");
}

TEST(JsonMembers, LongValuesAreCutInTheMessageAndTheRefusal) {
    Json const object = {{"name", std::string(500, 'x')}};
    JsonMembers<InvalidArgument> const members(object, JsonPlace("f"));
    auto const error = refused<InvalidArgument>([&] { (void)members.count("name"); });
    std::string const shown_value = "\"" + std::string(kJsonExcerptCharacters - 1, 'x') + "...";
    EXPECT_EQ(error.refusal().observed, shown_value);
    EXPECT_EQ(std::string(error.what()),
              "f: name is " + shown_value + ", expected a whole number >= 0");
}

} // namespace
} // namespace tensoracle
