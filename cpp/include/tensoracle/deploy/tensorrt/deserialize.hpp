// Deserializing a deployed engine's verified plan, after checking the TensorRT that built it,
// and loading a manifest entry (open, verify, deserialize).
//
// One piece of the TensorRT adapter, tensoracle/deploy/tensorrt.hpp (which applications
// include, and whose comment gives the whole path): header-only, compiled as C++17 against the
// application's TensorRT 11 headers.
#pragma once

#include "tensoracle/deploy/deployed_engine.hpp"
#include "tensoracle/deploy/manifest.hpp"
#include "tensoracle/deploy/selection.hpp"
#include "tensoracle/deploy/tensorrt/plan_stream.hpp"
#include "tensoracle/deploy/tensorrt/runtime.hpp"
#include "tensoracle/deploy/tensorrt/version.hpp"
#include "tensoracle/errors.hpp"

#include <NvInferRuntime.h>
#include <exception>
#include <memory>
#include <string>
#include <utility>

namespace tensoracle::deploy::tensorrt {

namespace detail {

inline void check_backend(DeployedEngine const& deployed, RuntimeBackend const& backend) {
    EntryConditions const& built = deployed.entry().runs_on;
    if (built.backend != backend.name || built.backend_version != backend.version) {
        throw EngineConditionError("the engine '" + deployed.path().string() + "' was built by " +
                                       built.backend + " " + built.backend_version +
                                       ", but this application runs " + backend.name + " " +
                                       backend.version + ": it cannot deserialize it",
                                   deployed.path());
    }
}

// TensorRT's engine from the verified plan of `deployed` (streamed: each chunk checked as
// TensorRT reads it, and the chunks it did not read checked after it returns), or null when
// TensorRT refuses the plan. A chunk refused by the stream is
// thrown (CorruptEngineError naming the chunk: the file is damaged, or changed since the open), and
// no engine of that deserialization is returned.
inline std::unique_ptr<nvinfer1::ICudaEngine> deserialize_plan(nvinfer1::IRuntime& runtime,
                                                               DeployedEngine const& deployed) {
    std::unique_ptr<nvinfer1::ICudaEngine> engine;
    if (deployed.streamed()) {
        VerifiedPlanStream stream(deployed);
        engine.reset(runtime.deserializeCudaEngine(stream));
        if (stream.failure()) {
            engine.reset();
            std::rethrow_exception(stream.failure());
        }
        if (engine) {
            try {
                stream.check_rest(); // what TensorRT did not read is checked before it is used
            } catch (...) {
                engine.reset();
                throw;
            }
        }
    } else {
        engine.reset(runtime.deserializeCudaEngine(deployed.plan_data(), deployed.plan_size()));
    }
    return engine;
}

inline CorruptEngineError refusal(DeployedEngine const& deployed, std::string const& reason) {
    return CorruptEngineError("TensorRT refused to deserialize the plan of '" +
                                  deployed.path().string() + "' (" +
                                  std::to_string(deployed.plan_size()) +
                                  " bytes, verified against its manifest entry): " + reason,
                              deployed.path());
}

} // namespace detail

// Deserializes the verified plan of `deployed` with `runtime`, after checking that the entry was
// built by the TensorRT `backend` runs (EngineConditionError naming the file, the recorded and
// the running backend otherwise: such an entry never reaches deserializeCudaEngine). Throws
// CorruptEngineError naming the file when TensorRT refuses the plan, or when a chunk of a
// streamed plan is not the verified one (the file is damaged, or changed since it was opened);
// TensorRtError when a streamed chunk cannot be copied to TensorRT's device memory.
inline std::unique_ptr<nvinfer1::ICudaEngine> deserialize(nvinfer1::IRuntime& runtime,
                                                          DeployedEngine const& deployed,
                                                          RuntimeBackend const& backend) {
    detail::check_backend(deployed, backend);
    std::unique_ptr<nvinfer1::ICudaEngine> engine = detail::deserialize_plan(runtime, deployed);
    if (!engine) {
        throw detail::refusal(deployed, "see the TensorRT log for the reason");
    }
    return engine;
}

// The same with a Runtime: the engine holds the Runtime (and so its logger), and `keep` (what it
// needs besides, such as its plugin libraries), until the engine is destroyed; a refusal quotes
// the errors TensorRT logged while deserializing. InvalidArgument for a null runtime.
inline std::shared_ptr<nvinfer1::ICudaEngine>
deserialize(std::shared_ptr<Runtime> const& runtime, DeployedEngine const& deployed,
            RuntimeBackend const& backend, std::shared_ptr<void const> keep = nullptr) {
    if (!runtime) {
        throw InvalidArgument("deserialize needs a Runtime, not null");
    }
    detail::check_backend(deployed, backend);
    (void)runtime->take_errors(); // only what this deserialization logs
    std::unique_ptr<nvinfer1::ICudaEngine> engine =
        detail::deserialize_plan(runtime->get(), deployed);
    if (!engine) {
        std::string const errors = runtime->take_errors();
        throw detail::refusal(deployed,
                              errors.empty() ? "see the TensorRT log for the reason" : errors);
    }
    // The deleter holds the runtime: TensorRT's engine is destroyed first, then the hold.
    return std::shared_ptr<nvinfer1::ICudaEngine>(
        engine.release(), [hold = runtime, keep = std::move(keep)](
                              nvinfer1::ICudaEngine* destroyed) { delete destroyed; });
}

// The same with the backend this application runs (runtime_backend()).
inline std::unique_ptr<nvinfer1::ICudaEngine> deserialize(nvinfer1::IRuntime& runtime,
                                                          DeployedEngine const& deployed) {
    return deserialize(runtime, deployed, runtime_backend());
}

// The application's whole path from a manifest entry to an engine: the entry opened from the
// cache folder and verified against the manifest (DeployedEngine::open: size, checksum,
// conditions, IO signature and, with a verify key, the signature; any refusal is thrown before
// TensorRT sees a byte), then deserialized with `runtime` (deserialize above). The engine does
// not need the plan once deserialized; `deployed` is kept for Execution and for messages.
struct LoadedEngine {
    DeployedEngine deployed;
    std::shared_ptr<nvinfer1::ICudaEngine> engine;
};

inline LoadedEngine load(nvinfer1::IRuntime& runtime, ManifestEntry const& entry,
                         OpenOptions const& options, RuntimeBackend const& backend) {
    DeployedEngine deployed = DeployedEngine::open(entry, options);
    std::shared_ptr<nvinfer1::ICudaEngine> engine = deserialize(runtime, deployed, backend);
    return LoadedEngine{std::move(deployed), std::move(engine)};
}

inline LoadedEngine load(std::shared_ptr<Runtime> const& runtime, ManifestEntry const& entry,
                         OpenOptions const& options, RuntimeBackend const& backend) {
    DeployedEngine deployed = DeployedEngine::open(entry, options);
    std::shared_ptr<nvinfer1::ICudaEngine> engine = deserialize(runtime, deployed, backend);
    return LoadedEngine{std::move(deployed), std::move(engine)};
}

} // namespace tensoracle::deploy::tensorrt
