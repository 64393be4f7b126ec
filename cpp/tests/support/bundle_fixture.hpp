// Test support: a schema-1 bundle directory whose cubins ptxas assembles
// (support/ptxas_support.hpp: at test time on Linux, at build time for Windows), and a shared
// library compiled at test time by the system C++ compiler that exports the bundle's digest and
// cubins as a producer's bundle.cpp does (Linux only: an ELF library made by the Linux compiler).
#pragma once

#include "cubin/bundle_reader.hpp"
#include "io/hash.hpp"
#include "support/ptxas_support.hpp"
#include "tensoracle/cubin/bundle_manifest.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tensoracle::testing {

inline std::string read_text(std::filesystem::path const& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_text(std::filesystem::path const& path, std::string const& text) {
    std::ofstream(path, std::ios::binary) << text;
}

// bundle.json's entry for the probe cubin of `sm` in `root`.
inline nlohmann::json probe_entry(std::filesystem::path const& root, int sm) {
    std::string const target = "sm" + std::to_string(sm);
    std::string const file = "cubins/" + target + "/probe.cubin";
    std::string const bytes = read_text(root / file);
    return {{"id", target + ".probe"},
            {"file", file},
            {"target_sm", target},
            {"entry_symbol", "probe"},
            {"embedded_symbol", "tensoracle_cubin_" + target + "_probe"},
            {"sha256", sha256_hex(bytes)},
            {"bytes", bytes.size()},
            {"signature", {{{"name", "x"}, {"type", "*fp32"}}, {{"name", "n"}, {"type", "i32"}}}},
            {"hidden_trailing_parameters",
             {{{"name", "global_scratch"}, {"parameter_bytes", 8}},
              {{"name", "profile_scratch"}, {"parameter_bytes", 8}}}},
            {"resources",
             {{"compiled_shared_memory_bytes", 0},
              {"launch_dynamic_shared_memory_bytes", 0},
              {"registers_per_thread", 2},
              {"global_scratch_bytes", 0},
              {"profile_scratch_bytes", 0}}},
            {"specialization", {{"divisible_by", {{"x", 16}}}}}};
}

// Writes `manifest` as the producer does (sorted keys, indent 2, newline).
inline void write_manifest(std::filesystem::path const& root, nlohmann::json const& manifest) {
    write_text(root / cubin::manifest_file_name, manifest.dump(2) + "\n");
}

// Builds the probe bundle (the kernel of ptx/bundle_probe.ptx.in) for `sms` in `root` (created)
// and returns its manifest, with the digest recorded. False from `ok`, with the reason in `why`,
// when a cubin could not be made.
inline nlohmann::json make_probe_bundle(CubinMaker const& maker, std::filesystem::path const& root,
                                        std::vector<int> const& sms, bool& ok, std::string& why) {
    nlohmann::json entries = nlohmann::json::array();
    ok = true;
    for (int sm : sms) {
        std::filesystem::path const dir = root / "cubins" / ("sm" + std::to_string(sm));
        std::filesystem::create_directories(dir);
        ok = ok && maker.make("bundle_probe", "sm_" + std::to_string(sm), dir / "probe.cubin", why);
        entries.push_back(probe_entry(root, sm));
    }
    nlohmann::json manifest = {{"schema_version", 1},
                               {"producer", {{"triton", "3.8.0"}, {"ptxas", "13.2.86"}}},
                               {"entries", entries}};
    manifest["bundle_sha256"] = cubin::bundle_sha256(manifest, "fixture");
    write_manifest(root, manifest);
    return manifest;
}

// A C++ source exporting `digest` as tensoracle_bundle_sha256 and each named cubin's bytes.
inline std::string plugin_source(std::string const& digest,
                                 std::vector<std::pair<std::string, std::string>> const& cubins) {
    std::string text = "#define EXPORT __attribute__((visibility(\"default\")))\n"
                       "extern \"C\" EXPORT char const tensoracle_bundle_sha256[] = \"" +
                       digest + "\";\n";
    for (auto const& [symbol, bytes] : cubins) {
        text += "extern \"C\" EXPORT alignas(16) unsigned char const " + symbol + "[] = {";
        for (char const byte : bytes) {
            text += std::to_string(static_cast<unsigned char>(byte)) + ",";
        }
        text += "};\n";
    }
    text += "extern \"C\" EXPORT int getCreators() { return 0; }\n";
    return text;
}

// Compiles `source` into the shared library `library`; false when the compiler fails.
inline bool compile_library(std::string const& source, std::filesystem::path const& library) {
    std::filesystem::path const file = library.string() + ".cpp";
    write_text(file, source);
    std::string const command =
        "c++ -shared -fPIC -O1 " + file.string() + " -o " + library.string();
    return std::system(command.c_str()) == 0;
}

} // namespace tensoracle::testing
