// Joining a sharded build's manifests: the parts, in any order, give the manifest the unsharded
// build writes; parts that are missing, repeated, of another build or with an entry their part
// does not build are refused, naming the parts and the values.
#include "cache/identity.hpp"
#include "support/error_message.hpp"
#include "tensoracle/deploy/manifest.hpp"
#include "tensoracle/deploy/manifest_merge.hpp"
#include "tensoracle/errors.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace tensoracle::deploy {
namespace {

using Json = nlohmann::json;
using testing::message_of;

Json entry(std::string const& recipe, std::string const& graph_version,
           Json const& targets = {"sm86", "sm89"}) {
    Json const conditions = {{"name", recipe},
                             {"graph_version", graph_version},
                             {"backend", "tensorrt_rtx"},
                             {"backend_version", "1.7.1.116"},
                             {"gpu", nullptr},
                             {"targets", targets}};
    return {{"recipe", recipe},
            {"graph_version", graph_version},
            {"file_name", recorded_identity(conditions).file_name},
            {"conditions", conditions},
            {"backend", "tensorrt_rtx"},
            {"backend_version", "1.7.1.116"},
            {"targets", targets},
            {"hardware_compatibility", nullptr},
            {"io", nullptr},
            {"plan", {{"size", 1024}, {"xxh3_128", std::string(32, 'a')}}},
            {"engine_bytes", 1500},
            {"fleet", nullptr}};
}

// A build's recipes in the package's order: names and graph versions.
using Recipes = std::vector<std::pair<std::string, std::string>>;

// By the split (sorted by name, graph version and occurrence, then every second one), part 0
// builds a/1 and b, part 1 a/2 and c. A function: a global vector's construction may throw
// before main (cert-err58-cpp).
Recipes four_recipes() {
    return {{"a", "1"}, {"b", "1"}, {"c", "1"}, {"a", "2"}};
}

Json document(std::vector<Json> entries) {
    return {{"schema_version", 1},
            {"spec", "model:RECIPES"},
            {"remote", "s3://bucket/engines"},
            {"entries", std::move(entries)}};
}

Json part(std::uint64_t index, std::vector<Json> entries, Recipes const& build = four_recipes()) {
    Json made = document(std::move(entries));
    Json recipes = Json::array();
    for (auto const& [recipe, graph_version] : build) {
        recipes.push_back({{"recipe", recipe}, {"graph_version", graph_version}});
    }
    made["shard"] = {{"index", index}, {"count", 2}, {"recipes", recipes}};
    return made;
}

ManifestPart named(std::string name, Json const& value) {
    return {std::move(name), value.dump(2) + "\n"};
}

std::vector<ManifestPart> both_parts() {
    return {named("deploy-0.json", part(0, {entry("a", "1"), entry("b", "1")})),
            named("deploy-1.json", part(1, {entry("c", "1"), entry("a", "2")}))};
}

std::string refusal(std::vector<ManifestPart> const& parts) {
    return message_of<InvalidArgument>([&] { (void)merge_manifests(parts); });
}

TEST(ManifestMerge, ThePartsInAnyOrderGiveTheManifestOfTheUnshardedBuild) {
    std::string const unsharded =
        document({entry("a", "1"), entry("b", "1"), entry("c", "1"), entry("a", "2")}).dump(2) +
        "\n";
    std::vector<ManifestPart> parts = both_parts();
    EXPECT_EQ(merge_manifests(parts), unsharded);
    std::swap(parts[0], parts[1]);
    EXPECT_EQ(merge_manifests(parts), unsharded);
    // A recipe that failed in its part is simply not in the merged manifest.
    parts[0] = named("deploy-1.json", part(1, {entry("a", "2")}));
    Manifest const merged = parse_manifest(merge_manifests(parts), "merged");
    ASSERT_EQ(merged.entries.size(), 3U);
    EXPECT_EQ(merged.entries[2].graph_version, "2");
}

TEST(ManifestMerge, AMissingOrRepeatedPartIsRefused) {
    std::vector<ManifestPart> parts = both_parts();
    EXPECT_EQ(refusal({parts[1]}),
              "parts 0 of 2 are missing: merge the manifest of every part (1 given)");
    EXPECT_EQ(refusal({parts[0], parts[0], parts[1]}),
              "deploy-0.json and deploy-0.json are both part 0 of 2");
    EXPECT_EQ(refusal({}), "no manifest to merge: give the manifest of every part");
}

TEST(ManifestMerge, PartsOfDifferentBuildsAreRefusedNamingBothValues) {
    std::vector<ManifestPart> parts = both_parts();
    Json other = part(1, {entry("c", "1"), entry("a", "2")});
    other["spec"] = "model:OTHER";
    EXPECT_EQ(refusal({parts[0], named("deploy-1.json", other)}),
              "deploy-0.json and deploy-1.json are parts of different builds: spec is "
              "\"model:RECIPES\" in deploy-0.json and \"model:OTHER\" in deploy-1.json");
    other = part(1, {entry("c", "1"), entry("a", "2")});
    other["remote"] = nullptr;
    EXPECT_NE(refusal({parts[0], named("deploy-1.json", other)})
                  .find("different builds: remote is \"s3://bucket/engines\" in deploy-0.json "
                        "and null in deploy-1.json"),
              std::string::npos);
    other = part(1, {entry("c", "1"), entry("a", "2")});
    other["shard"]["count"] = 3;
    EXPECT_NE(refusal({parts[0], named("deploy-1.json", other)})
                  .find("shard.count is 2 in deploy-0.json and 3 in deploy-1.json"),
              std::string::npos);
    other = part(1, {entry("c", "1"), entry("a", "2")});
    other["shard"]["recipes"].erase(1);
    EXPECT_NE(refusal({parts[0], named("deploy-1.json", other)}).find("shard.recipes is"),
              std::string::npos);
}

TEST(ManifestMerge, AnEntryItsPartDoesNotBuildIsAConflict) {
    std::vector<ManifestPart> parts = both_parts();
    parts[1] = named("deploy-1.json", part(1, {entry("c", "1"), entry("a", "2"), entry("b", "1")}));
    EXPECT_EQ(refusal(parts),
              "deploy-1.json: entries[2] is recipe \"b\" (graph_version \"1\"), which part 1 of 2 "
              "does not build (another part does), or a repeat of an entry before it: "
              "conflicting entries");
    parts[1] = named("deploy-1.json", part(1, {entry("c", "1"), entry("c", "1")}));
    EXPECT_NE(refusal(parts).find("deploy-1.json: entries[1] is recipe \"c\""), std::string::npos);
    parts[1] = named("deploy-1.json", part(1, {entry("d", "1")}));
    EXPECT_EQ(refusal(parts),
              "deploy-1.json: entries[0] is recipe \"d\" (graph_version \"1\"), which is not a "
              "recipe of the build (shard.recipes)");
}

// A recipe the build has three times (three entries of one name and graph version, for other
// targets): sorted, its occurrences 0 and 2 fall to part 0 and occurrence 1 to part 1. Each part's
// entries of it take that part's occurrences in the build's order, whatever order the parts and
// the other entries come in; one more is a repeat.
TEST(ManifestMerge, ARecipeOfSeveralOccurrencesTakesThemInTheBuildsOrder) {
    Recipes const build{{"b", "1"}, {"a", "1"}, {"a", "1"}, {"a", "1"}};
    Json const first = entry("a", "1", {"sm80"});
    Json const second = entry("a", "1", {"sm86"});
    Json const third = entry("a", "1", {"sm89"});
    // Sorted: a/1 #0, a/1 #1, a/1 #2, b/1 #0 to parts 0, 1, 0, 1.
    std::string const unsharded = document({entry("b", "1"), first, second, third}).dump(2) + "\n";
    ManifestPart const zero = named("deploy-0.json", part(0, {first, third}, build));
    ManifestPart const one = named("deploy-1.json", part(1, {second, entry("b", "1")}, build));
    EXPECT_EQ(merge_manifests({zero, one}), unsharded);
    EXPECT_EQ(merge_manifests({one, zero}), unsharded);
    ManifestPart const reordered =
        named("deploy-1.json", part(1, {entry("b", "1"), second}, build));
    EXPECT_EQ(merge_manifests({zero, reordered}), unsharded);
    EXPECT_EQ(refusal({zero, named("deploy-1.json", part(1, {second, second}, build))}),
              "deploy-1.json: entries[1] is recipe \"a\" (graph_version \"1\"), which part 1 of 2 "
              "does not build (another part does), or a repeat of an entry before it: "
              "conflicting entries");
    EXPECT_EQ(refusal({named("deploy-0.json", part(0, {first, third, second}, build)), one}),
              "deploy-0.json: entries[2] is recipe \"a\" (graph_version \"1\"), which part 0 of 2 "
              "does not build (another part does), or a repeat of an entry before it: "
              "conflicting entries");
}

TEST(ManifestMerge, APartMustBeAManifestOfAShardedBuild) {
    std::vector<ManifestPart> parts = both_parts();
    EXPECT_EQ(refusal({named("deploy.json", document({entry("a", "1")})), parts[1]}),
              "deploy.json is not a part of a sharded build: it has no shard member (write the "
              "parts with tensoracle build --shard I/N --manifest FILE)");
    Json wrong = part(0, {entry("a", "1")});
    wrong["shard"]["index"] = 2;
    EXPECT_EQ(refusal({named("deploy-0.json", wrong), parts[1]}),
              "deploy-0.json: shard.index is 2, not a part of 2");
    wrong["shard"]["index"] = -1;
    EXPECT_EQ(refusal({named("deploy-0.json", wrong), parts[1]}),
              "deploy-0.json: shard.index is -1, expected a whole number >= 0");
    // Every check of a manifest comes first.
    Json edited = part(0, {entry("a", "1")});
    edited["entries"][0]["recipe"] = "b";
    EXPECT_NE(refusal({named("deploy-0.json", edited), parts[1]})
                  .find("deploy-0.json: entries[0].recipe is \"b\", but its conditions record "
                        "name \"a\""),
              std::string::npos);
}

} // namespace
} // namespace tensoracle::deploy
