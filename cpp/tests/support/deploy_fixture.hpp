// The manifest entry `tensoracle build --manifest` writes for a saved engine, for the tests of
// the deploy library: read back from the saved file as the build reads it.
#pragma once

#include "cache/engine_file.hpp"
#include "cache/identity.hpp"
#include "deploy/io_signature.hpp"
#include "deploy/json_forms.hpp"
#include "io/hash.hpp"
#include "support/test_support.hpp"
#include "tensoracle/deploy/manifest.hpp"
#include "text/canonical_json.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

namespace tensoracle::testing {

// The identity conditions of the tests' TensorRT-RTX engine "encoder" at `graph_version`.
inline nlohmann::json encoder_conditions(std::string const& graph_version = "3") {
    return {{"name", "encoder"},
            {"graph_version", graph_version},
            {"backend", "tensorrt_rtx"},
            {"backend_version", "1.7.1.116"},
            {"gpu", nullptr},
            {"targets", {"sm86", "sm89", "sm120"}}};
}

// Its IO signature: input x and output y, of `batch` rows (-1: ranged) of 8 and 4 floats.
inline nlohmann::json encoder_io(int batch = -1) {
    return {{"tensors",
             {{{"name", "x"}, {"mode", "INPUT"}, {"dtype", "FLOAT"}, {"shape", {batch, 8}}},
              {{"name", "y"}, {"mode", "OUTPUT"}, {"dtype", "FLOAT"}, {"shape", {batch, 4}}}}}};
}

// The entry of recipe "encoder", graph version "3", for the file `path` saved as `identity`
// with the IO signature `io`.
inline deploy::ManifestEntry manifest_entry_of(std::filesystem::path const& path,
                                               EngineIdentity const& identity,
                                               nlohmann::json const& io) {
    auto const header = read_engine_header(path).header;
    deploy::ManifestEntry entry;
    entry.recipe = "encoder";
    entry.graph_version = "3";
    entry.file_name = identity.file_name;
    entry.conditions_json = canonical_json(identity.conditions);
    entry.runs_on = deploy::conditions_from_json(identity.conditions, "conditions");
    if (!io.is_null()) {
        entry.io = deploy::io_from_json(io, "io");
    }
    entry.io_json = canonical_json(io);
    entry.plan_size = header.plan_size;
    entry.plan_xxh3_128 = header.plan_xxh3_128;
    entry.engine_bytes = std::filesystem::file_size(path);
    // The file's digests, as the build records them: of every byte, and of the preamble and
    // header (everything before the plan).
    auto const bytes = read_all(path);
    entry.sha256 = sha256_hex(bytes);
    entry.header_sha256 = sha256_hex(
        std::span(bytes).first(bytes.size() - static_cast<std::size_t>(header.plan_size)));
    return entry;
}

} // namespace tensoracle::testing
