// The short path: from a manifest to an execution unit (open_engine, open_engine_for, Engine).
//
// One piece of the TensorRT adapter, tensoracle/deploy/tensorrt.hpp (which applications
// include, and whose comment gives the whole path): header-only, compiled as C++17 against the
// application's TensorRT 11 headers.
#pragma once

#include "tensoracle/deploy/deployed_engine.hpp"
#include "tensoracle/deploy/manifest.hpp"
#include "tensoracle/deploy/plugin_library.hpp"
#include "tensoracle/deploy/selection.hpp"
#include "tensoracle/deploy/signed_manifest.hpp"
#include "tensoracle/deploy/tensorrt/deserialize.hpp"
#include "tensoracle/deploy/tensorrt/execution.hpp"
#include "tensoracle/deploy/tensorrt/plugins.hpp"
#include "tensoracle/deploy/tensorrt/runtime.hpp"
#include "tensoracle/deploy/tensorrt/version.hpp"
#include "tensoracle/errors.hpp"

#include <NvInferRuntime.h>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tensoracle::deploy::tensorrt {

// What open_engine needs besides the manifest and the recipe; every member has a default.
struct EngineOptions {
    // The cache folder, the verify key or trust policy (with which open_engine reads the
    // manifest: signed_manifest.hpp); unset: options_from_environment(). The short path
    // streams the plan whatever its stream_plan says (OpenOptions::stream_plan: each chunk of
    // kPlanChunkBytes checked as TensorRT reads it, for entries with chunk digests).
    std::optional<OpenOptions> open = std::nullopt;
    // The runtime to deserialize with; null: Runtime::create() (TensorRT's warnings and errors on
    // stderr). Share one among the engines of an application.
    std::shared_ptr<Runtime> runtime = nullptr;
    // The TensorRT the application runs; unset: runtime_backend(), the library loaded.
    std::optional<RuntimeBackend> backend = std::nullopt;
    // The plugin libraries the entry was built with (its conditions record their SHA-256): each
    // verified against them before TensorRT is called (verify_plugins), then loaded into the
    // runtime's plugin registry from its verified in-memory copy, and deregistered once the
    // engine is gone. Linux only.
    std::vector<std::filesystem::path> plugins{};
};

// An engine selected from a manifest for a CUDA device, verified and deserialized there, with
// what it depends on: it holds TensorRT's engine, which holds the Runtime and its logger, and
// every Execution it creates holds the engine in turn, so the application may let go of them in
// any order. The verified plan is not kept: TensorRT needs it only while deserializing. Movable,
// not copyable.
class Engine {
public:
    Engine(std::shared_ptr<nvinfer1::ICudaEngine> engine, DeployedEngine const& deployed,
           int device, std::string why)
        : engine_(std::move(engine)), entry_(deployed.entry()), path_(deployed.path()),
          signer_(deployed.signer()), plan_size_(deployed.plan_size()), device_(device),
          why_(std::move(why)) {}

    nvinfer1::ICudaEngine& get() const noexcept { return *engine_; }
    std::shared_ptr<nvinfer1::ICudaEngine> const& shared() const noexcept { return engine_; }
    // The manifest entry selected, and its file in the cache folder.
    ManifestEntry const& entry() const noexcept { return entry_; }
    std::filesystem::path const& path() const noexcept { return path_; }
    // The fingerprint of the key that accepted its signature (absent: opened without a key).
    std::optional<std::string> const& signer() const noexcept { return signer_; }
    std::size_t plan_size() const noexcept { return plan_size_; }
    // The CUDA device (ordinal) it was selected for and deserialized on.
    int device() const noexcept { return device_; }
    // Why selection chose this entry for that device (Selection::why).
    std::string const& why() const noexcept { return why_; }

    // A new execution unit (Execution) over this engine, on the device it was deserialized on:
    // EngineTargetError when another device is current in the calling thread (TensorRT runs an
    // engine only on its own device), then Execution's checks.
    Execution create_execution(ExecutionOptions const& options = {}) const {
        check_device(device_, current_gpu_ordinal(), path_);
        return Execution(engine_, entry_, path_, options);
    }

    // The rule of create_execution: nothing when `current` is `device` or unknown (no driver can
    // tell: TensorRT then reports its own error), else EngineTargetError naming both.
    static void check_device(int device, std::optional<int> current,
                             std::filesystem::path const& path) {
        if (current && *current != device) {
            throw EngineTargetError(
                "the engine '" + path.string() +
                "' was selected for and deserialized on CUDA "
                "device " +
                std::to_string(device) + ", but device " + std::to_string(*current) +
                " is current in this thread: TensorRT runs an engine only on the device it was "
                "deserialized on; make device " +
                std::to_string(device) +
                " current (cudaSetDevice) before creating an execution unit");
        }
    }

private:
    std::shared_ptr<nvinfer1::ICudaEngine> engine_;
    ManifestEntry entry_;
    std::filesystem::path path_;
    std::optional<std::string> signer_;
    std::size_t plan_size_ = 0;
    int device_ = 0;
    std::string why_;
};

// The entry of `recipe` in `manifest` that runs on `gpu` with the application's TensorRT
// (select_recipe's rule; EngineTargetError with every candidate's reason when none can,
// InvalidArgument naming the recipes when the manifest has none of `recipe`), opened from the
// cache folder and verified (DeployedEngine::open: nothing of it reaches TensorRT before), its
// plugin libraries verified (EngineOptions::plugins), then deserialized (deserialize: the backend
// checked first) with those libraries loaded from their verified copies. For an application that
// reads the manifest or describes the GPU itself; open_engine below does both.
inline Engine open_engine_for(Manifest const& manifest, std::string_view recipe,
                              CurrentGpu const& gpu, EngineOptions const& options = {}) {
    RuntimeBackend const backend = options.backend ? *options.backend : runtime_backend();
    OpenOptions open = options.open ? *options.open : options_from_environment();
    open.stream_plan = true;
    SelectedEngine const selected = open_selected(manifest, recipe, gpu.description, backend, open);
    DeployedEngine const& deployed = selected.engine;
    std::vector<VerifiedPluginLibrary> libraries = verify_plugins(*selected.entry, options.plugins);
    std::shared_ptr<Runtime> const runtime = options.runtime ? options.runtime : Runtime::create();
    std::shared_ptr<LoadedPlugins const> plugins;
    if (!libraries.empty()) {
        plugins = std::make_shared<LoadedPlugins const>(runtime, std::move(libraries));
    }
    std::shared_ptr<nvinfer1::ICudaEngine> engine =
        deserialize(runtime, deployed, backend, std::move(plugins));
    return Engine(std::move(engine), deployed, gpu.ordinal, selected.why);
}

// The short path: the manifest at `manifest` read and trusted with the options' keys or policy
// (read_manifest(path, options), signed_manifest.hpp), the GPU current in the calling thread
// described (describe_current_gpu: Error when there is none), then open_engine_for. Call it on
// the thread, with the device current, that runs the engine.
//
//   auto const engine = tensoracle::deploy::tensorrt::open_engine("deploy.json", "encoder");
//   auto unit = engine.create_execution();
inline Engine open_engine(std::filesystem::path const& manifest, std::string_view recipe,
                          EngineOptions const& options = {}) {
    Manifest const read =
        read_manifest(manifest, options.open ? *options.open : options_from_environment());
    return open_engine_for(read, recipe, describe_current_gpu(), options);
}

} // namespace tensoracle::deploy::tensorrt
