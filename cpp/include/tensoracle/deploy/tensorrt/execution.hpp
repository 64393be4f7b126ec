// An execution unit: TensorRT's execution context over a deserialized engine, its every call
// checked first by ExecutionContract, run on the caller's memory and stream.
//
// One piece of the TensorRT adapter, tensoracle/deploy/tensorrt.hpp (which applications
// include, and whose comment gives the whole path): header-only, compiled as C++17 against the
// application's TensorRT 11 headers.
#pragma once

#include "tensoracle/deploy/deployed_engine.hpp"
#include "tensoracle/deploy/execution_contract.hpp"
#include "tensoracle/deploy/manifest.hpp"
#include "tensoracle/deploy/tensorrt/io.hpp"
#include "tensoracle/deploy/tensorrt/shapes.hpp"
#include "tensoracle/errors.hpp"

#include <NvInferRuntime.h>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tensoracle::deploy::tensorrt {

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

} // namespace tensoracle::deploy::tensorrt
