// parse_bundle_manifest: what a bundle.json may hold, and the fields it names when it refuses.
// The path and target cases are the fuzz campaign's findings (docs/fuzzing.md).
#include "tensoracle/bundle_manifest.hpp"
#include "tensoracle/errors.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace tensoracle::cubin {
namespace {

using nlohmann::json;

json valid_manifest() {
    json cubin = {{"sm", 86},
                  {"path", "sm86/scale.cubin"},
                  {"sha256", std::string(64, 'c')},
                  {"bytes", 4096},
                  {"registers", 16},
                  {"shared_bytes", 0}};
    json kernel = {
        {"name", "scale"},
        {"function", "scale"},
        {"source_sha256", std::string(64, 'a')},
        {"num_warps", 4},
        {"num_stages", 3},
        {"constants", {{"BLOCK", 256}}},
        {"args", json::array({{{"name", "x_ptr"}, {"type", "*fp32"}, {"divisibility", 16}}})},
        {"hidden_args", json::array({"global_scratch", "profile_scratch"})},
        {"global_scratch_bytes", 0},
        {"profile_scratch_bytes", 0},
        {"cubins", json::array({cubin})}};
    return {{"format", "tensoracle-cubin-bundle"},
            {"version", 1},
            {"producer", {{"triton", "3.8.0"}, {"ptxas", "13.2.86"}}},
            {"targets", json::array({86})},
            {"kernels", json::array({kernel})}};
}

BundleManifest parse(json const& document) {
    std::string const text = document.dump();
    return parse_bundle_manifest(text, "bundle/bundle.json");
}

std::string refusal(json const& document) {
    try {
        parse(document);
    } catch (BundleError const& error) {
        return error.what();
    }
    ADD_FAILURE() << "accepted: " << document.dump();
    return {};
}

TEST(BundleManifest, ValidManifestIsRead) {
    BundleManifest const manifest = parse(valid_manifest());
    ASSERT_EQ(manifest.kernels.size(), 1U);
    EXPECT_EQ(manifest.targets, std::vector<std::uint32_t>{86});
    EXPECT_EQ(manifest.kernels[0].cubins[0].path, "sm86/scale.cubin");
    EXPECT_EQ(manifest.sha256.size(), 64U);
}

TEST(BundleManifest, CubinPathMustBeItsOwnSmAndKernel) {
    json document = valid_manifest();
    auto& path = document["kernels"][0]["cubins"][0]["path"];
    for (char const* bad : {"sm43/scale.cubin", "sm86/other.cubin", "/etc/passwd",
                            "sm86/../../outside.cubin", "./sm86/scale.cubin"}) {
        path = bad;
        std::string const message = refusal(document);
        EXPECT_NE(message.find("/kernels/0/cubins/0/path is not sm86/scale.cubin"),
                  std::string::npos)
            << message;
    }
}

TEST(BundleManifest, KernelNameMustBeAnIdentifier) {
    json document = valid_manifest();
    document["kernels"][0]["name"] = "../../x";
    document["kernels"][0]["cubins"][0]["path"] = "sm86/../../x.cubin";
    EXPECT_NE(refusal(document).find("/kernels/0/name is not a C identifier"), std::string::npos);
}

TEST(BundleManifest, TargetBeyond32BitsIsRefusedNotTruncated) {
    json document = valid_manifest();
    document["targets"] = json::array({(1ULL << 32U) + 86U});
    EXPECT_NE(refusal(document).find("/targets holds a value that is not an SM number"),
              std::string::npos);
}

TEST(BundleManifest, NotJsonNamesTheFile) {
    std::string const text = "{\"format\": ";
    try {
        parse_bundle_manifest(text, "bundle/bundle.json");
        FAIL() << "accepted truncated JSON";
    } catch (BundleError const& error) {
        EXPECT_NE(std::string(error.what()).find("bundle/bundle.json' is not JSON"),
                  std::string::npos);
    }
}

TEST(BundleManifest, NumberBeyondDoubleIsABundleErrorNotAJsonException) {
    // nlohmann::json reports 1e999 as out_of_range, not parse_error; it used to escape.
    std::string const text = R"({"format": "tensoracle-cubin-bundle", "version": 1e999})";
    try {
        parse_bundle_manifest(text, "bundle/bundle.json");
        FAIL() << "accepted an overflowing number";
    } catch (BundleError const& error) {
        EXPECT_NE(std::string(error.what()).find("bundle/bundle.json' is not JSON"),
                  std::string::npos);
    }
}

TEST(BundleManifest, AnEmptyBundleIsRefused) {
    json document = valid_manifest();
    document["kernels"] = json::array();
    EXPECT_NE(refusal(document).find("/kernels is empty"), std::string::npos);
    document = valid_manifest();
    document["targets"] = json::array();
    EXPECT_NE(refusal(document).find("/targets is empty"), std::string::npos);
}

TEST(BundleManifest, RepeatedKernelsTargetsAndCubinsAreRefused) {
    json document = valid_manifest();
    document["kernels"].push_back(document["kernels"][0]);
    std::string const kernels = refusal(document);
    EXPECT_NE(kernels.find("/kernels/1/name repeats the kernel name 'scale'"), std::string::npos)
        << kernels;
    document = valid_manifest();
    document["targets"] = {86, 86};
    EXPECT_NE(refusal(document).find("names sm86 twice"), std::string::npos);
    document = valid_manifest();
    document["kernels"][0]["cubins"].push_back(document["kernels"][0]["cubins"][0]);
    std::string const cubins = refusal(document);
    EXPECT_NE(cubins.find("/kernels/0/cubins/1/sm lists a second cubin for sm86"),
              std::string::npos)
        << cubins;
}

TEST(BundleManifest, DeepNestingIsRefusedAsNotJson) {
    json document = valid_manifest();
    std::string text = document.dump();
    text.insert(text.size() - 1,
                R"(,"extra":)" + std::string(20'000, '[') + std::string(20'000, ']'));
    try {
        parse_bundle_manifest(text, "bundle/bundle.json");
        FAIL() << "accepted";
    } catch (BundleError const& error) {
        EXPECT_NE(std::string(error.what()).find("deeper than the limit"), std::string::npos)
            << error.what();
    }
}

} // namespace
} // namespace tensoracle::cubin
