// Tests bundle inspection in C++ on a small bundle whose cubins ptxas builds at test time: an
// intact bundle passes, and each kind of damage raises its own error.
#include "ptxas_support.hpp"
#include "tensoracle/bundle_inspect.hpp"
#include "tensoracle/bundle_manifest.hpp"
#include "tensoracle/cubin_elf.hpp"
#include "tensoracle/errors.hpp"
#include "tensoracle/hash.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace tensoracle;

using tensoracle::testing::find_ptxas;

std::string read_text(fs::path const& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_text(fs::path const& path, std::string const& text) {
    std::ofstream(path, std::ios::binary) << text;
}

std::string digest_of(std::string const& text) {
    return sha256_hex(text);
}

// A bundle with one kernel `probe(float*, int)` for sm86 and sm89, laid out as the producer does.
class BundleInspect : public ::testing::Test {
protected:
    void SetUp() override {
        auto const ptxas = find_ptxas();
        if (!ptxas) {
            GTEST_SKIP() << "no ptxas: set TENSORACLE_PTXAS or install nvidia-cuda-nvcc into .venv";
        }
        root_ = fs::temp_directory_path() /
                ("tensoracle-bundle-inspect-" +
                 std::string{::testing::UnitTest::GetInstance()->current_test_info()->name()});
        fs::remove_all(root_);
        fs::create_directories(root_ / "bundle");
        nlohmann::json cubins = nlohmann::json::array();
        for (int sm : {86, 89}) {
            std::string const arch = "sm_" + std::to_string(sm);
            fs::path const ptx = root_ / (arch + ".ptx");
            write_text(ptx, ".version 8.7\n.target " + arch +
                                "\n.address_size 64\n"
                                ".visible .entry probe(.param .u64 p0, .param .u32 p1, "
                                ".param .u64 p2, .param .u64 p3)\n{\n  ret;\n}\n");
            fs::create_directories(root_ / "bundle" / ("sm" + std::to_string(sm)));
            std::string const relative = "sm" + std::to_string(sm) + "/probe.cubin";
            std::string const command = ptxas->string() + " --gpu-name=" + arch + " " +
                                        ptx.string() + " -o " +
                                        (root_ / "bundle" / relative).string();
            ASSERT_EQ(std::system(command.c_str()), 0) << command;
            std::string const bytes = read_text(root_ / "bundle" / relative);
            cubins.push_back({{"sm", sm},
                              {"path", relative},
                              {"sha256", digest_of(bytes)},
                              {"bytes", bytes.size()},
                              {"registers", 0},
                              {"shared_bytes", 0}});
        }
        manifest_ = {{"format", "tensoracle-cubin-bundle"},
                     {"version", 1},
                     {"producer", {{"triton", "3.8.0"}, {"ptxas", "13.2.86"}}},
                     {"targets", {86, 89}},
                     {"kernels",
                      {{{"name", "probe"},
                        {"function", "probe"},
                        {"source_sha256", std::string(64, '0')},
                        {"num_warps", 4},
                        {"hidden_args", {"global_scratch", "profile_scratch"}},
                        {"global_scratch_bytes", 0},
                        {"profile_scratch_bytes", 0},
                        {"args",
                         {{{"name", "x"}, {"type", "*fp32"}, {"divisibility", 16}},
                          {{"name", "n"}, {"type", "i32"}, {"divisibility", 1}}}},
                        {"cubins", cubins}}}}};
        save();
    }
    void TearDown() override {
        std::error_code ignored;
        fs::remove_all(root_, ignored);
    }

    void save() { write_text(bundle() / "bundle.json", manifest_.dump(2) + "\n"); }
    fs::path bundle() const { return root_ / "bundle"; }

    // A file holding the bundle marker with `digest` and the given cubins' bytes, the way a
    // library built from bundle.cpp holds them in its read-only data.
    fs::path library(std::string const& digest, std::vector<std::string> const& cubins) {
        std::string contents = "\x7f"
                               "ELF padding ";
        contents += std::string{cubin::embedded_marker_prefix} + digest + '\0';
        for (auto const& relative : cubins) {
            contents += read_text(bundle() / relative);
        }
        fs::path const path = root_ / "libprobe.so";
        write_text(path, contents);
        return path;
    }

    fs::path root_;
    nlohmann::json manifest_;
};

TEST_F(BundleInspect, IntactBundleAndLibraryPass) {
    auto const manifest_digest = digest_of(read_text(bundle() / "bundle.json"));
    auto const report = cubin::inspect_bundle(
        bundle(), library(manifest_digest, {"sm86/probe.cubin", "sm89/probe.cubin"}));
    ASSERT_EQ(report.cubins.size(), 2U);
    EXPECT_EQ(report.manifest.sha256, manifest_digest);
    for (auto const& check : report.cubins) {
        EXPECT_EQ(check.params, 4U);
        EXPECT_TRUE(check.in_plugin);
    }
    EXPECT_EQ(report.to_json()["cubins"][1]["elf_sm"], 89);
}

TEST_F(BundleInspect, MissingCorruptAndMislabelledCubinsRaiseTheirErrors) {
    fs::rename(bundle() / "sm89/probe.cubin", root_ / "saved.cubin");
    EXPECT_THROW(cubin::inspect_bundle(bundle()), MissingCubinError);

    fs::copy_file(bundle() / "sm86/probe.cubin", bundle() / "sm89/probe.cubin");
    manifest_["kernels"][0]["cubins"][1]["sha256"] =
        digest_of(read_text(bundle() / "sm89/probe.cubin"));
    save();
    EXPECT_THROW(cubin::inspect_bundle(bundle()), FalseSmClaimError);

    fs::copy_file(root_ / "saved.cubin", bundle() / "sm89/probe.cubin",
                  fs::copy_options::overwrite_existing);
    EXPECT_THROW(cubin::inspect_bundle(bundle()), CorruptCubinError); // digest now differs
}

TEST_F(BundleInspect, ParameterCountAndScratchAreChecked) {
    manifest_["kernels"][0]["args"].push_back(
        {{"name", "extra"}, {"type", "i32"}, {"divisibility", 1}});
    save();
    EXPECT_THROW(cubin::inspect_bundle(bundle()), BundleAbiError);
    manifest_["kernels"][0]["args"].erase(2);
    manifest_["kernels"][0]["profile_scratch_bytes"] = 64;
    save();
    EXPECT_THROW(cubin::inspect_bundle(bundle()), BundleAbiError);
}

TEST_F(BundleInspect, LibraryOfAnotherBundleOrMissingBytesIsAMismatch) {
    auto const manifest_digest = digest_of(read_text(bundle() / "bundle.json"));
    EXPECT_THROW(cubin::inspect_bundle(bundle(), library(std::string(64, 'a'),
                                                         {"sm86/probe.cubin", "sm89/probe.cubin"})),
                 PluginBundleMismatchError);
    EXPECT_THROW(cubin::inspect_bundle(bundle(), library(manifest_digest, {"sm86/probe.cubin"})),
                 PluginBundleMismatchError);
    EXPECT_THROW(cubin::inspect_bundle(bundle(), root_ / "absent.so"), PluginBundleMismatchError);
}

TEST_F(BundleInspect, MalformedManifestNamesTheField) {
    manifest_["kernels"][0].erase("num_warps");
    save();
    try {
        cubin::inspect_bundle(bundle());
        FAIL() << "malformed manifest accepted";
    } catch (BundleError const& error) {
        EXPECT_NE(std::string{error.what()}.find("/kernels/0/num_warps is missing"),
                  std::string::npos)
            << error.what();
    }
}

TEST_F(BundleInspect, AWrongBytesFieldIsCorrupt) {
    manifest_["kernels"][0]["cubins"][0]["bytes"] =
        manifest_["kernels"][0]["cubins"][0]["bytes"].get<std::uint64_t>() + 1;
    save();
    try {
        cubin::inspect_bundle(bundle());
        FAIL() << "a wrong size was accepted";
    } catch (CorruptCubinError const& error) {
        EXPECT_NE(std::string{error.what()}.find("bundle.json records"), std::string::npos)
            << error.what();
    }
}

TEST_F(BundleInspect, ACubinLinkedOutsideTheBundleIsRefused) {
    fs::rename(bundle() / "sm89/probe.cubin", root_ / "outside.cubin");
    fs::create_symlink(root_ / "outside.cubin", bundle() / "sm89/probe.cubin");
    try {
        cubin::inspect_bundle(bundle());
        FAIL() << "a link outside the bundle was followed";
    } catch (CorruptCubinError const& error) {
        EXPECT_NE(std::string{error.what()}.find("outside the bundle directory"), std::string::npos)
            << error.what();
    }
    // The same through a linked SM folder.
    fs::remove(bundle() / "sm89/probe.cubin");
    fs::rename(bundle() / "sm89", root_ / "sm89");
    fs::rename(root_ / "outside.cubin", root_ / "sm89/probe.cubin");
    fs::create_directory_symlink(root_ / "sm89", bundle() / "sm89");
    EXPECT_THROW(cubin::inspect_bundle(bundle()), CorruptCubinError);
}

TEST_F(BundleInspect, AManifestBeyondTheLimitIsRefusedUnread) {
    std::ofstream(bundle() / "bundle.json", std::ios::binary | std::ios::app)
        << std::string(cubin::kMaxManifestBytes, ' ');
    try {
        cubin::inspect_bundle(bundle());
        FAIL() << "an oversized manifest was accepted";
    } catch (BundleError const& error) {
        EXPECT_NE(std::string{error.what()}.find("larger than the limit"), std::string::npos)
            << error.what();
    }
}

} // namespace
