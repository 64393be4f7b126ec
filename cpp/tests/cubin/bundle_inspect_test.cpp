// Bundle inspection in C++ on a schema-1 bundle whose cubins ptxas builds
// (support/ptxas_support.hpp) and a plugin library the system compiler builds at test time: an
// intact pair passes, each damage raises its own error in the documented order, and the dynsym
// reader finds the exported bytes.
#include "cubin/bundle_inspect.hpp"
#include "cubin/bundle_reader.hpp"
#include "cubin/library_exports.hpp"
#include "io/file_bytes.hpp"
#include "support/bundle_fixture.hpp"
#include "support/error_message.hpp"
#include "tensoracle/errors.hpp"

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;
using namespace tensoracle;
using nlohmann::json;
using tensoracle::testing::compile_library;
using tensoracle::testing::plugin_source;
using tensoracle::testing::read_text;
using tensoracle::testing::write_manifest;

#define EXPECT_HAS(text, part) EXPECT_NE(std::string{text}.find(part), std::string::npos) << (text)

class BundleInspect : public ::testing::Test {
protected:
    void SetUp() override {
        std::string why;
        auto const maker = tensoracle::testing::CubinMaker::find(why);
        if (!maker) {
            FAIL() << why;
        }
        root_ = fs::temp_directory_path() /
                ("tensoracle-bundle-inspect-" +
                 std::string{::testing::UnitTest::GetInstance()->current_test_info()->name()});
        fs::remove_all(root_);
        bool ok = false;
        manifest_ = tensoracle::testing::make_probe_bundle(*maker, bundle(), {86, 89}, ok, why);
        ASSERT_TRUE(ok) << why;
    }
    void TearDown() override {
        std::error_code ignored;
        fs::remove_all(root_, ignored);
    }

    fs::path bundle() const { return root_ / "bundle"; }
    std::string cubin(int sm) const {
        return read_text(bundle() / ("cubins/sm" + std::to_string(sm) + "/probe.cubin"));
    }
    void rewrite() { // the manifest after a change, with its digest brought up to date
        manifest_.erase("bundle_sha256");
        manifest_["bundle_sha256"] = cubin::bundle_sha256(manifest_, "x");
        write_manifest(bundle(), manifest_);
    }
    fs::path plugin(std::string const& digest,
                    std::vector<std::pair<std::string, std::string>> const& cubins) {
        fs::path const library = root_ / ("lib" + std::to_string(libraries_++) + ".so");
        EXPECT_TRUE(compile_library(plugin_source(digest, cubins), library));
        return library;
    }
    fs::path good_plugin() {
        return plugin(manifest_["bundle_sha256"], {{"tensoracle_cubin_sm86_probe", cubin(86)},
                                                   {"tensoracle_cubin_sm89_probe", cubin(89)}});
    }
    // The report of an inspection of the intact bundle (two entries), after checking what it says
    // of the bundle and of its sm89 entry.
    json intact_report(cubin::BundleInspection const& result) const {
        EXPECT_EQ(result.digest(), manifest_["bundle_sha256"]);
        json report = result.to_json();
        EXPECT_EQ(report["bundle_sha256"], manifest_["bundle_sha256"]);
        EXPECT_EQ(report["entries"][1]["target_sm"], "sm89");
        EXPECT_EQ(report["entries"][1]["kernel"], "probe");
        EXPECT_EQ(report["entries"][1]["params"], 4);
        return report;
    }
    template <typename E>
    std::string refusal(std::optional<fs::path> const& library = std::nullopt) {
        try {
            cubin::inspect_bundle(bundle(), library);
        } catch (E const& error) {
            return error.what();
        } catch (Error const& error) {
            ADD_FAILURE() << "another error class: " << error.what();
            return {};
        }
        ADD_FAILURE() << "inspection passed";
        return {};
    }

    fs::path root_;
    json manifest_;
    int libraries_ = 0;
};

TEST_F(BundleInspect, AnIntactBundlePassesAndGivesTheDigest) {
    cubin::BundleInspection const result = cubin::inspect_bundle(bundle());
    ASSERT_EQ(result.entries.size(), 2U);
    json const report = intact_report(result);
    EXPECT_TRUE(report["entries"][0]["in_plugin"].is_null());
}

TEST_F(BundleInspect, AnIntactBundleAndItsLibraryPassAndGiveTheDigest) {
    cubin::BundleInspection const result = cubin::inspect_bundle(bundle(), good_plugin());
    ASSERT_EQ(result.entries.size(), 2U);
    json const report = intact_report(result);
    EXPECT_EQ(report["entries"][1]["in_plugin"], true);
}

TEST_F(BundleInspect, AMissingManifestIsFileNotFound) {
    fs::remove(bundle() / "bundle.json");
    try {
        cubin::inspect_bundle(bundle());
        FAIL() << "passed";
    } catch (FileError const& error) {
        EXPECT_EQ(error.error_number(), ENOENT);
    }
}

TEST_F(BundleInspect, CubinFilesAreCheckedForPresenceLengthDigestAndSmInThatOrder) {
    fs::remove(bundle() / "cubins/sm89/probe.cubin");
    EXPECT_HAS(refusal<MissingCubinError>(), "entry 1 (field entries[1].file) does not exist");

    tensoracle::testing::write_text(bundle() / "cubins/sm89/probe.cubin", cubin(86) + "x");
    EXPECT_HAS(refusal<CorruptCubinError>(), "entries[1].bytes) is");

    std::string same_length = cubin(86);
    tensoracle::testing::write_text(bundle() / "cubins/sm89/probe.cubin", same_length);
    manifest_["entries"][1]["bytes"] = same_length.size();
    rewrite();
    EXPECT_HAS(refusal<CorruptCubinError>(), "entries[1].sha256) has SHA-256");

    // The sm86 cubin filed as sm89 with its own length and digest: only its ELF header tells.
    manifest_["entries"][1]["sha256"] = sha256_hex(same_length);
    rewrite();
    EXPECT_HAS(refusal<CubinArchitectureError>(), "is built for sm86, expected sm89");
    Refusal const fields = tensoracle::testing::refusal_of<CubinArchitectureError>(
        [&] { (void)cubin::inspect_bundle(bundle()); });
    EXPECT_EQ(tensoracle::testing::fields_of(fields),
              "subject=" + (bundle() / "cubins/sm89/probe.cubin").string() +
                  " | field=entries[1].target_sm | observed=sm86 | expected=sm89 | remedy=");
}

TEST_F(BundleInspect, AnEarlierEntrysCubinErrorWinsOverALaterEntrysManifestError) {
    fs::remove(bundle() / "cubins/sm86/probe.cubin");
    manifest_["entries"][1]["target_sm"] = "sm75";
    rewrite();
    EXPECT_HAS(refusal<MissingCubinError>(), "entry 0");
}

TEST_F(BundleInspect, ALinkOutOfTheDirectoryIsRefused) {
    fs::path const outside = root_ / "outside.cubin";
    fs::copy_file(bundle() / "cubins/sm86/probe.cubin", outside);
    fs::remove(bundle() / "cubins/sm86/probe.cubin");
    fs::create_symlink(outside, bundle() / "cubins/sm86/probe.cubin");
    EXPECT_HAS(refusal<CorruptCubinError>(), "outside the bundle directory");
}

TEST_F(BundleInspect, TheEntrySymbolMustBeAKernelOfTheCubinWithTheSignaturesLayout) {
    manifest_["entries"][0]["entry_symbol"] = "other";
    rewrite();
    EXPECT_HAS(refusal<CorruptCubinError>(), "has no kernel function 'other'");
    manifest_["entries"][0]["entry_symbol"] = "probe";
    manifest_["entries"][0]["signature"][1]["type"] = "*i32";
    rewrite();
    EXPECT_HAS(refusal<BundleAbiError>(), "argument 'n' (*i32) of kernel 'probe', is 4 bytes");
}

TEST_F(BundleInspect, ThePluginMustExportTheDigestAndEveryEmbeddedCubin) {
    std::string const digest = manifest_["bundle_sha256"];
    EXPECT_HAS(refusal<PluginBundleMismatchError>(root_ / "absent.so"), "does not exist");
    fs::path const text = root_ / "text.so";
    tensoracle::testing::write_text(text, "not a library");
    EXPECT_HAS(refusal<PluginBundleMismatchError>(text), "no readable bundle identity");

    EXPECT_HAS(refusal<PluginBundleMismatchError>(plugin(std::string(64, 'f'), {})),
               "exports tensoracle_bundle_sha256 = 'ffff");
    EXPECT_HAS(refusal<PluginBundleMismatchError>(plugin(digest + "0", {})),
               "(65 bytes): found 66 bytes");
    EXPECT_HAS(refusal<PluginBundleMismatchError>(
                   plugin(digest, {{"tensoracle_cubin_sm86_probe", cubin(86)}})),
               "does not export the embedded cubin 'tensoracle_cubin_sm89_probe' of entry 1");
    EXPECT_HAS(refusal<PluginBundleMismatchError>(
                   plugin(digest, {{"tensoracle_cubin_sm86_probe", cubin(86)},
                                   {"tensoracle_cubin_sm89_probe", cubin(89) + "x"}})),
               "with " + std::to_string(cubin(89).size() + 1) + " bytes, expected");
    std::string flipped = cubin(89);
    flipped.back() = static_cast<char>(flipped.back() ^ 1);
    EXPECT_HAS(
        refusal<PluginBundleMismatchError>(
            plugin(digest, {{"tensoracle_cubin_sm86_probe", cubin(86)},
                            {"tensoracle_cubin_sm89_probe", flipped}})),
        "embedded cubin 'tensoracle_cubin_sm89_probe' of entry 1 ('cubins/sm89/probe.cubin') "
        "with other bytes");
    // An entry without embedded_symbol is not looked for.
    manifest_["entries"][1].erase("embedded_symbol");
    rewrite();
    std::string const new_digest = manifest_["bundle_sha256"];
    auto const result = cubin::inspect_bundle(
        bundle(), plugin(new_digest, {{"tensoracle_cubin_sm86_probe", cubin(86)}}));
    EXPECT_EQ(result.to_json()["entries"][1]["in_plugin"], false);
}

TEST_F(BundleInspect, TheDynsymReaderGivesSizeAndFileOffsetOfExportedData) {
    fs::path const library = good_plugin();
    auto const bytes = read_file_bytes(library, std::uint64_t{1} << 30);
    ASSERT_TRUE(bytes);
    auto const view = std::as_bytes(std::span{*bytes});
    auto const symbols = elf_exported_data(view, library.string());
    ASSERT_TRUE(symbols.contains("tensoracle_bundle_sha256"));
    auto const& identity = symbols.at("tensoracle_bundle_sha256");
    EXPECT_EQ(identity.size, 65U);
    std::string const text(reinterpret_cast<char const*>(view.data()) + identity.offset, 64);
    EXPECT_EQ(text, manifest_["bundle_sha256"]);
    auto const& embedded = symbols.at("tensoracle_cubin_sm89_probe");
    EXPECT_EQ(embedded.size, cubin(89).size());
    EXPECT_EQ(
        std::string(reinterpret_cast<char const*>(view.data()) + embedded.offset, embedded.size),
        cubin(89));
    EXPECT_FALSE(symbols.contains("getCreators")); // a function, not data
    auto const functions = elf_exported_functions(view, library.string());
    EXPECT_NE(std::find(functions.begin(), functions.end(), "getCreators"), functions.end());
}

TEST_F(BundleInspect, LoadedBundleGroupsEntriesByKernelWithPerImageResources) {
    manifest_["entries"][1]["resources"]["registers_per_thread"] = 40;
    manifest_["entries"][1]["resources"]["launch_dynamic_shared_memory_bytes"] = 1024;
    rewrite();
    cubin::LoadedBundle const loaded(bundle());
    auto const& record = loaded.record();
    EXPECT_EQ(record.sha256, manifest_["bundle_sha256"]);
    ASSERT_EQ(record.kernels.size(), 1U);
    auto const& kernel = record.kernels[0];
    EXPECT_EQ(kernel.name, "probe");
    ASSERT_EQ(kernel.args.size(), 2U);
    EXPECT_EQ(kernel.args[0].divisibility, 16U);
    ASSERT_EQ(kernel.images.size(), 2U);
    EXPECT_EQ(kernel.images[0].sm, 86U);
    EXPECT_EQ(kernel.images[1].sm, 89U);
    EXPECT_EQ(kernel.images[1].registers, 40U);
    EXPECT_EQ(kernel.images[1].shared_bytes, 1024U);
    EXPECT_EQ(kernel.images[1].block_threads, 128U); // from the cubin's .reqntid
    EXPECT_EQ(kernel.images[1].function, "probe");
    std::string const bytes = cubin(89);
    EXPECT_EQ(std::string(reinterpret_cast<char const*>(kernel.images[1].bytes.data()),
                          kernel.images[1].bytes.size()),
              bytes);
}

TEST_F(BundleInspect, LoadedBundleRefusesTwoImagesOfOneKernelForOneSm) {
    manifest_["entries"][1]["target_sm"] = "sm86";
    manifest_["entries"][1]["id"] = "sm86.probe";
    rewrite();
    try {
        cubin::LoadedBundle const loaded(bundle());
        FAIL() << "loaded";
    } catch (BundleError const& error) {
        EXPECT_HAS(error.what(), "second sm86 image of kernel 'probe'");
    }
}

} // namespace
