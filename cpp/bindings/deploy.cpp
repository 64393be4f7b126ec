// Python binding of the rule that matches an entry's conditions against a described GPU (the one
// implementation behind tensoracle.cache.compatibility.cannot_run and target_of), and of the
// deployment manifest's reader.
#include "bindings.hpp"
#include "tensoracle/cache/engine_file.hpp"
#include "tensoracle/deploy/manifest.hpp"
#include "tensoracle/deploy/selection.hpp"
#include "tensoracle/errors.hpp"
#include "tensoracle/text/bounded_json.hpp"

#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace tensoracle::bindings {
namespace {

nlohmann::json parsed(std::string const& text, char const* argument) {
    try {
        return parse_bounded_json(text, {.max_bytes = kMaxHeaderBytes});
    } catch (JsonLimitError const& error) {
        throw InvalidArgument(std::string(argument) + " is not valid JSON: " + error.what());
    }
}

} // namespace

void bind_deploy(nb::module_& module) {
    module.def(
        "device_target",
        [](std::string const& device_json) {
            return deploy::target_of(deploy::device_from_json(parsed(device_json, "device_json"),
                                                              "the GPU description"));
        },
        nb::arg("device_json"),
        "The build target (\"sm89\") of the GPU described by `device_json` (a JSON object of "
        "properties). Raises ValueError naming compute_capability when it is not MAJOR.MINOR.");
    module.def(
        "cannot_run_json",
        [](std::string const& conditions_json,
           std::string const& device_json) -> std::optional<std::string> {
            auto const conditions = deploy::conditions_from_json(
                parsed(conditions_json, "conditions_json"), "the engine's conditions");
            auto const device =
                deploy::device_from_json(parsed(device_json, "device_json"), "the GPU description");
            return deploy::cannot_run(conditions, device);
        },
        nb::arg("conditions_json"), nb::arg("device_json"),
        "Why an engine with the identity conditions `conditions_json` cannot run on the GPU "
        "described by `device_json`, or None when it can. Raises ValueError naming a mistyped "
        "field.");
    module.def(
        "read_deploy_manifest",
        [](std::filesystem::path const& path) {
            deploy::Manifest const manifest = deploy::read_manifest(path);
            nb::list entries;
            for (deploy::ManifestEntry const& entry : manifest.entries) {
                nb::dict item;
                item["recipe"] = entry.recipe;
                item["graph_version"] = entry.graph_version;
                item["file_name"] = entry.file_name;
                item["backend"] = entry.runs_on.backend;
                item["backend_version"] = entry.runs_on.backend_version;
                nb::list targets;
                for (std::string const& target : entry.runs_on.targets) {
                    targets.append(target);
                }
                item["targets"] = targets;
                item["plan_size"] = entry.plan_size;
                item["plan_xxh3_128"] = entry.plan_xxh3_128;
                item["engine_bytes"] = entry.engine_bytes;
                item["fleet_key"] = entry.fleet ? nb::cast(entry.fleet->key) : nb::none();
                entries.append(item);
            }
            return entries;
        },
        nb::arg("path"),
        "The entries of the deployment manifest at `path` as the C++ library reads them (dicts "
        "of recipe, graph_version, file_name, backend, backend_version, targets, plan_size, "
        "plan_xxh3_128, engine_bytes, fleet_key). Raises ValueError naming the file, field and "
        "value of what it refuses, OSError when the file cannot be read.");
}

} // namespace tensoracle::bindings
