// parse_bundle_manifest on bundle.json documents of schema version 1: every rule of inspection up
// to the cubin files, the order in which they are checked, the error class of each, the digest,
// and the safe relative path rule.
#include "cubin/bundle_reader.hpp"
#include "io/hash.hpp"
#include "tensoracle/cubin/bundle_manifest.hpp"
#include "tensoracle/errors.hpp"
#include "text/canonical_json.hpp"

#include <functional>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>

namespace tensoracle::cubin {
namespace {

using nlohmann::json;

json valid_entry(std::string const& name = "scale", int sm = 86) {
    std::string const target = "sm" + std::to_string(sm);
    return {{"id", target + "." + name},
            {"file", "cubins/" + target + "/" + name + ".cubin"},
            {"target_sm", target},
            {"entry_symbol", name + "_kernel"},
            {"embedded_symbol", "tensoracle_cubin_" + target + "_" + name},
            {"sha256", std::string(64, 'c')},
            {"bytes", 4096},
            {"signature", json::array({{{"name", "x"}, {"type", "*fp32"}},
                                       {{"name", "n"}, {"type", "i32"}},
                                       {{"name", "alpha"}, {"type", "fp32"}}})},
            {"hidden_trailing_parameters",
             json::array({{{"name", "global_scratch"}, {"parameter_bytes", 8}},
                          {{"name", "profile_scratch"}, {"parameter_bytes", 8}}})},
            {"resources",
             {{"compiled_shared_memory_bytes", 0},
              {"launch_dynamic_shared_memory_bytes", 0},
              {"registers_per_thread", 16},
              {"global_scratch_bytes", 0},
              {"profile_scratch_bytes", 0}}},
            {"specialization", {{"divisible_by", {{"x", 16}, {"n", 16}}}}},
            {"source_sha256", std::string(64, 'a')}};
}

json valid_manifest() {
    return {{"schema_version", 1},
            {"producer", {{"triton", "3.8.0"}, {"ptxas", "13.2.86"}}},
            {"entries", json::array({valid_entry("scale", 86), valid_entry("scale", 89)})}};
}

BundleManifest parse(json const& document) {
    std::string const text = document.dump();
    return parse_bundle_manifest(text, "bundle/bundle.json");
}

// The message of the error `document` raises, which must be of class E.
template <typename E = BundleError>
std::string refusal(json const& document) {
    try {
        parse(document);
    } catch (BundleError const& error) {
        if constexpr (!std::is_same_v<E, BundleError>) {
            EXPECT_NE(dynamic_cast<E const*>(&error), nullptr) << "another class: " << error.what();
        }
        return error.what();
    }
    ADD_FAILURE() << "accepted: " << document.dump();
    return {};
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(BundleManifest, AValidManifestIsReadIntoEntries) {
    BundleManifest const manifest = parse(valid_manifest());
    ASSERT_EQ(manifest.entries.size(), 2U);
    ManifestEntry const& entry = manifest.entries[1];
    EXPECT_EQ(entry.index, 1U);
    EXPECT_EQ(entry.sm, 89U);
    EXPECT_EQ(entry.file, "cubins/sm89/scale.cubin");
    EXPECT_EQ(entry.kernel_name(), "scale");
    EXPECT_EQ(entry.entry_symbol, "scale_kernel");
    EXPECT_EQ(entry.embedded_symbol, "tensoracle_cubin_sm89_scale");
    ASSERT_EQ(entry.signature.size(), 3U);
    EXPECT_EQ(entry.signature[0].divisibility, 16U);
    EXPECT_EQ(entry.signature[0].kind, ArgType::pointer);
    EXPECT_EQ(entry.signature[2].divisibility, 1U);
    EXPECT_EQ(entry.signature[2].kind, ArgType::f32);
    EXPECT_EQ(entry.resources.registers_per_thread, 16U);
    EXPECT_EQ(manifest.triton_version, "3.8.0");
    EXPECT_EQ(manifest.digest, bundle_sha256(valid_manifest(), "x"));
}

TEST(BundleManifest, OptionalFieldsMayBeAbsentAndUnknownKeysAreIgnored) {
    json document = valid_manifest();
    document.erase("producer");
    document["future"] = {{"anything", true}};
    for (json& entry : document["entries"]) {
        entry.erase("id");
        entry.erase("embedded_symbol");
        entry.erase("source_sha256");
        entry["extra"] = "kept in the digest";
        entry["specialization"]["divisible_by"] = json::object();
    }
    BundleManifest const manifest = parse(document);
    EXPECT_EQ(manifest.entries[0].kernel_name(), "scale"); // the file's stem
    EXPECT_FALSE(manifest.entries[0].embedded_symbol);
    EXPECT_EQ(manifest.entries[0].signature[0].divisibility, 1U);
    EXPECT_FALSE(manifest.triton_version);
}

TEST(BundleManifest, TheTopLevelIsCheckedFirst) {
    EXPECT_HAS(refusal(json::array()), "expected an object with schema_version 1");
    json no_version = valid_manifest();
    no_version.erase("schema_version");
    EXPECT_HAS(refusal(no_version), "schema_version is missing");
    for (json const& version : {json(2), json("1"), json(true), json(0)}) {
        json document = valid_manifest();
        document["schema_version"] = version;
        EXPECT_HAS(refusal(document), "schema_version is " + version.dump());
    }
    for (json const& entries : {json(nullptr), json::array(), json::object(), json("x")}) {
        json document = valid_manifest();
        document["entries"] = entries;
        EXPECT_HAS(refusal(document), "entries is " + entries.dump());
    }
    std::string const text = "{\"schema_version\": 1,";
    try {
        parse_bundle_manifest(text, "bundle/bundle.json");
        FAIL() << "truncated JSON accepted";
    } catch (BundleError const& error) {
        EXPECT_HAS(std::string{error.what()}, "'bundle/bundle.json' is not JSON");
    }
}

TEST(BundleManifest, ARecordedDigestMustBeTheManifestsOwn) {
    json document = valid_manifest();
    std::string const digest = bundle_sha256(document, "x");
    document["bundle_sha256"] = digest;
    EXPECT_EQ(parse(document).digest, digest);
    document["bundle_sha256"] = std::string(64, '0');
    std::string const message = refusal(document);
    EXPECT_HAS(message, "bundle_sha256 is \"000");
    EXPECT_HAS(message, digest);
    // The digest is checked before the entries: a broken entry is not reached.
    document["entries"][0]["target_sm"] = "sm75";
    EXPECT_HAS(refusal(document), "bundle_sha256");
}

TEST(BundleManifest, TheDigestIsTheSha256OfPythonsCanonicalJsonWithoutItsOwnKey) {
    json document = valid_manifest();
    document["entries"][0]["note"] = "caf\xc3\xa9 \x7f \xf0\x9f\x98\x80 \"q\" \\ \n\x01";
    std::string const digest = bundle_sha256(document, "x");
    document["bundle_sha256"] = "ignored";
    EXPECT_EQ(bundle_sha256(document, "x"), digest);
    document.erase("bundle_sha256");
    EXPECT_EQ(digest, sha256_hex(python_canonical_json(document)));
    std::string const canonical = python_canonical_json(document);
    EXPECT_HAS(canonical, R"("note":"caf\u00e9 \u007f \ud83d\ude00 \"q\" \\ \n\u0001")");
    EXPECT_EQ(python_canonical_json(json::parse(R"({"b":[1,-2,18446744073709551615],"a":{}})")),
              R"({"a":{},"b":[1,-2,18446744073709551615]})");
}

TEST(BundleManifest, FloatsAndIntegersBeyond64BitsHaveNoDigest) {
    for (char const* number : {"1.5", "1e3", "18446744073709551616", "-9223372036854775809"}) {
        json document = valid_manifest();
        document["entries"][0]["extra"] = json::parse(number);
        EXPECT_HAS(refusal(document), "/entries/0/extra");
    }
}

// One change to entry 0 of a valid manifest and the words its refusal must contain.
struct Case {
    std::string name;
    std::function<void(json&)> change;
    std::string expected;
    bool abi = false; // the refusal is a BundleAbiError
};

TEST(BundleManifest, EachEntryRuleNamesTheFieldAndTheValue) {
    std::vector<Case> const cases = {
        {"not an object", [](json& e) { e = 7; }, "entries[0] is 7, expected an entry object"},
        {"target", [](json& e) { e["target_sm"] = "sm75"; }, "entries[0].target_sm is \"sm75\""},
        {"target number", [](json& e) { e["target_sm"] = 86; }, "entries[0].target_sm is 86"},
        {"hidden", [](json& e) { e["hidden_trailing_parameters"].erase(1); },
         "entries[0].hidden_trailing_parameters is", true},
        {"hidden float",
         [](json& e) { e["hidden_trailing_parameters"][0]["parameter_bytes"] = 8.0; },
         "/entries/0/extra", false},
        {"resources", [](json& e) { e["resources"] = json::array(); },
         "entries[0].resources is [], expected an object"},
        {"scratch", [](json& e) { e["resources"]["global_scratch_bytes"] = 64; },
         "global_scratch_bytes is 64, expected 0: kernels that need scratch", true},
        {"profile scratch", [](json& e) { e["resources"].erase("profile_scratch_bytes"); },
         "profile_scratch_bytes is missing", true},
        {"negative shared", [](json& e) { e["resources"]["compiled_shared_memory_bytes"] = -1; },
         "compiled_shared_memory_bytes is -1, expected an integer >= 0"},
        {"bool registers", [](json& e) { e["resources"]["registers_per_thread"] = true; },
         "registers_per_thread is true, expected an integer >= 1"},
        {"no registers", [](json& e) { e["resources"]["registers_per_thread"] = 0; },
         "registers_per_thread is 0"},
        {"dynamic below compiled",
         [](json& e) {
             e["resources"]["compiled_shared_memory_bytes"] = 1024;
             e["resources"]["launch_dynamic_shared_memory_bytes"] = 512;
         },
         "launch_dynamic_shared_memory_bytes is 512, expected an integer >= "
         "compiled_shared_memory_bytes (1024)"},
        {"entry symbol", [](json& e) { e["entry_symbol"] = ""; },
         "entries[0].entry_symbol is \"\""},
        {"signature type", [](json& e) { e["signature"] = "x"; }, "entries[0].signature is \"x\""},
        {"no argument", [](json& e) { e["signature"] = json::array(); },
         "holds 0 arguments, expected 1 to 14 arguments", true},
        {"15 arguments",
         [](json& e) {
             e["signature"] = json::array();
             for (int i = 0; i < 15; ++i) {
                 e["signature"].push_back({{"name", "a" + std::to_string(i)}, {"type", "i32"}});
             }
             e["specialization"]["divisible_by"] = json::object();
         },
         "holds 15 arguments", true},
        {"argument name twice", [](json& e) { e["signature"][1]["name"] = "x"; },
         "entries[0].signature[1].name is \"x\", expected a name no other argument", true},
        {"argument type", [](json& e) { e["signature"][1]["type"] = "i64"; },
         "entries[0].signature[1].type is \"i64\", expected one of the argument types", true},
        {"specialization key", [](json& e) { e["specialization"]["other"] = 1; },
         "(the specialization)"},
        {"specialization name", [](json& e) { e["specialization"]["divisible_by"]["y"] = 16; },
         "names 'y', expected argument names of the signature (the specialization)"},
        {"divisor 3", [](json& e) { e["specialization"]["divisible_by"]["n"] = 3; },
         "divisible_by.n is 3, expected an integer power of two"},
        {"divisor 2^31",
         [](json& e) { e["specialization"]["divisible_by"]["n"] = std::int64_t{1} << 31; },
         "divisible_by.n is 2147483648"},
        {"divisor 0", [](json& e) { e["specialization"]["divisible_by"]["n"] = 0; },
         "divisible_by.n is 0"},
        {"divisor bool", [](json& e) { e["specialization"]["divisible_by"]["n"] = true; },
         "divisible_by.n is true"},
        {"fp32 divisor", [](json& e) { e["specialization"]["divisible_by"]["alpha"] = 16; },
         "divisible_by.alpha is 16, expected 1 for the fp32 argument"},
        {"unsafe file", [](json& e) { e["file"] = "../x.cubin"; },
         "entries[0].file is \"../x.cubin\", expected a safe relative path inside the bundle "
         "directory (invalid cubin path)"},
        {"sha256", [](json& e) { e["sha256"] = "ABC"; }, "entries[0].sha256 is \"ABC\""},
        {"bytes", [](json& e) { e["bytes"] = "4096"; }, "entries[0].bytes is \"4096\""},
        {"embedded symbol", [](json& e) { e["embedded_symbol"] = 5; },
         "entries[0].embedded_symbol is 5, expected a string"},
    };
    for (Case const& each : cases) {
        SCOPED_TRACE(each.name);
        json document = valid_manifest();
        each.change(document["entries"][0]);
        std::string const message =
            each.abi ? refusal<BundleAbiError>(document) : refusal(document);
        if (each.name == "hidden float") {
            EXPECT_HAS(message, "/entries/0/hidden_trailing_parameters/0/parameter_bytes");
            continue;
        }
        EXPECT_HAS(message, each.expected);
        EXPECT_HAS(message, "bundle/bundle.json: ");
    }
}

TEST(BundleManifest, TwoEntriesMayNotNameOneFile) {
    json document = valid_manifest();
    document["entries"][1]["file"] = "cubins/sm86/scale.cubin";
    EXPECT_HAS(refusal(document), "entries[1].file is \"cubins/sm86/scale.cubin\", expected a "
                                  "file no earlier entry names (duplicate file)");
}

TEST(BundleManifest, AnEntryWithTwoProblemsRaisesTheEarlierRule) {
    // target_sm comes before the hidden parameters, scratch before the sizes, the signature
    // before the specialization, the specialization before the file.
    json document = valid_manifest();
    document["entries"][0]["target_sm"] = "sm75";
    document["entries"][0]["hidden_trailing_parameters"] = json::array();
    EXPECT_HAS(refusal(document), "target_sm");
    document = valid_manifest();
    document["entries"][0]["resources"]["global_scratch_bytes"] = 1;
    document["entries"][0]["resources"]["registers_per_thread"] = 0;
    EXPECT_HAS(refusal(document), "global_scratch_bytes");
    document = valid_manifest();
    document["entries"][0]["signature"][0]["type"] = "*bf16";
    document["entries"][0]["specialization"]["divisible_by"]["n"] = 3;
    EXPECT_HAS(refusal(document), "signature[0].type");
    document = valid_manifest();
    document["entries"][0]["specialization"]["divisible_by"]["n"] = 3;
    document["entries"][0]["file"] = "/abs.cubin";
    EXPECT_HAS(refusal(document), "specialization");
    // Entry 0 is checked whole before entry 1.
    document = valid_manifest();
    document["entries"][0]["file"] = "/abs.cubin";
    document["entries"][1]["target_sm"] = "sm75";
    EXPECT_HAS(refusal(document), "entries[0].file");
}

TEST(BundleManifest, TheVisitorSeesEachEntryBeforeTheNextIsChecked) {
    json document = valid_manifest();
    document["entries"][1]["target_sm"] = "sm75";
    std::string const text = document.dump();
    std::vector<std::size_t> seen;
    EXPECT_THROW(parse_bundle_manifest(text, "b.json",
                                       [&](ManifestEntry const& e) { seen.push_back(e.index); }),
                 BundleError);
    EXPECT_EQ(seen, std::vector<std::size_t>{0});
}

TEST(BundleManifest, SafeRelativePathsFollowBothPosixAndWindowsRules) {
    for (char const* bad : {"/x", "../x", "a/../../x", "C:x", "C:/x", "C:\\x", "\\x",
                            "\\\\srv\\share\\x", "//srv/share/x", "a\\..\\x", "", "..", "a/.."}) {
        EXPECT_FALSE(is_safe_relative_path(bad)) << bad;
    }
    for (char const* good : {"cubins/sm86/a.cubin", "a", "a/b/c", "./a", "a..b/c", "..a"}) {
        EXPECT_TRUE(is_safe_relative_path(good)) << good;
    }
    EXPECT_FALSE(is_safe_relative_path(std::string_view{"a\0b", 3}));
}

TEST(BundleManifest, TheIdGivesTheKernelNameWhenItHasTheTargetPrefix) {
    json document = valid_manifest();
    document["entries"][0]["id"] = "sm86.dot.tf32-control";
    document["entries"][1]["id"] = "other";
    BundleManifest const manifest = parse(document);
    EXPECT_EQ(manifest.entries[0].kernel_name(), "dot.tf32-control");
    EXPECT_EQ(manifest.entries[1].kernel_name(), "scale");
}

} // namespace
} // namespace tensoracle::cubin
