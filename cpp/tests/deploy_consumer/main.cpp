// A C++17 application of the installed tensoracle::deploy: every public deploy header, errors.hpp
// and cuda/gpu_properties.hpp compile as C++17, and a function of each deploy source links from
// the package's archives (with the core's and the system libraries it needs).
//
// Built with DEPLOY_CONSUMER_WITHOUT_JSON it proves that no tensoracle header includes
// nlohmann_json; with DEPLOY_CONSUMER_JSON_DIAGNOSTICS it uses nlohmann_json with
// JSON_DIAGNOSTICS=1 (another ABI than the libraries') beside the library's types.
//
//   deploy_consumer CACHE_FOLDER [MANIFEST]
//   (CACHE_FOLDER: an empty folder, the entry it opens is not there; MANIFEST: a manifest whose
//   first entry is recipe "encoder" with an input "x" and an output "y")
#include <iostream>
#include <optional>
#include <string>
#include <tensoracle/cuda/gpu_properties.hpp>
#include <tensoracle/deploy/deployed_engine.hpp>
#include <tensoracle/deploy/execution_contract.hpp>
#include <tensoracle/deploy/manifest.hpp>
#include <tensoracle/deploy/plugin_library.hpp>
#include <tensoracle/deploy/selection.hpp>
#include <tensoracle/errors.hpp>
#include <vector>

#if defined(DEPLOY_CONSUMER_WITHOUT_JSON) && defined(INCLUDE_NLOHMANN_JSON_HPP_)
#error "a tensoracle header included nlohmann/json.hpp"
#endif
#ifdef DEPLOY_CONSUMER_JSON_DIAGNOSTICS
#include <nlohmann/json.hpp>
static_assert(JSON_DIAGNOSTICS == 1, "the consumer must use nlohmann_json's diagnostics ABI");
#endif

static_assert(__cplusplus == 201703L, "the consumer must compile as C++17");

namespace deploy = tensoracle::deploy;

namespace {

int failures = 0;

void check(bool passed, std::string const& what) {
    std::cout << (passed ? "ok   " : "FAIL ") << what << '\n';
    if (!passed) {
        ++failures;
    }
}

bool contains(std::string const& text, std::string const& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2 && argc != 3) {
        std::cerr << "usage: deploy_consumer CACHE_FOLDER [MANIFEST]\n";
        return 2;
    }

    // selection.cpp: a described GPU and the choice among candidates.
    tensoracle::GpuProperties gpu;
    gpu.name = "NVIDIA GeForce RTX 4090";
    gpu.compute_capability_major = 8;
    gpu.compute_capability_minor = 9;
    gpu.multiprocessor_count = 128;
    auto const device = deploy::describe(gpu);
    check(deploy::target_of(device) == "sm89", "describe and target_of give sm89");
    deploy::EntryConditions runs_on;
    runs_on.backend = deploy::kTensorRtRtx;
    runs_on.backend_version = "1.2.0.54";
    runs_on.targets = {"sm86", "sm89"};
    std::vector<deploy::Candidate> const candidates{{"encoder-a.engine", runs_on}};
    auto const selection = deploy::select_entry(
        candidates, device, deploy::RuntimeBackend{deploy::kTensorRtRtx, "1.2.0.54"});
    check(selection.chosen == std::optional<std::size_t>{0}, "select_entry chooses the entry");
    auto const refused = deploy::select_entry(
        candidates, device, deploy::RuntimeBackend{deploy::kTensorRtRtx, "1.3.0.0"});
    check(!refused.chosen && contains(refused.refusal, "encoder-a.engine"),
          "select_entry refuses another backend version, naming the entry");

    // manifest.cpp: a refused manifest names the file.
    try {
        deploy::parse_manifest(R"({"schema_version": 2})", "deploy.json");
        check(false, "parse_manifest refuses schema_version 2");
    } catch (tensoracle::InvalidArgument const& error) {
        check(contains(error.what(), "deploy.json"), "parse_manifest refuses schema_version 2");
    }

    // execution_contract.cpp: sizes of tensors.
    check(deploy::tensor_bytes("HALF", {2, 3}) == 12, "tensor_bytes of HALF [2, 3] is 12");

    // deployed_engine.cpp: an entry that is not in the cache folder is refused, naming it.
    deploy::ManifestEntry entry;
    entry.recipe = "encoder";
    entry.file_name = "encoder-0123456789abcdef.engine";
    deploy::OpenOptions options;
    options.cache_directory = argv[1];
    try {
        deploy::DeployedEngine::open(entry, options);
        check(false, "DeployedEngine::open refuses an entry that is not there");
    } catch (tensoracle::FileError const& error) {
        check(contains(error.what(), entry.file_name),
              "DeployedEngine::open refuses an entry that is not there");
    }

    // manifest.cpp: the conditions and the IO as the library's own types and as JSON text.
    if (argc == 3) {
        deploy::Manifest const manifest = deploy::read_manifest(argv[2]);
        deploy::ManifestEntry const& first = manifest.entries.at(0);
        check(first.recipe == "encoder" && contains(first.conditions_json, "\"name\":\"encoder\""),
              "read_manifest gives the entry's recipe and conditions_json");
        check(first.io && first.io->size() == 2 && (*first.io)[0].name == "x" &&
                  (*first.io)[0].is_input && (*first.io)[1].name == "y",
              "read_manifest gives the entry's IO signature as TensorDescriptions");
#ifdef DEPLOY_CONSUMER_JSON_DIAGNOSTICS
        nlohmann::json const conditions = nlohmann::json::parse(first.conditions_json);
        check(conditions.at("name") == first.recipe &&
                  conditions.at("backend") == first.runs_on.backend,
              "the application's nlohmann_json (diagnostics) reads conditions_json");
        nlohmann::json const io = nlohmann::json::parse(first.io_json);
        check(io.at("tensors").at(1).at("name") == "y",
              "the application's nlohmann_json (diagnostics) reads io_json");
#endif
    }

    // The core, linked through tensoracle::deploy: the driver is loaded at run time, if at all.
    auto const query = tensoracle::query_gpu_properties();
    check(query.properties.has_value() != !query.absent_reason.empty(),
          "query_gpu_properties describes a GPU or says why not");

    std::cout << (failures == 0 ? "all passed" : "failed") << '\n';
    return failures == 0 ? 0 : 1;
}
