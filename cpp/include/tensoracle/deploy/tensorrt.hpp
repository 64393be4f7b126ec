// The TensorRT adapter of tensoracle::deploy: header-only, compiled by the application against
// its own TensorRT 11 headers (<NvInferRuntime.h>, which includes CUDA's <cuda_runtime_api.h>).
// tensoracle itself links no TensorRT; an application that includes this header links its
// TensorRT (libnvinfer) and CUDA's runtime (libcudart) as it would without tensoracle.
//
// The short path, on the thread and with the CUDA device current that will run the engine:
//
//   namespace trt = tensoracle::deploy::tensorrt;
//   trt::Engine const engine = trt::open_engine("deploy.json", "encoder"); // select, verify, load
//   trt::Execution unit = engine.create_execution();         // IO checked, context created
//   unit.set_input_shapes({{"x", {2, 3, 224, 224}}});        // every ranged input, once
//   unit.bind({{"x", x_device}, {"y", y_device}});           // the caller's device memory
//   unit.enqueue(stream);                                    // the caller synchronizes
//
// The same steps one by one, for an application that wants them: read_manifest, select_recipe
// (or select_for_device) for a described GPU, DeployedEngine::open, Runtime::create, deserialize,
// Execution. Only a DeployedEngine, whose bytes were verified against the manifest when it was
// opened, can reach deserializeCudaEngine. What the library returns keeps alive what it depends
// on: an Engine (or the engine deserialize returns) holds the Runtime and its logger, an
// Execution holds the engine. Every check of an execution unit is ExecutionContract's
// (execution_contract.hpp), made before the TensorRT call it guards; the calls themselves are
// thin: setInputShape, getTensorShape (outputs), setTensorAddress and enqueueV3 on the caller's
// stream. Nothing here allocates device memory, copies or synchronizes: outputs whose sizes depend
// on tensor values get their memory, during enqueueV3, from an allocator the application gives
// (ExecutionOptions::output_memory). A refusal by TensorRT is
// a tensoracle::TensorRtError; the library's own checks throw its other errors. This header
// compiles as C++17.
#pragma once

#include "tensoracle/deploy/data_type.hpp"
#include "tensoracle/deploy/deployed_engine.hpp"
#include "tensoracle/deploy/execution_contract.hpp"
#include "tensoracle/deploy/manifest.hpp"
#include "tensoracle/deploy/memory_kind.hpp"
#include "tensoracle/deploy/plan_reader.hpp"
#include "tensoracle/deploy/plugin_library.hpp"
#include "tensoracle/deploy/selection.hpp"
#include "tensoracle/deploy/signed_manifest.hpp"
#include "tensoracle/errors.hpp"

#include <NvInferRuntime.h>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if !defined(NV_TENSORRT_MAJOR) || NV_TENSORRT_MAJOR < 11
#error "tensoracle/deploy/tensorrt.hpp needs the headers of TensorRT 11 or later"
#endif

namespace tensoracle::deploy::tensorrt {

// ---- names: TensorRT's enum values as the Python package (and the manifest) writes them ------

constexpr std::string_view dtype_name(nvinfer1::DataType type) noexcept {
    switch (type) {
    case nvinfer1::DataType::kFLOAT:
        return "FLOAT";
    case nvinfer1::DataType::kHALF:
        return "HALF";
    case nvinfer1::DataType::kINT8:
        return "INT8";
    case nvinfer1::DataType::kINT32:
        return "INT32";
    case nvinfer1::DataType::kBOOL:
        return "BOOL";
    case nvinfer1::DataType::kUINT8:
        return "UINT8";
    case nvinfer1::DataType::kFP8:
        return "FP8";
    case nvinfer1::DataType::kBF16:
        return "BF16";
    case nvinfer1::DataType::kINT64:
        return "INT64";
    case nvinfer1::DataType::kINT4:
        return "INT4";
    case nvinfer1::DataType::kFP4:
        return "FP4";
    case nvinfer1::DataType::kE8M0:
        return "E8M0";
    }
    return "UNKNOWN";
}

// The TensorRT DataType of a tensoracle::deploy::DataType (data_type.hpp), and back: nothing for
// a TensorRT type the manifest has no name for.
constexpr nvinfer1::DataType to_tensorrt(DataType type) noexcept {
    switch (type) {
    case DataType::float32:
        return nvinfer1::DataType::kFLOAT;
    case DataType::float16:
        return nvinfer1::DataType::kHALF;
    case DataType::bfloat16:
        return nvinfer1::DataType::kBF16;
    case DataType::int8:
        return nvinfer1::DataType::kINT8;
    case DataType::int32:
        return nvinfer1::DataType::kINT32;
    case DataType::int64:
        return nvinfer1::DataType::kINT64;
    case DataType::boolean:
        return nvinfer1::DataType::kBOOL;
    case DataType::uint8:
        return nvinfer1::DataType::kUINT8;
    case DataType::fp8:
        return nvinfer1::DataType::kFP8;
    case DataType::e8m0:
        return nvinfer1::DataType::kE8M0;
    case DataType::int4:
        return nvinfer1::DataType::kINT4;
    case DataType::fp4:
        return nvinfer1::DataType::kFP4;
    }
    return nvinfer1::DataType::kFLOAT; // not reached: every enumerator is handled above
}

constexpr std::optional<DataType> from_tensorrt(nvinfer1::DataType type) noexcept {
    return data_type_from_name(dtype_name(type));
}

constexpr std::string_view format_name(nvinfer1::TensorFormat format) noexcept {
    switch (format) {
    case nvinfer1::TensorFormat::kLINEAR:
        return "LINEAR";
    case nvinfer1::TensorFormat::kCHW2:
        return "CHW2";
    case nvinfer1::TensorFormat::kHWC8:
        return "HWC8";
    case nvinfer1::TensorFormat::kCHW4:
        return "CHW4";
    case nvinfer1::TensorFormat::kCHW16:
        return "CHW16";
    case nvinfer1::TensorFormat::kCHW32:
        return "CHW32";
    case nvinfer1::TensorFormat::kDHWC8:
        return "DHWC8";
    case nvinfer1::TensorFormat::kCDHW32:
        return "CDHW32";
    case nvinfer1::TensorFormat::kHWC:
        return "HWC";
    case nvinfer1::TensorFormat::kDLA_LINEAR:
        return "DLA_LINEAR";
    case nvinfer1::TensorFormat::kDLA_HWC4:
        return "DLA_HWC4";
    case nvinfer1::TensorFormat::kHWC16:
        return "HWC16";
    case nvinfer1::TensorFormat::kDHWC:
        return "DHWC";
    }
    return "UNKNOWN";
}

constexpr std::string_view location_name(nvinfer1::TensorLocation location) noexcept {
    switch (location) {
    case nvinfer1::TensorLocation::kDEVICE:
        return "DEVICE";
    case nvinfer1::TensorLocation::kHOST:
        return "HOST";
    }
    return "UNKNOWN";
}

// ---- the backend version -------------------------------------------------------------------

// What getInferLibVersion() returns for the headers compiled against: MAJOR * 10000 + MINOR * 100
// + PATCH (NvInferRuntimeBase.h), without the build number.
constexpr std::int32_t header_library_version() noexcept {
    return NV_TENSORRT_MAJOR * 10000 + NV_TENSORRT_MINOR * 100 + NV_TENSORRT_PATCH;
}

// The headers' version as manifests record it, such as "11.1.0.106".
inline std::string header_version_text() {
    return std::to_string(NV_TENSORRT_MAJOR) + "." + std::to_string(NV_TENSORRT_MINOR) + "." +
           std::to_string(NV_TENSORRT_PATCH) + "." + std::to_string(NV_TENSORRT_BUILD);
}

// The backend for select_entry from the version of the TensorRT library loaded (as
// getInferLibMajorVersion() and its siblings report it): "tensorrt" and "MAJOR.MINOR.PATCH.BUILD",
// as manifests record the version that built an entry, such as "11.4.0.106". An engine runs only
// on the version that built it, so that version is the library's, not the headers'. TensorRT
// keeps its ABI within a major version: a library of another major version than the headers the
// application was compiled with is refused (tensoracle::Error naming both).
inline RuntimeBackend backend_for_library(std::int32_t major, std::int32_t minor,
                                          std::int32_t patch, std::int32_t build) {
    std::string const library = std::to_string(major) + "." + std::to_string(minor) + "." +
                                std::to_string(patch) + "." + std::to_string(build);
    if (major != NV_TENSORRT_MAJOR) {
        throw Error("the TensorRT library loaded is version " + library +
                    ", but the application was compiled with the headers of TensorRT " +
                    header_version_text() + ": run it with a TensorRT " +
                    std::to_string(NV_TENSORRT_MAJOR) + " library");
    }
    return RuntimeBackend{kTensorRt, library};
}

// The TensorRT this application runs engines with: the version of the library loaded.
inline RuntimeBackend runtime_backend() {
    return backend_for_library(getInferLibMajorVersion(), getInferLibMinorVersion(),
                               getInferLibPatchVersion(), getInferLibBuildVersion());
}

// ---- shapes --------------------------------------------------------------------------------

// A TensorRT Dims as a shape; nothing for an invalid one (rank -1).
inline std::optional<Shape> shape_of(nvinfer1::Dims const& dims) {
    if (dims.nbDims < 0 || dims.nbDims > nvinfer1::Dims::MAX_DIMS) {
        return std::nullopt;
    }
    Shape shape;
    shape.reserve(static_cast<std::size_t>(dims.nbDims));
    for (std::int32_t axis = 0; axis < dims.nbDims; ++axis) {
        shape.push_back(dims.d[axis]);
    }
    return shape;
}

// A shape as a TensorRT Dims; InvalidArgument beyond Dims::MAX_DIMS dimensions.
inline nvinfer1::Dims dims_of(Shape const& shape) {
    if (shape.size() > static_cast<std::size_t>(nvinfer1::Dims::MAX_DIMS)) {
        throw InvalidArgument("a TensorRT shape has at most " +
                              std::to_string(nvinfer1::Dims::MAX_DIMS) + " dimensions, not " +
                              std::to_string(shape.size()));
    }
    nvinfer1::Dims dims{};
    dims.nbDims = static_cast<std::int32_t>(shape.size());
    for (std::size_t axis = 0; axis < shape.size(); ++axis) {
        dims.d[axis] = shape[axis];
    }
    return dims;
}

// ---- the logger ------------------------------------------------------------------------------

// TensorRT's messages of `reported` severity or worse (warnings and errors by default) on stderr,
// each on a line of its own after "TensorRT: ": the logger of a Runtime made without one.
class StderrLogger final : public nvinfer1::ILogger {
public:
    explicit StderrLogger(Severity reported = Severity::kWARNING) noexcept : reported_(reported) {}
    void log(Severity severity, char const* message) noexcept override {
        if (severity <= reported_ && message != nullptr) {
            std::string line = "TensorRT: ";
            try {
                line += message;
                line += '\n';
            } catch (...) { // NOLINT(bugprone-empty-catch): a message lost, never an exception
                return;
            }
            (void)std::fwrite(line.data(), 1, line.size(), stderr);
        }
    }

private:
    Severity reported_;
};

// ---- the runtime -----------------------------------------------------------------------------

// How a Runtime gets TensorRT's runtime: nvinfer1::createInferRuntime by default. An application
// that loads TensorRT itself (dlopen) passes a function that calls its own.
using RuntimeCreator = std::function<nvinfer1::IRuntime*(nvinfer1::ILogger&)>;

// What a Runtime remembers of the errors TensorRT logged since they were last taken: the first
// kRememberedErrors messages, each cut to kRememberedErrorBytes, and how many more there were,
// so that a long-running server that never takes them holds a few kilobytes.
inline constexpr std::size_t kRememberedErrors = 16;
inline constexpr std::size_t kRememberedErrorBytes = 2048;

// TensorRT's runtime together with what it depends on, shared by everything made from it. TensorRT
// requires its logger to outlive the runtime and every object the runtime creates, and the
// runtime to outlive its engines: a Runtime owns the logger (held by shared_ptr), and each engine
// deserialize(std::shared_ptr<Runtime>, ...) returns holds the Runtime, so that no order in which
// an application lets go of them is unsafe.
//
// createInferRuntime can return a runtime although it logged an error, such as a CUDA driver too
// old for the CUDA TensorRT was built with (cudaError 35) or no usable GPU, and deserializing with
// that runtime then crashes the process. Every message goes to the application's logger, and those
// logged as errors are remembered, so that create() fails instead (tensoracle::TensorRtError
// quoting them) and a refused deserialization names TensorRT's reason. (Seen with the TensorRT
// 11.4 lean runtime on a machine without a CUDA driver: the runtime it returned crashed in
// deserializeCudaEngine and in its destructor.)
class Runtime {
    struct Passkey {}; // only create() makes one

public:
    // TensorRT's runtime, reporting to `logger` (null: a StderrLogger), made by `creator` (null:
    // createInferRuntime). Throws TensorRtError quoting TensorRT when it returns none or logs an
    // error while creating it. Such a runtime is never destroyed (the one TensorRT 11.4 returns
    // after such an error crashes when deleted as well as when used) and neither is the logger it
    // reports to: both are left to the process, so that a later message from it reaches a live
    // logger.
    static std::shared_ptr<Runtime> create(std::shared_ptr<nvinfer1::ILogger> logger = nullptr,
                                           RuntimeCreator const& creator = nullptr) {
        if (!logger) {
            logger = std::make_shared<StderrLogger>();
        }
        auto made = std::make_shared<Runtime>(Passkey{}, std::move(logger));
        nvinfer1::IRuntime* const runtime =
            creator ? creator(*made->forwarder_) : nvinfer1::createInferRuntime(*made->forwarder_);
        std::string const errors = made->take_errors();
        if (runtime == nullptr || !errors.empty()) {
            if (runtime != nullptr) {
                // Kept with the runtime for the rest of the process: it may still log through it.
                auto kept = std::make_unique<std::shared_ptr<Forwarder>>(made->forwarder_);
                (void)kept.release(); // NOLINT(bugprone-unused-return-value): left on purpose
            }
            throw TensorRtError(
                "TensorRT could not create a usable runtime" +
                (errors.empty() ? std::string(" (it returned none)") : ": " + errors));
        }
        made->runtime_.reset(runtime);
        return made;
    }

    Runtime(Passkey /*only create()*/, std::shared_ptr<nvinfer1::ILogger> logger)
        : forwarder_(std::make_shared<Forwarder>(std::move(logger))) {}
    Runtime(Runtime const&) = delete;
    Runtime& operator=(Runtime const&) = delete;
    Runtime(Runtime&&) = delete;
    Runtime& operator=(Runtime&&) = delete;
    ~Runtime() = default; // the runtime first (declared last), then the logger

    nvinfer1::IRuntime& get() noexcept { return *runtime_; }
    std::shared_ptr<nvinfer1::ILogger> const& logger() const noexcept {
        return forwarder_->target();
    }

    // The errors TensorRT logged since the last call, joined by "; " (empty: none), with how many
    // more there were beyond the kRememberedErrors remembered.
    std::string take_errors() { return forwarder_->take(); }

private:
    class Forwarder final : public nvinfer1::ILogger {
    public:
        explicit Forwarder(std::shared_ptr<nvinfer1::ILogger> target)
            : target_(std::move(target)) {}
        void log(Severity severity, char const* message) noexcept override {
            target_->log(severity, message);
            if (severity > Severity::kERROR || message == nullptr) {
                return;
            }
            try {
                std::lock_guard<std::mutex> const hold(mutex_);
                if (errors_.size() < kRememberedErrors) {
                    std::string_view const text(message);
                    errors_.emplace_back(text.substr(0, kRememberedErrorBytes));
                    if (text.size() > kRememberedErrorBytes) {
                        errors_.back() += "...";
                    }
                } else {
                    ++more_;
                }
            } catch (...) { // NOLINT(bugprone-empty-catch): a message lost, never an exception
            }
        }
        std::string take() {
            std::lock_guard<std::mutex> const hold(mutex_);
            std::string joined;
            for (std::string const& error : errors_) {
                joined += (joined.empty() ? "" : "; ") + error;
            }
            if (more_ > 0) {
                joined += "; and " + std::to_string(more_) + " more";
            }
            errors_.clear();
            more_ = 0;
            return joined;
        }
        std::shared_ptr<nvinfer1::ILogger> const& target() const noexcept { return target_; }

    private:
        std::shared_ptr<nvinfer1::ILogger> target_;
        std::mutex mutex_;
        std::vector<std::string> errors_;
        std::size_t more_ = 0;
    };

    std::shared_ptr<Forwarder> forwarder_;
    std::unique_ptr<nvinfer1::IRuntime> runtime_;
};

// ---- the plan as a stream -------------------------------------------------------------------

// TensorRT's stream reader (IStreamReaderV2, which deserializeCudaEngine reads a plan from) over
// a deployed engine's verified plan: every read hands TensorRT bytes only once the chunk they lie
// in was checked against the verified header (PlanReader): into host memory directly, into
// device memory (as the CUDA driver tells: memory_kind) with cudaMemcpyAsync on TensorRT's stream
// from the reader's chunk, the stream synchronized after each copy, before the chunk is refilled
// (or zeroed) for the next. A refused chunk, or a failed copy, ends the read
// with -1 (TensorRT's unrecoverable error), and failure() holds why. For an engine opened whole
// it reads from the verified copy. `deployed` must outlive the stream; use it from one thread.
class VerifiedPlanStream final : public nvinfer1::IStreamReaderV2 {
public:
    explicit VerifiedPlanStream(DeployedEngine const& deployed)
        : reader_(deployed), path_(deployed.path()) {}

    std::int64_t read(void* destination, std::int64_t nbBytes,
                      cudaStream_t stream) noexcept override {
        if (nbBytes < 0 || (destination == nullptr && nbBytes > 0)) {
            return -1;
        }
        try {
            auto* const into = static_cast<std::byte*>(destination);
            auto const wanted = static_cast<std::size_t>(nbBytes);
            std::size_t copied = 0;
            if (is_device_memory(destination, path_)) {
                while (copied < wanted) {
                    std::size_t available = 0;
                    std::byte const* const from = reader_.checked_at(position_ + copied, available);
                    if (available == 0) {
                        break;
                    }
                    std::size_t const take = std::min(available, wanted - copied);
                    cudaError_t const copy =
                        cudaMemcpyAsync(into + copied, from, take, cudaMemcpyDefault, stream);
                    if (copy != cudaSuccess) {
                        throw TensorRtError(
                            std::string("copying the verified plan of '") + path_.string() +
                            "' to device memory failed: " + cudaGetErrorString(copy));
                    }
                    // The reader's chunk is refilled (or zeroed, if the next chunk is
                    // refused) by the next checked_at: the copy out of it ends first
                    // (cudaMemcpyAsync from pageable memory has usually taken the bytes when it
                    // returns, but not on every system).
                    cudaError_t const done = cudaStreamSynchronize(stream);
                    if (done != cudaSuccess) {
                        throw TensorRtError(
                            std::string("copying the verified plan of '") + path_.string() +
                            "' to device memory failed: " + cudaGetErrorString(done));
                    }
                    copied += take;
                }
            } else {
                copied = reader_.read(position_, into, wanted);
            }
            position_ += copied;
            return static_cast<std::int64_t>(copied);
        } catch (...) {
            failure_ = std::current_exception();
            return -1;
        }
    }

    bool seek(std::int64_t offset, nvinfer1::SeekPosition where) noexcept override {
        SeekFrom from = SeekFrom::start;
        if (where == nvinfer1::SeekPosition::kCUR) {
            from = SeekFrom::current;
        } else if (where == nvinfer1::SeekPosition::kEND) {
            from = SeekFrom::end;
        } else if (where != nvinfer1::SeekPosition::kSET) {
            return false;
        }
        std::optional<std::uint64_t> const target =
            seek_target(position_, reader_.size(), from, offset);
        if (!target) {
            return false;
        }
        position_ = *target;
        return true;
    }

    // Where the next read starts, counted from the plan's first byte.
    std::uint64_t position() const noexcept { return position_; }
    // Why the last failed read failed (CorruptEngineError for a refused chunk); null if none did.
    std::exception_ptr failure() const noexcept { return failure_; }
    PlanReader const& reader() const noexcept { return reader_; }
    // Reads and checks the chunks TensorRT did not read (PlanReader::check_rest): TensorRT may
    // stop before the plan's end, and an engine is only trusted once its plan was checked whole.
    void check_rest() { reader_.check_rest(); }

private:
    // Device memory needs a CUDA copy; host memory (pageable, pinned or managed) the reader
    // fills itself. The driver tells which (memory_kind), and an address it cannot place is
    // thrown as TensorRtError rather than guessed.
    static bool is_device_memory(void const* address, std::filesystem::path const& path) {
        try {
            return memory_kind(address) == MemoryKind::device;
        } catch (Error const& error) {
            throw TensorRtError("cannot hand TensorRT the plan of '" + path.string() +
                                "': " + error.what());
        }
    }

    PlanReader reader_;
    std::filesystem::path path_;
    std::uint64_t position_ = 0;
    std::exception_ptr failure_;
};

// ---- deserializing ---------------------------------------------------------------------------

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

// ---- the engine's IO -------------------------------------------------------------------------

// Every IO tensor of `engine`, in its order, as TensorRT reports it, the inputs' ranges those of
// optimization profile `profile` (0 by default). Throws EngineIOError (carrying `path`) for a
// tensor whose shape TensorRT reports as invalid.
inline std::vector<TensorDescription> describe_io(nvinfer1::ICudaEngine const& engine,
                                                  std::filesystem::path const& path,
                                                  std::int32_t profile = 0) {
    std::vector<TensorDescription> tensors;
    std::int32_t const count = engine.getNbIOTensors();
    bool const has_profile = engine.getNbOptimizationProfiles() > 0;
    for (std::int32_t index = 0; index < count; ++index) {
        char const* name = engine.getIOTensorName(index);
        TensorDescription tensor;
        tensor.name = name == nullptr ? std::string() : std::string(name);
        tensor.is_input = engine.getTensorIOMode(name) == nvinfer1::TensorIOMode::kINPUT;
        tensor.dtype = std::string(dtype_name(engine.getTensorDataType(name)));
        std::optional<Shape> shape = shape_of(engine.getTensorShape(name));
        if (!shape) {
            throw EngineIOError("TensorRT reports no valid shape for tensor '" + tensor.name +
                                    "' of the engine '" + path.string() + "'",
                                path);
        }
        tensor.shape = std::move(*shape);
        tensor.location = std::string(location_name(engine.getTensorLocation(name)));
        tensor.format = std::string(format_name(engine.getTensorFormat(name)));
        tensor.is_shape_tensor = engine.isShapeInferenceIO(name);
        if (tensor.is_input && has_profile) {
            auto const point = [&](nvinfer1::OptProfileSelector select) {
                return shape_of(engine.getProfileShape(name, profile, select));
            };
            auto low = point(nvinfer1::OptProfileSelector::kMIN);
            auto optimum = point(nvinfer1::OptProfileSelector::kOPT);
            auto high = point(nvinfer1::OptProfileSelector::kMAX);
            if (low && optimum && high && low->size() == tensor.shape.size()) {
                tensor.profile =
                    ShapeProfile{std::move(*low), std::move(*optimum), std::move(*high)};
            }
        } else if (!tensor.is_input) {
            char const* source = engine.getAliasedInputTensor(name);
            if (source != nullptr) {
                tensor.aliased_input = source;
            }
        }
        tensors.push_back(std::move(tensor));
    }
    return tensors;
}

// Checks the IO `engine` reports against the manifest entry's IO signature (check_engine_io:
// EngineIOError naming the tensor, the field, the observed and the expected value; InvalidArgument
// naming the field when the entry's io is not an IO signature). `path` is the entry's file, which
// messages name. Returns the engine's IO.
inline std::vector<TensorDescription> check_io(nvinfer1::ICudaEngine const& engine,
                                               ManifestEntry const& entry,
                                               std::filesystem::path const& path) {
    std::vector<TensorDescription> described = describe_io(engine, path);
    if (!entry.io) {
        throw InvalidArgument(entry.file_name + ": io is null: the entry records no IO signature");
    }
    check_engine_io(described, *entry.io, path);
    return described;
}

inline std::vector<TensorDescription> check_io(nvinfer1::ICudaEngine const& engine,
                                               DeployedEngine const& deployed) {
    return check_io(engine, deployed.entry(), deployed.path());
}

// ---- execution -------------------------------------------------------------------------------

// How an execution unit's context is created.
struct ExecutionOptions {
    // Who provides the context's scratch device memory: TensorRT, which allocates it with the
    // context (false: ExecutionContextAllocationStrategy::kSTATIC), or the application (true:
    // kUSER_MANAGED), which hands it over with Execution::set_device_memory before the first
    // enqueue, and may share one allocation among units that never run at the same time.
    bool user_managed_memory = false;
    // The optimization profile the unit runs (0 to the engine's getNbOptimizationProfiles() - 1):
    // its ranges are the ones set_input_shapes checks, and its optimum the creation shapes.
    // Another than 0 is selected with setOptimizationProfileAsync on `profile_stream` (null:
    // the default stream) when the unit is created; the switch may copy on that stream, so
    // synchronize it, or enqueue on it, before the first enqueue. The manifest records profile
    // 0 only: the engine's IO is checked against it whatever profile runs. Units that run at the
    // same time should each use a profile of their own.
    std::int32_t profile = 0;
    cudaStream_t profile_stream = nullptr;
    // Where the memory of outputs whose sizes depend on tensor values (such as a NonZero's) comes
    // from: TensorRT learns their size only while it runs, and asks the unit for memory during
    // enqueueV3 (IOutputAllocator); the unit takes it from this allocator on the enqueue's stream,
    // keeps it while it is large enough, and gives it back when it needs more and when the unit
    // closes (deallocateAsync on the default stream: close a unit once its work is done). It must
    // return 256-byte aligned memory (cudaMallocAsync's is). Null: such outputs are refused when
    // the unit is created.
    std::shared_ptr<nvinfer1::IGpuAsyncAllocator> output_memory = nullptr;
};

// An output whose shape depends on tensor values, as the last enqueue left it: read it once that
// enqueue's stream has completed.
struct ValueDependentOutput {
    void* address = nullptr;    // its memory, from ExecutionOptions::output_memory
    std::uint64_t capacity = 0; // bytes there (at least what TensorRT asked for)
    std::optional<Shape> shape; // as TensorRT reported it (absent before an enqueue reports it)
};

namespace detail {

// The IOutputAllocator an Execution owns for one output whose size depends on tensor values:
// TensorRT calls it during enqueueV3 with the bytes it needs, then with the shape. Never throws
// into TensorRT: a failed allocation is a null answer, which fails that enqueue.
class OutputBuffer final : public nvinfer1::IOutputAllocator {
public:
    explicit OutputBuffer(std::shared_ptr<nvinfer1::IGpuAsyncAllocator> memory)
        : memory_(std::move(memory)) {}
    OutputBuffer(OutputBuffer const&) = delete;
    OutputBuffer& operator=(OutputBuffer const&) = delete;
    OutputBuffer(OutputBuffer&&) = delete;
    OutputBuffer& operator=(OutputBuffer&&) = delete;
    ~OutputBuffer() override { release(nullptr); }

    void* reallocateOutputAsync(char const* /*tensorName*/, void* /*currentMemory*/,
                                std::uint64_t size, std::uint64_t alignment,
                                cudaStream_t stream) noexcept override {
        auto const at = reinterpret_cast<std::uintptr_t>(address_); // NOLINT: compared, not read
        if (address_ != nullptr && size <= capacity_ && alignment != 0 && at % alignment == 0) {
            return address_;
        }
        release(stream);
        std::uint64_t const aligned = std::max<std::uint64_t>(alignment, kTensorAddressAlignment);
        address_ = memory_->allocateAsync(size, aligned, 0, stream);
        capacity_ = address_ == nullptr ? 0 : size;
        return address_;
    }
    void notifyShape(char const* /*tensorName*/, nvinfer1::Dims const& dims) noexcept override {
        shape_ = dims;
        notified_ = true;
    }

    // A new enqueue begins: the shape of the last one no longer holds.
    void begin_enqueue() noexcept { notified_ = false; }
    ValueDependentOutput state() const {
        ValueDependentOutput state{address_, capacity_, std::nullopt};
        if (notified_) {
            state.shape = shape_of(shape_);
        }
        return state;
    }
    // Gives the memory back on `stream`.
    void release(cudaStream_t stream) noexcept {
        if (address_ != nullptr) {
            (void)memory_->deallocateAsync(address_, stream);
        }
        address_ = nullptr;
        capacity_ = 0;
    }

private:
    std::shared_ptr<nvinfer1::IGpuAsyncAllocator> memory_;
    void* address_ = nullptr;
    std::uint64_t capacity_ = 0;
    nvinfer1::Dims shape_{};
    bool notified_ = false;
};

} // namespace detail

// One execution unit: an IExecutionContext over a deserialized engine, run on caller memory and
// a caller stream. Movable, not copyable; use it from one thread at a time, and destroy (or
// close) it only after the work it enqueued has completed.
class Execution {
public:
    // Checks the engine's IO against the manifest entry (check_io), then what an execution unit
    // can run (ExecutionContract: EngineIOError naming each HOST tensor, shape tensor, format
    // other than LINEAR), all before the context exists; creates the context, sets every input
    // to its creation shape, and gives each output whose size depends on tensor values an
    // IOutputAllocator of its own over ExecutionOptions::output_memory, or refuses it
    // (EngineIOError) without one (`path`, the entry's file, names the engine in messages).
    // Throws TensorRtError when TensorRT creates no context or refuses a creation shape or an
    // output allocator.
    Execution(std::shared_ptr<nvinfer1::ICudaEngine> engine, ManifestEntry const& entry,
              std::filesystem::path const& path, ExecutionOptions const& options = {})
        : engine_(std::move(engine)),
          contract_(tensors_for(checked(engine_), entry, path, options.profile), path,
                    options.profile, options.output_memory != nullptr),
          user_managed_memory_(options.user_managed_memory) {
        context_.reset(engine_->createExecutionContext(
            user_managed_memory_ ? nvinfer1::ExecutionContextAllocationStrategy::kUSER_MANAGED
                                 : nvinfer1::ExecutionContextAllocationStrategy::kSTATIC));
        if (!context_) {
            throw TensorRtError("TensorRT could not create an execution context for the engine '" +
                                path.string() + "' (see the TensorRT log for the reason)");
        }
        if (options.profile != 0 &&
            !context_->setOptimizationProfileAsync(options.profile, options.profile_stream)) {
            throw TensorRtError("TensorRT refused optimization profile " +
                                std::to_string(options.profile) + " of the engine '" +
                                path.string() +
                                "' (setOptimizationProfileAsync; see the TensorRT "
                                "log)");
        }
        for (auto const& [name, shape] : contract_.creation_shapes()) {
            if (!context_->setInputShape(name.c_str(), dims_of(shape))) {
                throw TensorRtError("TensorRT rejected the shape " + shape_text(shape) +
                                    " of input '" + name +
                                    "' when creating the execution unit of the engine '" +
                                    path.string() + "' (see the TensorRT log)");
            }
        }
        contract_.check_creation_output_shapes(output_shapes());
        for (std::string const& name : contract_.value_dependent_output_names()) {
            outputs_.push_back(std::make_unique<detail::OutputBuffer>(options.output_memory));
            if (!context_->setOutputAllocator(name.c_str(), outputs_.back().get())) {
                throw TensorRtError("TensorRT refused the output allocator of output '" + name +
                                    "' of the engine '" + path.string() +
                                    "' (setOutputAllocator; see the TensorRT log)");
            }
        }
    }

    // The same for the entry `deployed` was opened from.
    Execution(std::shared_ptr<nvinfer1::ICudaEngine> engine, DeployedEngine const& deployed,
              ExecutionOptions const& options = {})
        : Execution(std::move(engine), deployed.entry(), deployed.path(), options) {}

    Execution(Execution&& other) noexcept
        : engine_(std::move(other.engine_)), outputs_(std::move(other.outputs_)),
          context_(std::move(other.context_)), contract_(std::move(other.contract_)),
          user_managed_memory_(other.user_managed_memory_),
          device_memory_set_(other.device_memory_set_) {
        other.contract_.close();
    }
    Execution& operator=(Execution&& other) noexcept {
        if (this != &other) {
            close();
            engine_ = std::move(other.engine_);
            outputs_ = std::move(other.outputs_);
            context_ = std::move(other.context_);
            contract_ = std::move(other.contract_);
            user_managed_memory_ = other.user_managed_memory_;
            device_memory_set_ = other.device_memory_set_;
            other.contract_.close();
        }
        return *this;
    }
    Execution(Execution const&) = delete;
    Execution& operator=(Execution const&) = delete;
    ~Execution() { close(); }

    ExecutionContract const& contract() const noexcept { return contract_; }
    std::vector<std::string> const& input_names() const noexcept { return contract_.input_names(); }
    std::vector<std::string> const& output_names() const noexcept {
        return contract_.output_names();
    }
    std::vector<std::string> const& ranged_input_names() const noexcept {
        return contract_.ranged_input_names();
    }
    // The concrete shape of a tensor under the shapes set (ExecutionContract::shape).
    Shape const& shape(std::string_view name) const { return contract_.shape(name); }
    // The outputs whose sizes depend on tensor values: no address is bound for them; their
    // memory and shape after an enqueue are value_dependent_output's.
    std::vector<std::string> const& value_dependent_output_names() const noexcept {
        return contract_.value_dependent_output_names();
    }
    // The memory the unit's allocator gave that output and the shape TensorRT reported for it in
    // the last enqueue (read them once its stream has completed). InvalidArgument for another
    // name, Error once closed.
    ValueDependentOutput value_dependent_output(std::string_view name) const {
        contract_.check_open();
        auto const& names = contract_.value_dependent_output_names();
        auto const found = std::find(names.begin(), names.end(), name);
        if (found == names.end()) {
            std::string listed;
            for (std::string const& one : names) {
                listed += (listed.empty() ? "'" : ", '") + one + "'";
            }
            throw InvalidArgument("'" + std::string(name) +
                                  "' is not an output whose size depends on tensor values; this "
                                  "unit's are [" +
                                  listed + "]");
        }
        return outputs_[static_cast<std::size_t>(found - names.begin())]->state();
    }
    // The bytes a buffer of that tensor needs (LINEAR, its dtype, its concrete shape).
    std::uint64_t bytes(std::string_view name) const {
        return tensor_bytes(contract_.tensor(name).dtype, contract_.shape(name));
    }

    // Sets every ranged input's shape at once, checked first (ExecutionContract::
    // check_input_shapes: InvalidArgument, nothing changed); then TensorRtError when TensorRT
    // refuses one, Error when it leaves an output unresolved, after which enqueue is refused until
    // a later call succeeds.
    void set_input_shapes(std::vector<NamedShape> const& shapes) {
        std::vector<NamedShape> const checked = contract_.check_input_shapes(shapes);
        for (auto const& [name, shape] : checked) {
            if (!context_->setInputShape(name.c_str(), dims_of(shape))) {
                contract_.reject_input_shape(name, shape,
                                             "setInputShape refused it (see the TensorRT log)");
            }
        }
        contract_.resolve_output_shapes(checked, output_shapes());
    }

    // Binds one device address per tensor (ExecutionContract::bind_addresses: InvalidArgument
    // naming every problem); TensorRtError naming the tensor when TensorRT refuses an address.
    // After a refusal nothing counts as bound until a later call succeeds.
    void bind(std::vector<TensorAddress> const& addresses) {
        for (auto const& [name, address] : contract_.bind_addresses(addresses)) {
            if (!context_->setTensorAddress(name.c_str(), address)) {
                contract_.reject_address(name, address);
            }
        }
    }

    // Enqueues the inference on the caller's stream (enqueueV3) and returns once TensorRT has
    // queued it; the caller synchronizes. Error unless shapes are set and every address is bound
    // (ExecutionContract::check_enqueue), TensorRtError when TensorRT reports failure.
    // A unit with user-managed memory also needs set_device_memory first (Error otherwise).
    void enqueue(cudaStream_t stream) {
        contract_.check_enqueue();
        if (user_managed_memory_ && !device_memory_set_) {
            throw Error("cannot enqueue: the unit's device memory is the application's "
                        "(ExecutionOptions::user_managed_memory) and none is set: call "
                        "set_device_memory with at least device_memory_bytes() bytes first");
        }
        for (auto const& output : outputs_) {
            output->begin_enqueue();
        }
        if (!context_->enqueueV3(stream)) {
            throw TensorRtError("enqueue failed: TensorRT enqueueV3 reported failure (see the "
                                "TensorRT log for the reason)");
        }
    }

    // bind(addresses), then enqueue(stream).
    void enqueue(std::vector<TensorAddress> const& addresses, cudaStream_t stream) {
        bind(addresses);
        enqueue(stream);
    }

    // ---- the rest of TensorRT's execution --------------------------------------------------

    // TensorRT's context itself, for what this class does not wrap (a profiler, a debug
    // listener, an output allocator, ...). What is set through it bypasses the unit's checks: set
    // shapes and addresses through the unit, which must know them. Error once closed.
    nvinfer1::IExecutionContext& context() {
        contract_.check_open();
        return *context_;
    }

    // The scratch device memory a user-managed unit needs: the engine's bound for the profile the
    // unit runs (getDeviceMemorySizeForProfileV2), enough for every shape that profile allows.
    std::int64_t device_memory_bytes() const {
        contract_.check_open();
        return engine_->getDeviceMemorySizeForProfileV2(contract_.profile());
    }

    // Hands a user-managed unit its scratch device memory (setDeviceMemoryV2): at least
    // device_memory_bytes() bytes, 256-byte aligned (cudaMalloc's memory is), the application's
    // until the work enqueued with it has completed, used by one running unit at a time.
    // InvalidArgument, with nothing handed to TensorRT, for a unit created without
    // ExecutionOptions::user_managed_memory, a null or misaligned address, or too few bytes.
    void set_device_memory(void* memory, std::int64_t bytes) {
        contract_.check_open();
        if (!user_managed_memory_) {
            throw InvalidArgument("set_device_memory: this unit's device memory is TensorRT's; "
                                  "create the unit with ExecutionOptions::user_managed_memory "
                                  "to provide it");
        }
        std::int64_t const needed = device_memory_bytes();
        auto const at = reinterpret_cast<std::uintptr_t>(memory); // NOLINT: an address, not read
        if (memory == nullptr && needed > 0) {
            throw InvalidArgument("set_device_memory: memory is null, but the engine needs " +
                                  std::to_string(needed) + " bytes");
        }
        if (at % kTensorAddressAlignment != 0) {
            throw InvalidArgument("set_device_memory: the memory at " + std::to_string(at) +
                                  " is not aligned to " + std::to_string(kTensorAddressAlignment) +
                                  " bytes");
        }
        if (bytes < needed) {
            throw InvalidArgument("set_device_memory: " + std::to_string(bytes) +
                                  " bytes given, but the engine needs " + std::to_string(needed) +
                                  " (device_memory_bytes())");
        }
        context_->setDeviceMemoryV2(memory, bytes);
        device_memory_set_ = true;
    }

    // The auxiliary streams TensorRT may launch parts of the engine on in the next enqueues
    // (setAuxStreams): TensorRT uses the first getNbAuxStreams() of them and makes its own for the
    // rest, and orders them after the main stream's work and before its end. InvalidArgument,
    // with nothing handed to TensorRT, for the default (null) stream or a stream given twice,
    // which TensorRT says can deadlock.
    void set_aux_streams(std::vector<cudaStream_t> streams) {
        contract_.check_open();
        for (std::size_t index = 0; index < streams.size(); ++index) {
            if (streams[index] == nullptr) {
                throw InvalidArgument("set_aux_streams: streams[" + std::to_string(index) +
                                      "] is the default stream, which can deadlock");
            }
            for (std::size_t other = 0; other < index; ++other) {
                if (streams[other] == streams[index]) {
                    throw InvalidArgument("set_aux_streams: streams[" + std::to_string(other) +
                                          "] and streams[" + std::to_string(index) +
                                          "] are the same stream, which can deadlock");
                }
            }
        }
        context_->setAuxStreams(streams.data(), static_cast<std::int32_t>(streams.size()));
    }

    // An event TensorRT records once the next enqueues have read their inputs, so that their
    // buffers can be refilled before the outputs are ready (setInputConsumedEvent; null removes
    // it). The event must stay valid while those enqueues run. TensorRtError when TensorRT
    // refuses it.
    void set_input_consumed_event(cudaEvent_t event) {
        contract_.check_open();
        if (!context_->setInputConsumedEvent(event)) {
            throw TensorRtError("TensorRT refused the input-consumed event (setInputConsumedEvent; "
                                "see the TensorRT log)");
        }
    }

    // Releases the context, then this unit's hold on the engine, without waiting; afterwards every
    // call is refused ("the execution unit is closed"). Repeats do nothing.
    void close() noexcept {
        contract_.close();
        context_.reset();
        outputs_.clear(); // after the context, which holds them; each gives its memory back
        engine_.reset();
    }
    bool closed() const noexcept { return contract_.closed(); }

private:
    // The engine's IO checked against the manifest entry (profile 0, which the manifest
    // records), then, for another profile, described with that profile's ranges.
    static std::vector<TensorDescription> tensors_for(nvinfer1::ICudaEngine const& engine,
                                                      ManifestEntry const& entry,
                                                      std::filesystem::path const& path,
                                                      std::int32_t profile) {
        std::vector<TensorDescription> checked_io = check_io(engine, entry, path);
        std::int32_t const profiles = engine.getNbOptimizationProfiles();
        if (profile < 0 || profile >= std::max<std::int32_t>(profiles, 1)) {
            throw InvalidArgument("ExecutionOptions::profile is " + std::to_string(profile) +
                                  ", but the engine '" + path.string() + "' has " +
                                  std::to_string(profiles) + " optimization profile" +
                                  (profiles == 1 ? "" : "s") + " (0 to " +
                                  std::to_string(std::max<std::int32_t>(profiles, 1) - 1) + ")");
        }
        return profile == 0 ? checked_io : describe_io(engine, path, profile);
    }

    static nvinfer1::ICudaEngine const&
    checked(std::shared_ptr<nvinfer1::ICudaEngine> const& engine) {
        if (!engine) {
            throw InvalidArgument("an execution unit needs a deserialized engine, not null");
        }
        return *engine;
    }

    static std::string shape_text(Shape const& shape) {
        std::string text = "[";
        for (std::size_t axis = 0; axis < shape.size(); ++axis) {
            text += (axis == 0 ? "" : ", ") + std::to_string(shape[axis]);
        }
        return text + "]";
    }

    std::vector<ReportedShape> output_shapes() const {
        std::vector<ReportedShape> shapes;
        shapes.reserve(contract_.output_names().size());
        for (auto const& name : contract_.output_names()) {
            shapes.push_back({name, shape_of(context_->getTensorShape(name.c_str()))});
        }
        return shapes;
    }

    std::shared_ptr<nvinfer1::ICudaEngine> engine_;
    // Declared before the context, so destroyed after it: the context holds them.
    std::vector<std::unique_ptr<detail::OutputBuffer>> outputs_;
    std::unique_ptr<nvinfer1::IExecutionContext> context_;
    ExecutionContract contract_;
    bool user_managed_memory_ = false;
    bool device_memory_set_ = false;
};

// ---- the short path: from a manifest to an execution unit --------------------------------------

// What open_engine needs besides the manifest and the recipe; every member has a default.
struct EngineOptions {
    // The cache folder, the verify key or trust policy (with which open_engine reads the
    // manifest: signed_manifest.hpp); unset: options_from_environment(). The short path
    // streams the plan whatever its stream_plan says (OpenOptions::stream_plan: each 4 MiB chunk
    // checked as TensorRT reads it, for entries with chunk digests).
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

// The plugin libraries an engine needs, loaded into its runtime's registry: deregistered, and
// their in-memory copies released, when the last engine holding them is destroyed.
class LoadedPlugins {
public:
    // Loads each library into `runtime`'s plugin registry (IPluginRegistry::loadLibrary of its
    // verified copy). TensorRtError naming the library when TensorRT refuses one; those loaded
    // before it are deregistered.
    LoadedPlugins(std::shared_ptr<Runtime> runtime, std::vector<VerifiedPluginLibrary> libraries)
        : runtime_(std::move(runtime)), libraries_(std::move(libraries)) {
        nvinfer1::IPluginRegistry& registry = runtime_->get().getPluginRegistry();
        (void)runtime_->take_errors();
        for (VerifiedPluginLibrary const& library : libraries_) {
            nvinfer1::IPluginRegistry::PluginLibraryHandle const handle =
                registry.loadLibrary(library.loader_path().c_str());
            if (handle == nullptr) {
                std::string const errors = runtime_->take_errors();
                release();
                throw TensorRtError("TensorRT could not load plugin library '" +
                                    library.path().string() + "' (SHA-256 " + library.sha256() +
                                    ", verified)" + (errors.empty() ? "" : ": " + errors));
            }
            handles_.push_back(handle);
        }
    }
    LoadedPlugins(LoadedPlugins const&) = delete;
    LoadedPlugins& operator=(LoadedPlugins const&) = delete;
    LoadedPlugins(LoadedPlugins&&) = delete;
    LoadedPlugins& operator=(LoadedPlugins&&) = delete;
    ~LoadedPlugins() { release(); }

    std::vector<VerifiedPluginLibrary> const& libraries() const noexcept { return libraries_; }

private:
    void release() noexcept {
        nvinfer1::IPluginRegistry& registry = runtime_->get().getPluginRegistry();
        while (!handles_.empty()) {
            registry.deregisterLibrary(handles_.back());
            handles_.pop_back();
        }
    }

    std::shared_ptr<Runtime> runtime_;
    std::vector<VerifiedPluginLibrary> libraries_;
    std::vector<nvinfer1::IPluginRegistry::PluginLibraryHandle> handles_;
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
