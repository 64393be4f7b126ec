// cpp_inference MANIFEST RECIPE_NAME
//
// Selects the entry of RECIPE_NAME in a deployment manifest (`tensoracle build --manifest`) for
// this machine's GPU and the TensorRT the application runs, prints what it selected and why,
// opens it from the cache folder (verified against the manifest, and its signature checked when
// TENSORACLE_REMOTE_VERIFY_KEY names a key), deserializes it with TensorRT, checks its IO and
// creates an execution unit, printing its tensors. On any refusal it prints the error's message
// and exits 1 (2 for a wrong command line). See README.md.
#include <NvInferRuntime.h>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tensoracle/cuda/gpu_properties.hpp>
#include <tensoracle/deploy/deployed_engine.hpp>
#include <tensoracle/deploy/manifest.hpp>
#include <tensoracle/deploy/selection.hpp>
#include <tensoracle/deploy/tensorrt.hpp>
#include <tensoracle/errors.hpp>
#include <variant>
#include <vector>

namespace deploy = tensoracle::deploy;

namespace {

// TensorRT's warnings and errors, on stderr.
class Logger : public nvinfer1::ILogger {
public:
    void log(Severity severity, char const* message) noexcept override {
        if (severity <= Severity::kWARNING) {
            std::cerr << "TensorRT: " << message << '\n';
        }
    }
};

// The variable of the Python package's test seam (tensoracle.gpu): a JSON object of GPU
// properties that describes another GPU instead of asking the driver. It only describes; without
// a real GPU, TensorRT still refuses to deserialize. Never set it outside tests.
constexpr char const* kDescribedGpuVariable = "TENSORACLE_DESCRIBED_GPU";

// This machine's GPU as the CUDA driver reports it (libcuda.so.1, loaded at run time).
deploy::DeviceDescription this_gpu() {
    char const* described = std::getenv(kDescribedGpuVariable);
    if (described != nullptr && *described != '\0') {
        nlohmann::json const value = nlohmann::json::parse(described, nullptr, false);
        if (value.is_discarded()) {
            throw tensoracle::InvalidArgument(std::string(kDescribedGpuVariable) + "='" +
                                              described + "' is not JSON");
        }
        return deploy::device_from_json(value, kDescribedGpuVariable);
    }
    tensoracle::GpuQuery const query = tensoracle::query_gpu_properties();
    if (!query.properties) {
        throw tensoracle::Error("no GPU can be described on this machine: " + query.absent_reason);
    }
    return deploy::describe(*query.properties);
}

std::string text_of(deploy::PropertyValue const& value) {
    if (auto const* text = std::get_if<std::string>(&value)) {
        return *text;
    }
    if (auto const* number = std::get_if<std::int64_t>(&value)) {
        return std::to_string(*number);
    }
    return std::get<bool>(value) ? "true" : "false";
}

std::string property(deploy::DeviceDescription const& device, std::string const& name) {
    auto const found = device.properties.find(name);
    return found == device.properties.end() ? "?" : text_of(found->second);
}

std::string shape_text(deploy::Shape const& shape) {
    std::string text = "[";
    for (std::size_t axis = 0; axis < shape.size(); ++axis) {
        text += (axis == 0 ? "" : ", ") + std::to_string(shape[axis]);
    }
    return text + "]";
}

int run(std::string const& manifest_path, std::string const& recipe) {
    deploy::Manifest const manifest = deploy::read_manifest(manifest_path);

    deploy::DeviceDescription const device = this_gpu();
    std::cout << "GPU: " << property(device, "name") << ", compute capability "
              << property(device, "compute_capability") << " (" << deploy::target_of(device)
              << ")\n";
    // The version of the TensorRT library loaded (one of another major version than the headers'
    // is refused): an entry runs only on the version that built it.
    deploy::RuntimeBackend const backend = deploy::tensorrt::runtime_backend();
    std::cout << "runtime: " << backend.name << " " << backend.version << "\n";

    // The recipe's entries, each named by its file name; select_entry judges them all and says
    // why the one it selects was chosen and why each other was not.
    std::vector<deploy::ManifestEntry const*> entries;
    std::vector<deploy::Candidate> candidates;
    for (deploy::ManifestEntry const& candidate : manifest.entries) {
        if (candidate.recipe == recipe) {
            entries.push_back(&candidate);
            candidates.push_back({candidate.file_name, candidate.runs_on});
        }
    }
    if (entries.empty()) {
        // Refused naming the recipes the manifest holds.
        static_cast<void>(deploy::select_for_device(manifest, recipe, device, backend));
    }
    deploy::Selection const selection = deploy::select_entry(candidates, device, backend);
    for (deploy::Rejection const& rejected : selection.rejected) {
        std::cout << "  not " << candidates[rejected.candidate].name << ": " << rejected.reason
                  << "\n";
    }
    if (!selection.chosen) {
        throw tensoracle::EngineTargetError(selection.refusal);
    }
    deploy::ManifestEntry const& entry = *entries[*selection.chosen];
    std::cout << "selected " << entry.file_name << ": " << selection.why << "\n";

    // Read from the cache folder and checked against the manifest before TensorRT sees a byte.
    deploy::DeployedEngine const deployed =
        deploy::DeployedEngine::open(entry, deploy::options_from_environment());
    std::cout << "opened " << deployed.path().string() << " (plan " << deployed.plan_size()
              << " bytes, "
              << (deployed.signer() ? "signed by " + *deployed.signer() : std::string("unsigned"))
              << ")\n";

    // Refused when TensorRT logs an error while creating it (a driver too old for its CUDA, no
    // usable GPU), rather than handing out a runtime that would crash when deserializing.
    Logger logger;
    deploy::tensorrt::Runtime runtime(logger);
    std::shared_ptr<nvinfer1::ICudaEngine> const engine =
        deploy::tensorrt::deserialize(runtime, deployed, backend);
    // Checks the engine's IO against the manifest entry, then creates the execution context.
    deploy::tensorrt::Execution unit(engine, deployed);
    for (deploy::TensorDescription const& tensor : unit.contract().tensors()) {
        std::cout << "  " << (tensor.is_input ? "input  " : "output ") << tensor.name << " "
                  << tensor.dtype << " " << shape_text(tensor.shape) << "\n";
    }
    std::cout << "ready: bind device buffers (unit.bind) and enqueue on a CUDA stream\n";
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: cpp_inference MANIFEST RECIPE_NAME\n";
        return 2;
    }
    try {
        return run(argv[1], argv[2]);
    } catch (tensoracle::Error const& error) {
        std::cerr << "cpp_inference: " << error.what() << "\n";
    } catch (std::exception const& error) {
        std::cerr << "cpp_inference: " << error.what() << "\n";
    }
    return 1;
}
