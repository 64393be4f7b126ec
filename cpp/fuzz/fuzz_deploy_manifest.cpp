// libFuzzer target: tensoracle::deploy::parse_manifest must either accept the bytes or throw
// InvalidArgument. What it accepts must be what an application may rely on: each entry's file
// name is the identity of its conditions, each member that repeats a condition equals it, and a
// selection over it (for a described GPU and both backends) ends in a choice or a refusal whose
// text stays short, whatever the entries.
#include "cache/identity.hpp"
#include "tensoracle/deploy/manifest.hpp"
#include "tensoracle/deploy/selection.hpp"
#include "tensoracle/errors.hpp"

#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    namespace deploy = tensoracle::deploy;
    std::string_view const text(reinterpret_cast<char const*>(data), size);
    deploy::Manifest manifest;
    try {
        manifest = deploy::parse_manifest(text, "fuzz/deploy.json");
    } catch (tensoracle::InvalidArgument const&) {
        return 0; // the expected outcome for a damaged manifest; anything else is a finding
    }
    for (deploy::ManifestEntry const& entry : manifest.entries) {
        // The conditions are given as canonical JSON text: it reads back as what was checked.
        nlohmann::json const conditions = nlohmann::json::parse(entry.conditions_json);
        if (tensoracle::recorded_identity(conditions).file_name != entry.file_name ||
            conditions.at("name") != entry.recipe ||
            conditions.at("backend") != entry.runs_on.backend ||
            conditions.at("backend_version") != entry.runs_on.backend_version ||
            entry.io.has_value() != (entry.io_json != "null")) {
            std::abort(); // an entry the reader should have refused
        }
    }
    deploy::DeviceDescription const device{{{"name", std::string("NVIDIA GeForce RTX 4090")},
                                            {"compute_capability", std::string("8.9")}}};
    for (deploy::RuntimeBackend const& backend :
         {deploy::RuntimeBackend{deploy::kTensorRtRtx, "1.7.1.116"},
          deploy::RuntimeBackend{deploy::kTensorRt, "11.1.0.106"}}) {
        for (deploy::ManifestEntry const& entry : manifest.entries) {
            try {
                auto const found = deploy::select_recipe(manifest, entry.recipe, device, backend);
                if (!found.selection.chosen && found.selection.refusal.size() > (64U << 10U)) {
                    std::abort(); // a refusal past any bound a few named candidates can reach
                }
            } catch (tensoracle::InvalidArgument const&) {
                // a device or target spelling the rule refuses, named
            }
            break; // one recipe is enough per input
        }
    }
    return 0;
}
