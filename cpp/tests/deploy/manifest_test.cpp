// Reading the deployment manifest: a manifest as tensoracle build writes it is read whole, and
// each wrong field is refused with the file, the field and the value.
#include "cache/identity.hpp"
#include "support/error_message.hpp"
#include "tensoracle/deploy/manifest.hpp"
#include "tensoracle/errors.hpp"
#include "text/canonical_json.hpp"

#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace tensoracle::deploy {
namespace {

using Json = nlohmann::json;

Json conditions() {
    return {{"name", "encoder"},
            {"graph_version", "3"},
            {"backend", "tensorrt_rtx"},
            {"backend_version", "1.7.1.116"},
            {"gpu", nullptr},
            {"targets", {"sm86", "sm89", "sm120"}}};
}

Json manifest() {
    Json entry = {
        {"recipe", "encoder"},
        {"graph_version", "3"},
        {"file_name", recorded_identity(conditions()).file_name},
        {"conditions", conditions()},
        {"backend", "tensorrt_rtx"},
        {"backend_version", "1.7.1.116"},
        {"targets", {"sm86", "sm89", "sm120"}},
        {"hardware_compatibility", nullptr},
        {"io",
         {{"tensors",
           {{{"name", "x"},
             {"mode", "INPUT"},
             {"dtype", "HALF"},
             {"shape", {-1, 3}},
             {"location", "DEVICE"},
             {"format", "LINEAR"},
             {"profile", {{"min", {1, 3}}, {"opt", {4, 3}}, {"max", {8, 3}}}}},
            {{"name", "y"},
             {"mode", "OUTPUT"},
             {"dtype", "FLOAT"},
             {"shape", {-1, 5}},
             {"location", "DEVICE"},
             {"format", "LINEAR"}}}}}},
        {"plan", {{"size", 1024}, {"xxh3_128", std::string(32, 'a')}}},
        {"engine_bytes", 1500},
        {"fleet",
         {{"key", "engines/x.engine"},
          {"url", "s3://b/engines/x.engine"},
          {"signed", true},
          {"signature", std::string(128, 'c')}}},
    };
    return {{"schema_version", 1},
            {"spec", "mymodel:RECIPES"},
            {"remote", "s3://b"},
            {"entries", {entry}}};
}

std::string refusal(Json const& document) {
    try {
        (void)parse_manifest(document.dump(), "deploy.json");
    } catch (InvalidArgument const& error) {
        return error.what();
    }
    ADD_FAILURE() << "accepted: " << document.dump();
    return {};
}

std::string refusal_of_text(std::string const& text) {
    try {
        (void)parse_manifest(text, "deploy.json");
    } catch (InvalidArgument const& error) {
        return error.what();
    }
    ADD_FAILURE() << "accepted";
    return {};
}

TEST(DeployManifest, AManifestAsBuildWritesItIsReadWhole) {
    Manifest const read = parse_manifest(manifest().dump(), "deploy.json");
    EXPECT_EQ(read.spec, "mymodel:RECIPES");
    EXPECT_EQ(read.remote, "s3://b");
    ASSERT_EQ(read.entries.size(), 1U);
    ManifestEntry const& entry = read.entries[0];
    EXPECT_EQ(entry.file_name, recorded_identity(conditions()).file_name);
    // The conditions and the IO as the library's own types, and as canonical JSON text.
    EXPECT_EQ(entry.conditions_json, canonical_json(conditions()));
    EXPECT_EQ(Json::parse(entry.conditions_json), conditions());
    EXPECT_EQ(entry.io_json, canonical_json(manifest()["entries"][0]["io"]));
    ASSERT_TRUE(entry.io.has_value());
    ASSERT_EQ(entry.io->size(), 2U);
    EXPECT_EQ((*entry.io)[0].name, "x");
    EXPECT_TRUE((*entry.io)[0].is_input);
    EXPECT_EQ((*entry.io)[0].dtype, "HALF");
    EXPECT_EQ((*entry.io)[0].shape, (Shape{-1, 3}));
    ASSERT_TRUE((*entry.io)[0].profile.has_value());
    EXPECT_EQ((*entry.io)[0].profile->max, (Shape{8, 3}));
    EXPECT_EQ((*entry.io)[1].name, "y");
    EXPECT_FALSE((*entry.io)[1].is_input);
    EXPECT_FALSE((*entry.io)[1].profile.has_value());
    EXPECT_EQ(entry.runs_on.backend, "tensorrt_rtx");
    EXPECT_EQ(entry.runs_on.targets, (std::vector<std::string>{"sm86", "sm89", "sm120"}));
    EXPECT_EQ(entry.plan_size, 1024U);
    EXPECT_EQ(entry.engine_bytes, 1500U);
    ASSERT_TRUE(entry.fleet.has_value());
    EXPECT_EQ(entry.fleet->signed_, true);
    EXPECT_EQ(entry.fleet->signature, std::string(128, 'c'));
    // Without --push: no remote, no fleet object; published before: signed unknown.
    Json local = manifest();
    local["remote"] = nullptr;
    local["entries"][0]["fleet"] = nullptr;
    Manifest const unpushed = parse_manifest(local.dump(), "deploy.json");
    EXPECT_FALSE(unpushed.remote.has_value());
    EXPECT_FALSE(unpushed.entries[0].fleet.has_value());
    Json before = manifest();
    before["entries"][0]["fleet"]["signed"] = nullptr;
    EXPECT_FALSE(parse_manifest(before.dump(), "d").entries[0].fleet->signed_.has_value());
    Json unsigned_object = manifest();
    unsigned_object["entries"][0]["fleet"]["signature"] = nullptr;
    EXPECT_FALSE(
        parse_manifest(unsigned_object.dump(), "d").entries[0].fleet->signature.has_value());
}

TEST(DeployManifest, AnEntryWithoutAnIOSignatureHasNoneAndAWrongOneIsRefusedAtReading) {
    Json none = manifest();
    none["entries"][0]["io"] = nullptr;
    ManifestEntry const read = parse_manifest(none.dump(), "deploy.json").entries[0];
    EXPECT_FALSE(read.io.has_value());
    EXPECT_EQ(read.io_json, "null");
    // A wrong IO signature is refused when the manifest is read, naming the field and the value,
    // not when the engine is run.
    Json wrong = manifest();
    wrong["entries"][0]["io"]["tensors"][1]["shape"] = {-1, "5"};
    EXPECT_EQ(refusal(wrong), "deploy.json: entries[0].io.tensors[1].shape is [-1,\"5\"], "
                              "expected an array of whole numbers >= -1");
    Json untyped = manifest();
    untyped["entries"][0]["io"] = {{"x", {{"mode", "input"}}}};
    EXPECT_EQ(refusal(untyped), "deploy.json: entries[0].io.tensors is missing");
}

TEST(DeployManifest, EachWrongFieldIsRefusedNamingFileFieldAndValue) {
    Json document = manifest();
    document["schema_version"] = 2;
    EXPECT_EQ(refusal(document), "deploy.json: schema_version is 2: this library reads version 1");

    document = manifest();
    document["entries"][0].erase("plan");
    EXPECT_EQ(refusal(document), "deploy.json: entries[0].plan is missing");

    document = manifest();
    document["entries"][0]["plan"]["size"] = "1024";
    EXPECT_EQ(refusal(document),
              "deploy.json: entries[0].plan.size is \"1024\", expected a whole number >= 0");

    document = manifest();
    document["entries"][0]["plan"]["size"] = -1;
    EXPECT_EQ(refusal(document),
              "deploy.json: entries[0].plan.size is -1, expected a whole number >= 0");

    document = manifest();
    document["entries"][0]["plan"]["xxh3_128"] = "ABC";
    EXPECT_EQ(refusal(document),
              "deploy.json: entries[0].plan.xxh3_128 is \"ABC\", expected 32 lowercase hex digits");

    document = manifest();
    document["entries"][0]["fleet"]["signed"] = "yes";
    EXPECT_EQ(refusal(document),
              "deploy.json: entries[0].fleet.signed is \"yes\", expected true, false or null");

    document = manifest();
    document["entries"][0]["fleet"]["signature"] = std::string(127, 'c');
    EXPECT_EQ(refusal(document), "deploy.json: entries[0].fleet.signature is \"" +
                                     std::string(127, 'c') +
                                     "\", expected 128 lowercase hex digits or null");

    document = manifest();
    document["entries"] = Json::object();
    EXPECT_EQ(refusal(document), "deploy.json: entries is {}, expected an array");

    EXPECT_EQ(refusal(Json::array()), "deploy.json is [], expected an object");
}

// The members an entry repeats from its conditions are checked against them, never trusted: an
// edited manifest cannot route a recipe to another engine, an older graph version, another
// backend or other targets, and an entry that leaves one out is refused.
TEST(DeployManifest, EveryMemberThatRepeatsAConditionMustAgreeWithIt) {
    struct Edit {
        char const* field;
        Json value;
        std::string expected;
    };
    std::vector<Edit> const edits{
        {"recipe", "decoder",
         "deploy.json: entries[0].recipe is \"decoder\", but its conditions record name "
         "\"encoder\""},
        {"graph_version", "2",
         "deploy.json: entries[0].graph_version is \"2\", but its conditions record "
         "graph_version \"3\""},
        {"backend", "tensorrt",
         "deploy.json: entries[0].backend is \"tensorrt\", but its conditions record backend "
         "\"tensorrt_rtx\""},
        {"backend_version", "1.6.0.1",
         "deploy.json: entries[0].backend_version is \"1.6.0.1\", but its conditions record "
         "backend_version \"1.7.1.116\""},
        {"targets", Json::array({"sm90"}),
         "deploy.json: entries[0].targets is [\"sm90\"], but its conditions record targets "
         "[\"sm86\",\"sm89\",\"sm120\"]"},
        {"hardware_compatibility", "ampere_plus",
         "deploy.json: entries[0].hardware_compatibility is \"ampere_plus\", but its conditions "
         "record hardware_compatibility null"},
    };
    for (Edit const& edit : edits) {
        Json document = manifest();
        document["entries"][0][edit.field] = edit.value;
        EXPECT_EQ(refusal(document), edit.expected) << edit.field;
        document = manifest();
        document["entries"][0].erase(edit.field);
        EXPECT_EQ(refusal(document).rfind(
                      std::string("deploy.json: entries[0].") + edit.field + " is missing", 0),
                  0U)
            << refusal(document);
    }
}

TEST(DeployManifest, ARepeatedMemberThatDisagreesCarriesTheRefusalsFields) {
    Json document = manifest();
    document["entries"][0]["targets"] = Json::array({"sm90"});
    EXPECT_EQ(testing::fields_of(testing::refusal_of<InvalidArgument>(
                  [&] { (void)parse_manifest(document.dump(), "deploy.json"); })),
              "subject=deploy.json | field=entries[0].targets | observed=[\"sm90\"] | "
              "expected=[\"sm86\",\"sm89\",\"sm120\"] (the conditions' targets) | remedy=");
}

TEST(DeployManifest, AFileNameThatIsNotTheIdentityOfItsConditionsIsRefused) {
    Json document = manifest();
    std::string const real = document["entries"][0]["file_name"];
    document["entries"][0]["conditions"]["graph_version"] = "4";
    std::string const message = refusal(document);
    EXPECT_NE(message.find("deploy.json: entries[0].file_name is \"" + real +
                           "\", but the identity of its conditions is"),
              std::string::npos)
        << message;
    // Mistyped conditions the selection reads are refused by the field too.
    document = manifest();
    document["entries"][0]["conditions"]["targets"] = {86};
    EXPECT_NE(refusal(document).find("deploy.json: entries[0].conditions"), std::string::npos);
}

TEST(DeployManifest, AByteOrderMarkOrANulByteIsNotAManifest) {
    // As Python's json reads a text: neither is accepted (nlohmann's lexer alone would stop at
    // the NUL and accept what precedes it).
    std::string const text = manifest().dump();
    EXPECT_EQ(refusal_of_text("\xEF\xBB\xBF" + text),
              "deploy.json is not a deployment manifest: it starts with a UTF-8 byte order mark "
              "(write it without one)");
    EXPECT_EQ(refusal_of_text(text + std::string(1, '\0') + "anything"),
              "deploy.json is not a deployment manifest: a NUL byte at offset " +
                  std::to_string(text.size()) + ": JSON text holds none");
}

TEST(DeployManifest, AnUnknownRecipeNamesAFewRecipesThenACount) {
    Json document = manifest();
    Json const entry = document["entries"][0];
    document["entries"] = Json::array();
    for (int i = 0; i < 12; ++i) {
        Json named = entry;
        named["recipe"] = "r" + std::to_string(i);
        named["conditions"]["name"] = named["recipe"];
        named["file_name"] = recorded_identity(named["conditions"]).file_name;
        document["entries"].push_back(named);
        document["entries"].push_back(named); // twice: each recipe is named once
    }
    Manifest const read = parse_manifest(document.dump(), "deploy.json");
    DeviceDescription const device{
        {{"name", std::string("GPU")}, {"compute_capability", std::string("8.9")}}};
    try {
        (void)select_for_device(read, "decoder", device, {kTensorRtRtx, "1.7.1.116"});
        ADD_FAILURE() << "selected";
    } catch (InvalidArgument const& error) {
        EXPECT_EQ(std::string(error.what()),
                  "the manifest (mymodel:RECIPES) has no entry of recipe \"decoder\"; its "
                  "recipes are \"r0\", \"r1\", \"r2\", \"r3\", \"r4\", \"r5\", \"r6\", "
                  "\"r7\", \"r8\", \"r9\" and 2 more");
    }
}

// The costliest shape per byte (an array of empty objects, ~180 bytes of memory each once built)
// is refused by its count of values before anything is built.
TEST(DeployManifest, MoreValuesThanTheLimitAreRefusedBeforeTheDocumentIsBuilt) {
    std::string text = manifest().dump();
    std::string objects = "[{}";
    for (std::size_t i = 1; i < kMaxManifestValues; ++i) {
        objects += ",{}";
    }
    objects += "]";
    std::string const spec = "\"mymodel:RECIPES\"";
    auto const at = text.find(spec);
    ASSERT_NE(at, std::string::npos) << text;
    text.replace(at, spec.size(), objects);
    EXPECT_EQ(refusal_of_text(text),
              "deploy.json is not a deployment manifest: the JSON text holds more values than "
              "the limit of 2097152");
}

TEST(DeployManifest, TextThatIsNotJsonWithinLimitsIsRefused) {
    try {
        (void)parse_manifest("{\"schema_version\": 1,", "deploy.json");
        ADD_FAILURE() << "accepted";
    } catch (InvalidArgument const& error) {
        EXPECT_EQ(std::string(error.what()).rfind("deploy.json is not a deployment manifest: ", 0),
                  0U)
            << error.what();
    }
    std::string const deep = std::string(100, '[') + std::string(100, ']');
    try {
        (void)parse_manifest(deep, "deploy.json");
        ADD_FAILURE() << "accepted";
    } catch (InvalidArgument const& error) {
        EXPECT_NE(std::string(error.what()).find("deeper than the limit of 64 levels"),
                  std::string::npos)
            << error.what();
    }
}

TEST(DeployManifest, AFileIsReadUpToItsSizeLimitAndRefusedOneByteBeyond) {
    auto const path = std::filesystem::path(::testing::TempDir()) / "deploy-manifest-test.json";
    // The manifest, then spaces (JSON's whitespace) up to exactly the limit: read whole.
    std::string text = manifest().dump(2);
    text.resize(static_cast<std::size_t>(kMaxManifestFileBytes), ' ');
    { std::ofstream(path, std::ios::binary) << text; }
    ASSERT_EQ(std::filesystem::file_size(path), kMaxManifestFileBytes);
    EXPECT_EQ(read_manifest(path).entries.size(), 1U);
    // One byte more: refused, naming the file and the limit.
    { std::ofstream(path, std::ios::binary | std::ios::app) << ' '; }
    try {
        (void)read_manifest(path);
        ADD_FAILURE() << "a manifest beyond the limit was read";
    } catch (InvalidArgument const& error) {
        EXPECT_EQ(std::string(error.what()), "deployment manifest '" + path.string() +
                                                 "' is larger than the limit of " +
                                                 std::to_string(kMaxManifestFileBytes) + " bytes");
    }
    std::filesystem::remove(path);
    EXPECT_THROW((void)read_manifest(path), FileError);
}

} // namespace
} // namespace tensoracle::deploy
