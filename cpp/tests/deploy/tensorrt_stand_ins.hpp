// Recording stand-ins of TensorRT's IRuntime, ICudaEngine and IExecutionContext, for the tests of
// the TensorRT adapter (tensoracle/deploy/tensorrt.hpp) that run without TensorRT.
//
// TensorRT's interfaces forward each call to an implementation object through the protected member
// mImpl (apiv::VRuntime, VCudaEngine and VExecutionContext, NvInferImpl.h); a subclass that points
// mImpl at one of these classes sees every call the adapter makes, with its arguments. The engine
// answers the queries of a described IO table; every other method records the call and FAILS the
// test. The stand-ins also record when each object is destroyed and check that what it depends on
// (the engine for a context, the runtime for an engine, the logger for a runtime) is still alive,
// logging through the runtime's logger as they go, as TensorRT may. They prove which calls our
// code makes and in what order; they prove nothing about what TensorRT does with them.
#pragma once

#include <NvInferRuntime.h>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace tensoracle::testing::stand_in {

using namespace nvinfer1; // NOLINT(google-build-using-namespace): TensorRT's own signatures

// What happened, shared by every stand-in of a test (held by shared_ptr, so it outlives them).
struct Events {
    std::vector<std::string> calls;     // every TensorRT call, in order, with its arguments
    std::vector<std::string> destroyed; // "context", "engine", "runtime", "logger", in order
    bool logger_alive = false;
    bool runtime_alive = false;
    bool engine_alive = false;
    bool context_alive = false;
    std::vector<std::string> unexpected; // calls no stand-in expects (each also fails the test)
    // What the next enqueueV3 computes for an output whose size depends on tensor values (the
    // stand-in then calls its IOutputAllocator, as TensorRT documents: reallocateOutputAsync with
    // these bytes, then notifyShape with this shape).
    struct ValueDependentResult {
        std::uint64_t bytes = 0;
        std::vector<std::int64_t> shape;
    };
    std::map<std::string, ValueDependentResult> value_dependent;
};

inline std::string dims_text(Dims const& dims) {
    std::string text = "[";
    for (std::int32_t axis = 0; axis < dims.nbDims; ++axis) {
        text += (axis == 0 ? "" : ", ") + std::to_string(dims.d[axis]);
    }
    return text + "]";
}

inline std::string pointer_text(void const* pointer) {
    std::ostringstream text;
    text << pointer;
    return text.str();
}

inline Dims dims(std::vector<std::int64_t> const& shape) {
    Dims made{};
    made.nbDims = static_cast<std::int32_t>(shape.size());
    for (std::size_t axis = 0; axis < shape.size(); ++axis) {
        made.d[axis] = shape[axis];
    }
    return made;
}

// One IO tensor of the described engine. An output's -1 dimensions take the first input's
// dimension on the same axis once shapes are set, unless it is data dependent (stays -1).
struct Tensor {
    std::string name;
    TensorIOMode mode = TensorIOMode::kINPUT;
    DataType dtype = DataType::kFLOAT;
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> min, opt, max; // inputs with -1 only: profile 0
    // Profiles 1, 2, ...: each {min, opt, max}.
    std::vector<std::array<std::vector<std::int64_t>, 3>> more_profiles;
    TensorLocation location = TensorLocation::kDEVICE;
    TensorFormat format = TensorFormat::kLINEAR;
    bool shape_tensor = false;
    bool data_dependent = false;
};

// What the stand-ins answer where TensorRT could refuse.
struct Behaviour {
    bool context_created = true;
    std::set<std::string> refused_shapes;     // setInputShape returns false for these inputs
    std::set<std::string> refused_addresses;  // setTensorAddress returns false for these
    std::set<std::string> refused_allocators; // setOutputAllocator returns false for these
    bool enqueue_succeeds = true;
    bool input_consumed_event_accepted = true;
    std::int32_t aux_streams = 0;         // getNbAuxStreams
    std::int32_t profiles = 1;            // getNbOptimizationProfiles
    bool profile_accepted = true;         // setOptimizationProfileAsync
    std::int64_t device_memory = 1 << 20; // getDeviceMemorySizeV2 and ...ForProfileV2
};

// A logger that records the messages it gets and when it is destroyed.
class RecordingLogger final : public ILogger {
public:
    explicit RecordingLogger(std::shared_ptr<Events> events) : events_(std::move(events)) {
        events_->logger_alive = true;
    }
    RecordingLogger(RecordingLogger const&) = delete;
    RecordingLogger& operator=(RecordingLogger const&) = delete;
    RecordingLogger(RecordingLogger&&) = delete;
    RecordingLogger& operator=(RecordingLogger&&) = delete;
    ~RecordingLogger() override {
        EXPECT_FALSE(events_->runtime_alive) << "the logger was destroyed before the runtime";
        events_->logger_alive = false;
        events_->destroyed.emplace_back("logger");
    }
    void log(Severity /*severity*/, char const* message) noexcept override {
        EXPECT_TRUE(events_->logger_alive) << "a message reached a destroyed logger";
        messages.emplace_back(message);
    }
    std::vector<std::string> messages;

private:
    std::shared_ptr<Events> events_;
};

class Base {
public:
    explicit Base(std::shared_ptr<Events> events, char const* kind)
        : events_(std::move(events)), kind_(kind) {}

protected:
    void record(std::string call) const { events_->calls.push_back(std::move(call)); }
    void unexpected(char const* method) const {
        std::string const call = std::string(kind_) + "::" + method;
        ADD_FAILURE() << "unexpected TensorRT call: " << call;
        events_->unexpected.push_back(call);
        events_->calls.push_back(call);
    }
    Events& events() const { return *events_; }
    std::shared_ptr<Events> const& shared_events() const { return events_; }

private:
    std::shared_ptr<Events> events_;
    char const* kind_;
};

class StandInEngine;

class ContextImpl final : public apiv::VExecutionContext, Base {
public:
    ContextImpl(std::shared_ptr<Events> events, ICudaEngine const& engine,
                std::vector<Tensor> const& tensors, Behaviour const& behaviour)
        : Base(std::move(events), "IExecutionContext"), engine_(engine), tensors_(tensors),
          behaviour_(behaviour) {}

    ICudaEngine const& getEngine() const noexcept override {
        record("getEngine");
        return engine_;
    }
    bool setInputShape(char const* name, Dims const& dims) noexcept override {
        record(std::string("setInputShape ") + name + " " + dims_text(dims));
        if (behaviour_.refused_shapes.count(name) != 0) {
            return false;
        }
        shapes_[name] = dims;
        return true;
    }
    Dims getTensorShape(char const* name) const noexcept override {
        record(std::string("getTensorShape ") + name);
        Tensor const* tensor = find(name);
        if (tensor == nullptr) {
            Dims invalid{};
            invalid.nbDims = -1;
            return invalid;
        }
        if (tensor->mode == TensorIOMode::kINPUT) {
            auto const set = shapes_.find(name);
            return set == shapes_.end() ? dims(tensor->shape) : set->second;
        }
        Dims shape = dims(tensor->shape);
        Dims const* first = nullptr;
        for (Tensor const& input : tensors_) {
            if (input.mode == TensorIOMode::kINPUT && shapes_.count(input.name) != 0) {
                first = &shapes_.at(input.name);
                break;
            }
        }
        for (std::int32_t axis = 0; axis < shape.nbDims; ++axis) {
            if (shape.d[axis] == -1 && !tensor->data_dependent && first != nullptr &&
                axis < first->nbDims) {
                shape.d[axis] = first->d[axis];
            }
        }
        return shape;
    }
    bool setTensorAddress(char const* name, void* data) noexcept override {
        record(std::string("setTensorAddress ") + name + " " + pointer_text(data));
        return behaviour_.refused_addresses.count(name) == 0;
    }
    bool enqueueV3(cudaStream_t stream) noexcept override {
        record("enqueueV3 " + pointer_text(stream));
        for (auto const& [name, allocator] : allocators_) {
            auto const found = events().value_dependent.find(name);
            if (found == events().value_dependent.end()) {
                continue;
            }
            void* memory = allocator->reallocateOutputAsync(name.c_str(), nullptr,
                                                            found->second.bytes, 256, stream);
            record("reallocateOutputAsync " + name + " " + std::to_string(found->second.bytes) +
                   " gave " + pointer_text(memory));
            if (memory == nullptr) {
                return false;
            }
            allocator->notifyShape(name.c_str(), dims(found->second.shape));
        }
        return behaviour_.enqueue_succeeds;
    }
    void setDeviceMemoryV2(void* memory, std::int64_t size) noexcept override {
        record("setDeviceMemoryV2 " + pointer_text(memory) + " " + std::to_string(size));
    }
    void setAuxStreams(cudaStream_t* streams, std::int32_t count) noexcept override {
        std::string call = "setAuxStreams " + std::to_string(count);
        for (std::int32_t index = 0; index < count; ++index) {
            call += " " + pointer_text(streams[index]);
        }
        record(call);
    }
    bool setOptimizationProfileAsync(std::int32_t profile, cudaStream_t stream) noexcept override {
        record("setOptimizationProfileAsync " + std::to_string(profile) + " " +
               pointer_text(stream));
        return behaviour_.profile_accepted;
    }
    bool setInputConsumedEvent(cudaEvent_t event) noexcept override {
        record("setInputConsumedEvent " + pointer_text(event));
        return behaviour_.input_consumed_event_accepted;
    }

    IExecutionContext* getPImpl() noexcept override {
        unexpected("getPImpl");
        return nullptr;
    }
    void setDebugSync(bool /*sync*/) noexcept override { unexpected("setDebugSync"); }
    bool getDebugSync() const noexcept override {
        unexpected("getDebugSync");
        return false;
    }
    void setProfiler(IProfiler*) noexcept override { unexpected("setProfiler"); }
    IProfiler* getProfiler() const noexcept override {
        unexpected("getProfiler");
        return nullptr;
    }
    void setName(char const* /*name*/) noexcept override { unexpected("setName"); }
    char const* getName() const noexcept override {
        unexpected("getName");
        return nullptr;
    }
    void setDeviceMemory(void* /*memory*/) noexcept override { unexpected("setDeviceMemory"); }
    int32_t getOptimizationProfile() const noexcept override {
        unexpected("getOptimizationProfile");
        return 0;
    }
    bool allInputDimensionsSpecified() const noexcept override {
        unexpected("allInputDimensionsSpecified");
        return false;
    }
    void setErrorRecorder(IErrorRecorder* /*recorder*/) noexcept override {
        unexpected("setErrorRecorder");
    }
    IErrorRecorder* getErrorRecorder() const noexcept override {
        unexpected("getErrorRecorder");
        return nullptr;
    }
    bool executeV2(void* const* /*bindings*/) noexcept override {
        unexpected("executeV2");
        return false;
    }
    void setEnqueueEmitsProfile(bool /*enqueueEmitsProfile*/) noexcept override {
        unexpected("setEnqueueEmitsProfile");
    }
    bool getEnqueueEmitsProfile() const noexcept override {
        unexpected("getEnqueueEmitsProfile");
        return false;
    }
    bool reportToProfiler() const noexcept override {
        unexpected("reportToProfiler");
        return false;
    }
    Dims getTensorStrides(char const* /*tensorName*/) const noexcept override {
        unexpected("getTensorStrides");
        return Dims{};
    }
    void const* getTensorAddress(char const* /*tensorName*/) const noexcept override {
        unexpected("getTensorAddress");
        return nullptr;
    }
    bool setInputTensorAddress(char const* /*tensorName*/, void const* /*data*/) noexcept override {
        unexpected("setInputTensorAddress");
        return false;
    }
    bool setOutputTensorAddress(char const* /*tensorName*/, void* /*data*/) noexcept override {
        unexpected("setOutputTensorAddress");
        return false;
    }
    int32_t inferShapes(int32_t /*nbMaxNames*/, char const** /*tensorNames*/) noexcept override {
        unexpected("inferShapes");
        return 0;
    }
    cudaEvent_t getInputConsumedEvent() const noexcept override {
        unexpected("getInputConsumedEvent");
        return cudaEvent_t{};
    }
    void* getOutputTensorAddress(char const* /*tensorName*/) const noexcept override {
        unexpected("getOutputTensorAddress");
        return nullptr;
    }
    bool setOutputAllocator(char const* tensorName,
                            IOutputAllocator* outputAllocator) noexcept override {
        record(std::string("setOutputAllocator ") + tensorName);
        Tensor const* tensor = find(tensorName);
        if (tensor == nullptr || tensor->mode != TensorIOMode::kOUTPUT ||
            behaviour_.refused_allocators.count(tensorName) != 0) {
            return false;
        }
        allocators_[tensorName] = outputAllocator;
        return true;
    }
    IOutputAllocator* getOutputAllocator(char const* /*name*/) noexcept override {
        unexpected("getOutputAllocator");
        return nullptr;
    }
    int64_t getMaxOutputSize(char const* /*tensorName*/) const noexcept override {
        unexpected("getMaxOutputSize");
        return 0;
    }
    bool setTemporaryStorageAllocator(IGpuAllocator* /*allocator*/) noexcept override {
        unexpected("setTemporaryStorageAllocator");
        return false;
    }
    IGpuAllocator* getTemporaryStorageAllocator() const noexcept override {
        unexpected("getTemporaryStorageAllocator");
        return nullptr;
    }
    void setPersistentCacheLimit(size_t /*size*/) noexcept override {
        unexpected("setPersistentCacheLimit");
    }
    size_t getPersistentCacheLimit() const noexcept override {
        unexpected("getPersistentCacheLimit");
        return 0;
    }
    bool setNvtxVerbosity(ProfilingVerbosity /*verbosity*/) noexcept override {
        unexpected("setNvtxVerbosity");
        return false;
    }
    ProfilingVerbosity getNvtxVerbosity() const noexcept override {
        unexpected("getNvtxVerbosity");
        return ProfilingVerbosity{};
    }
    bool setDebugListener(IDebugListener* /*listener*/) noexcept override {
        unexpected("setDebugListener");
        return false;
    }
    IDebugListener* getDebugListener() noexcept override {
        unexpected("getDebugListener");
        return nullptr;
    }
    bool setTensorDebugState(char const* /*name*/, bool /*flag*/) noexcept override {
        unexpected("setTensorDebugState");
        return false;
    }
    bool getDebugState(char const* /*name*/) const noexcept override {
        unexpected("getDebugState");
        return false;
    }
    bool setAllTensorsDebugState(bool /*flag*/) noexcept override {
        unexpected("setAllTensorsDebugState");
        return false;
    }
    size_t updateDeviceMemorySizeForShapes() noexcept override {
        unexpected("updateDeviceMemorySizeForShapes");
        return 0;
    }
    IRuntimeConfig* getRuntimeConfig() const noexcept override {
        unexpected("getRuntimeConfig");
        return nullptr;
    }
    bool setUnfusedTensorsDebugState(bool /*flag*/) noexcept override {
        unexpected("setUnfusedTensorsDebugState");
        return false;
    }
    bool getUnfusedTensorsDebugState() const noexcept override {
        unexpected("getUnfusedTensorsDebugState");
        return false;
    }
    bool setCommunicator(void* /*communicator*/) noexcept override {
        unexpected("setCommunicator");
        return false;
    }

private:
    Tensor const* find(char const* name) const {
        for (Tensor const& tensor : tensors_) {
            if (tensor.name == name) {
                return &tensor;
            }
        }
        return nullptr;
    }

    ICudaEngine const& engine_;
    std::vector<Tensor> const& tensors_;
    Behaviour const& behaviour_;
    std::map<std::string, Dims> shapes_;
    std::map<std::string, IOutputAllocator*> allocators_;
};

class StandInContext final : public IExecutionContext {
public:
    StandInContext(std::shared_ptr<Events> events, ICudaEngine const& engine,
                   std::vector<Tensor> const& tensors, Behaviour const& behaviour, ILogger& logger)
        : events_(events), logger_(logger), impl_(std::move(events), engine, tensors, behaviour) {
        mImpl = &impl_;
        events_->context_alive = true;
    }
    StandInContext(StandInContext const&) = delete;
    StandInContext& operator=(StandInContext const&) = delete;
    StandInContext(StandInContext&&) = delete;
    StandInContext& operator=(StandInContext&&) = delete;
    ~StandInContext() override {
        EXPECT_TRUE(events_->engine_alive) << "a context outlived its engine";
        logger_.log(ILogger::Severity::kVERBOSE, "context destroyed");
        events_->context_alive = false;
        events_->destroyed.emplace_back("context");
    }

private:
    std::shared_ptr<Events> events_;
    ILogger& logger_;
    ContextImpl impl_;
};

class EngineImpl final : public apiv::VCudaEngine, Base {
public:
    EngineImpl(std::shared_ptr<Events> events, std::vector<Tensor> tensors, Behaviour behaviour,
               ILogger& logger)
        : Base(std::move(events), "ICudaEngine"), tensors_(std::move(tensors)),
          behaviour_(std::move(behaviour)), logger_(logger) {}

    void set_interface(ICudaEngine const& engine) { engine_ = &engine; }

    IExecutionContext*
    createExecutionContext(ExecutionContextAllocationStrategy strategy) noexcept override {
        record("createExecutionContext " + std::to_string(static_cast<std::int32_t>(strategy)));
        if (!behaviour_.context_created) {
            return nullptr;
        }
        return new StandInContext(shared_events(), *engine_, tensors_, behaviour_, logger_);
    }
    char const* getName() const noexcept override {
        record("getName");
        return "stand-in";
    }
    std::int32_t getNbOptimizationProfiles() const noexcept override {
        record("getNbOptimizationProfiles");
        return behaviour_.profiles;
    }
    std::int32_t getNbIOTensors() const noexcept override {
        record("getNbIOTensors");
        return static_cast<std::int32_t>(tensors_.size());
    }
    char const* getIOTensorName(std::int32_t index) const noexcept override {
        record("getIOTensorName " + std::to_string(index));
        return index < 0 || static_cast<std::size_t>(index) >= tensors_.size()
                   ? nullptr
                   : tensors_[static_cast<std::size_t>(index)].name.c_str();
    }
    Dims getTensorShape(char const* name) const noexcept override {
        record(std::string("getTensorShape ") + name);
        return dims(at(name).shape);
    }
    DataType getTensorDataType(char const* name) const noexcept override {
        record(std::string("getTensorDataType ") + name);
        return at(name).dtype;
    }
    TensorLocation getTensorLocation(char const* name) const noexcept override {
        record(std::string("getTensorLocation ") + name);
        return at(name).location;
    }
    bool isShapeInferenceIO(char const* name) const noexcept override {
        record(std::string("isShapeInferenceIO ") + name);
        return at(name).shape_tensor;
    }
    TensorIOMode getTensorIOMode(char const* name) const noexcept override {
        record(std::string("getTensorIOMode ") + name);
        return at(name).mode;
    }
    TensorFormat getTensorFormat(char const* name) const noexcept override {
        record(std::string("getTensorFormat ") + name);
        return at(name).format;
    }
    Dims getProfileShape(char const* name, std::int32_t profile,
                         OptProfileSelector select) const noexcept override {
        record(std::string("getProfileShape ") + name + " " + std::to_string(profile) + " " +
               std::to_string(static_cast<std::int32_t>(select)));
        Tensor const& tensor = at(name);
        if (tensor.min.empty()) {
            return dims(tensor.shape);
        }
        if (profile > 0) {
            auto const index = static_cast<std::size_t>(profile - 1);
            if (index >= tensor.more_profiles.size()) {
                ADD_FAILURE() << "the engine was asked about a profile it does not have: "
                              << profile;
                return dims(tensor.shape);
            }
            return dims(tensor.more_profiles[index][static_cast<std::size_t>(select)]);
        }
        switch (select) {
        case OptProfileSelector::kMIN:
            return dims(tensor.min);
        case OptProfileSelector::kOPT:
            return dims(tensor.opt);
        case OptProfileSelector::kMAX:
            return dims(tensor.max);
        }
        return dims(tensor.shape);
    }
    char const* getAliasedInputTensor(char const* name) const noexcept override {
        record(std::string("getAliasedInputTensor ") + name);
        return nullptr;
    }
    std::int32_t getNbAuxStreams() const noexcept override {
        record("getNbAuxStreams");
        return behaviour_.aux_streams;
    }
    std::int64_t getDeviceMemorySizeV2() const noexcept override {
        record("getDeviceMemorySizeV2");
        return behaviour_.device_memory;
    }
    std::int64_t getDeviceMemorySizeForProfileV2(std::int32_t profile) const noexcept override {
        record("getDeviceMemorySizeForProfileV2 " + std::to_string(profile));
        return behaviour_.device_memory;
    }

    ICudaEngine* getPImpl() noexcept override {
        unexpected("getPImpl");
        return nullptr;
    }
    int32_t getNbLayers() const noexcept override {
        unexpected("getNbLayers");
        return 0;
    }
    IHostMemory* serialize() const noexcept override {
        unexpected("serialize");
        return nullptr;
    }
    bool isRefittable() const noexcept override {
        unexpected("isRefittable");
        return false;
    }
    EngineCapability getEngineCapability() const noexcept override {
        unexpected("getEngineCapability");
        return EngineCapability{};
    }
    void setErrorRecorder(IErrorRecorder* /*recorder*/) noexcept override {
        unexpected("setErrorRecorder");
    }
    IErrorRecorder* getErrorRecorder() const noexcept override {
        unexpected("getErrorRecorder");
        return nullptr;
    }
    TacticSources getTacticSources() const noexcept override {
        unexpected("getTacticSources");
        return TacticSources{};
    }
    ProfilingVerbosity getProfilingVerbosity() const noexcept override {
        unexpected("getProfilingVerbosity");
        return ProfilingVerbosity{};
    }
    IEngineInspector* createEngineInspector() const noexcept override {
        unexpected("createEngineInspector");
        return nullptr;
    }
    int32_t getTensorBytesPerComponent(char const* /*tensorName*/) const noexcept override {
        unexpected("getTensorBytesPerComponent");
        return 0;
    }
    int32_t getTensorComponentsPerElement(char const* /*tensorName*/) const noexcept override {
        unexpected("getTensorComponentsPerElement");
        return 0;
    }
    char const* getTensorFormatDesc(char const* /*tensorName*/) const noexcept override {
        unexpected("getTensorFormatDesc");
        return nullptr;
    }
    int32_t getTensorVectorizedDim(char const* /*tensorName*/) const noexcept override {
        unexpected("getTensorVectorizedDim");
        return 0;
    }
    HardwareCompatibilityLevel getHardwareCompatibilityLevel() const noexcept override {
        unexpected("getHardwareCompatibilityLevel");
        return HardwareCompatibilityLevel{};
    }
    int32_t getTensorBytesPerComponentV2(char const* /*tensorName*/,
                                         int32_t /*profileIndex*/) const noexcept override {
        unexpected("getTensorBytesPerComponentV2");
        return 0;
    }
    int32_t getTensorComponentsPerElementV2(char const* /*tensorName*/,
                                            int32_t /*profileIndex*/) const noexcept override {
        unexpected("getTensorComponentsPerElementV2");
        return 0;
    }
    TensorFormat getTensorFormatV2(char const* /*tensorName*/,
                                   int32_t /*profileIndex*/) const noexcept override {
        unexpected("getTensorFormatV2");
        return TensorFormat{};
    }
    char const* getTensorFormatDescV2(char const* /*tensorName*/,
                                      int32_t /*profileIndex*/) const noexcept override {
        unexpected("getTensorFormatDescV2");
        return nullptr;
    }
    int32_t getTensorVectorizedDimV2(char const* /*tensorName*/,
                                     int32_t /*profileIndex*/) const noexcept override {
        unexpected("getTensorVectorizedDimV2");
        return 0;
    }
    ISerializationConfig* createSerializationConfig() noexcept override {
        unexpected("createSerializationConfig");
        return nullptr;
    }
    IHostMemory* serializeWithConfig(ISerializationConfig& /*config*/) const noexcept override {
        unexpected("serializeWithConfig");
        return nullptr;
    }
    IRefitter* createRefitter(ILogger& /*logger*/) noexcept override {
        unexpected("createRefitter");
        return nullptr;
    }
    int64_t getStreamableWeightsSize() const noexcept override {
        unexpected("getStreamableWeightsSize");
        return 0;
    }
    bool isDebugTensor(char const* /*name*/) const noexcept override {
        unexpected("isDebugTensor");
        return false;
    }
    bool setWeightStreamingBudgetV2(int64_t /*gpuMemoryBudget*/) noexcept override {
        unexpected("setWeightStreamingBudgetV2");
        return false;
    }
    int64_t getWeightStreamingBudgetV2() const noexcept override {
        unexpected("getWeightStreamingBudgetV2");
        return 0;
    }
    int64_t getWeightStreamingAutomaticBudget() const noexcept override {
        unexpected("getWeightStreamingAutomaticBudget");
        return 0;
    }
    int64_t getWeightStreamingScratchMemorySize() const noexcept override {
        unexpected("getWeightStreamingScratchMemorySize");
        return 0;
    }
    int64_t const* getProfileTensorValuesV2(char const* /*tensorName*/, int32_t /*profileIndex*/,
                                            OptProfileSelector /*select*/) const noexcept override {
        unexpected("getProfileTensorValuesV2");
        return nullptr;
    }
    IExecutionContext*
    createExecutionContextWithRuntimeConfig(IRuntimeConfig* /*runtimeConfig*/) noexcept override {
        unexpected("createExecutionContextWithRuntimeConfig");
        return nullptr;
    }
    IRuntimeConfig* createRuntimeConfig() noexcept override {
        unexpected("createRuntimeConfig");
        return nullptr;
    }
    int64_t getEngineStat(EngineStat /*stat*/) const noexcept override {
        unexpected("getEngineStat");
        return 0;
    }

private:
    Tensor const& at(char const* name) const {
        for (Tensor const& tensor : tensors_) {
            if (name != nullptr && tensor.name == name) {
                return tensor;
            }
        }
        ADD_FAILURE() << "the engine was asked about a tensor it does not have: "
                      << (name == nullptr ? "(null)" : name);
        static Tensor const kNone;
        return kNone;
    }

    std::vector<Tensor> tensors_;
    Behaviour behaviour_;
    ILogger& logger_;
    ICudaEngine const* engine_ = nullptr;
};

class StandInEngine final : public ICudaEngine {
public:
    StandInEngine(std::shared_ptr<Events> events, std::vector<Tensor> tensors, Behaviour behaviour,
                  ILogger& logger)
        : events_(events), logger_(logger),
          impl_(std::move(events), std::move(tensors), std::move(behaviour), logger) {
        impl_.set_interface(*this);
        mImpl = &impl_;
        events_->engine_alive = true;
    }
    StandInEngine(StandInEngine const&) = delete;
    StandInEngine& operator=(StandInEngine const&) = delete;
    StandInEngine(StandInEngine&&) = delete;
    StandInEngine& operator=(StandInEngine&&) = delete;
    ~StandInEngine() override {
        EXPECT_TRUE(events_->runtime_alive) << "an engine outlived its runtime";
        EXPECT_FALSE(events_->context_alive) << "an engine was destroyed before its context";
        logger_.log(ILogger::Severity::kVERBOSE, "engine destroyed");
        events_->engine_alive = false;
        events_->destroyed.emplace_back("engine");
    }

private:
    std::shared_ptr<Events> events_;
    ILogger& logger_;
    EngineImpl impl_;
};

// A plugin registry that records which libraries are loaded (and the bytes the loader would read
// at the path given) and deregistered; every other method fails the test.
class StandInRegistry final : public IPluginRegistry, Base {
public:
    explicit StandInRegistry(std::shared_ptr<Events> events)
        : Base(std::move(events), "IPluginRegistry") {}
    StandInRegistry(StandInRegistry const&) = delete;
    StandInRegistry& operator=(StandInRegistry const&) = delete;
    StandInRegistry(StandInRegistry&&) = delete;
    StandInRegistry& operator=(StandInRegistry&&) = delete;
    ~StandInRegistry() override = default;

    PluginLibraryHandle loadLibrary(AsciiChar const* path) noexcept override {
        record(std::string("loadLibrary ") + path);
        std::ifstream file(path, std::ios::binary);
        std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
        loaded.push_back(std::move(bytes));
        handles.push_back(std::make_unique<int>(static_cast<int>(handles.size())));
        return fail_loads ? nullptr : handles.back().get();
    }
    void deregisterLibrary(PluginLibraryHandle handle) noexcept override {
        EXPECT_FALSE(events().engine_alive)
            << "a plugin library was deregistered before its engine";
        record("deregisterLibrary " + std::to_string(*static_cast<int*>(handle)));
    }
    void setErrorRecorder(IErrorRecorder* const /*recorder*/) noexcept override {
        unexpected("setErrorRecorder");
    }
    IErrorRecorder* getErrorRecorder() const noexcept override {
        unexpected("getErrorRecorder");
        return nullptr;
    }
    bool isParentSearchEnabled() const override {
        unexpected("isParentSearchEnabled");
        return false;
    }
    void setParentSearchEnabled(bool const /*enabled*/) override {
        unexpected("setParentSearchEnabled");
    }
    bool registerCreator(IPluginCreatorInterface& /*creator*/,
                         AsciiChar const* const /*pluginNamespace*/) noexcept override {
        unexpected("registerCreator");
        return false;
    }
    IPluginCreatorInterface* const*
    getAllCreators(int32_t* const /*count*/) const noexcept override {
        unexpected("getAllCreators");
        return nullptr;
    }
    IPluginCreatorInterface*
    getCreator(AsciiChar const* const /*name*/, AsciiChar const* const /*version*/,
               AsciiChar const* const /*pluginNamespace*/) noexcept override {
        unexpected("getCreator");
        return nullptr;
    }
    bool deregisterCreator(IPluginCreatorInterface const& /*creator*/) noexcept override {
        unexpected("deregisterCreator");
        return false;
    }
    IPluginResource* acquirePluginResource(AsciiChar const* /*key*/,
                                           IPluginResource* /*resource*/) noexcept override {
        unexpected("acquirePluginResource");
        return nullptr;
    }
    int32_t releasePluginResource(AsciiChar const* /*key*/) noexcept override {
        unexpected("releasePluginResource");
        return 0;
    }
    IPluginCreatorInterface* const*
    getAllCreatorsRecursive(int32_t* const /*count*/) noexcept override {
        unexpected("getAllCreatorsRecursive");
        return nullptr;
    }

    bool fail_loads = false;
    std::vector<std::string> loaded; // the bytes read at each path loadLibrary was given
    std::vector<std::unique_ptr<int>> handles;
};

// What deserializeCudaEngine does: hand out an engine of `tensors`, or log `error` and hand out
// none.
struct Deserialization {
    std::vector<Tensor> tensors;
    Behaviour behaviour;
    std::optional<std::string> error;
    // How many bytes each read of a stream (deserializeCudaEngineV2) asks for.
    std::int64_t read_bytes = 1 << 20;
};

class RuntimeImpl final : public apiv::VRuntime, Base {
public:
    RuntimeImpl(std::shared_ptr<Events> events, Deserialization deserialization, ILogger& logger)
        : Base(std::move(events), "IRuntime"), deserialization_(std::move(deserialization)),
          logger_(logger) {}

    ICudaEngine* deserializeCudaEngine(void const* blob, std::size_t size) noexcept override {
        record("deserializeCudaEngine " + std::to_string(size));
        auto const* bytes = static_cast<std::byte const*>(blob);
        received.assign(bytes, bytes + size);
        return deserialized();
    }

    // Reads the stream to its end in pieces of Deserialization::read_bytes, each into host
    // memory of its own, recording what every read returned and the bytes it handed over; a
    // failed read (-1) is logged as an error, and no engine is made.
    nvinfer1::ICudaEngine* deserializeCudaEngineV2(IStreamReaderV2& reader) noexcept override {
        received.clear();
        reads.clear();
        handed.clear();
        for (;;) {
            std::vector<std::byte> piece(static_cast<std::size_t>(deserialization_.read_bytes),
                                         std::byte{0xEE});
            std::int64_t const got =
                reader.read(piece.data(), deserialization_.read_bytes, cudaStream_t{});
            reads.push_back(got);
            if (got < 0) {
                record("deserializeCudaEngineV2 " + std::to_string(received.size()) +
                       " then a failed read");
                logger_.log(ILogger::Severity::kERROR, "stand-in: the stream reader failed");
                return nullptr;
            }
            if (got == 0) {
                break;
            }
            received.insert(received.end(), piece.begin(), piece.begin() + got);
            handed.push_back(std::move(piece));
        }
        record("deserializeCudaEngineV2 " + std::to_string(received.size()));
        return deserialized();
    }

    IPluginRegistry& getPluginRegistry() noexcept override {
        record("getPluginRegistry");
        return registry;
    }

    std::vector<std::byte> received;            // the bytes the last deserialization was offered
    std::vector<std::int64_t> reads;            // what each read of the last stream returned
    std::vector<std::vector<std::byte>> handed; // the memory of each read, as it was left
    StandInRegistry registry{shared_events()};

private:
    ICudaEngine* deserialized() noexcept {
        if (deserialization_.error) {
            logger_.log(ILogger::Severity::kERROR, deserialization_.error->c_str());
            return nullptr;
        }
        return new StandInEngine(shared_events(), deserialization_.tensors,
                                 deserialization_.behaviour, logger_);
    }

public:
    IRuntime* getPImpl() noexcept override {
        unexpected("getPImpl");
        return nullptr;
    }
    void setDLACore(int32_t /*dlaCore*/) noexcept override { unexpected("setDLACore"); }
    int32_t getDLACore() const noexcept override {
        unexpected("getDLACore");
        return 0;
    }
    int32_t getNbDLACores() const noexcept override {
        unexpected("getNbDLACores");
        return 0;
    }
    void setGpuAllocator(IGpuAllocator* /*allocator*/) noexcept override {
        unexpected("setGpuAllocator");
    }
    void setErrorRecorder(IErrorRecorder* /*recorder*/) noexcept override {
        unexpected("setErrorRecorder");
    }
    IErrorRecorder* getErrorRecorder() const noexcept override {
        unexpected("getErrorRecorder");
        return nullptr;
    }
    ILogger* getLogger() const noexcept override {
        unexpected("getLogger");
        return nullptr;
    }
    bool setMaxThreads(int32_t /*maxThreads*/) noexcept override {
        unexpected("setMaxThreads");
        return false;
    }
    int32_t getMaxThreads() const noexcept override {
        unexpected("getMaxThreads");
        return 0;
    }
    void setTemporaryDirectory(char const*) noexcept override {
        unexpected("setTemporaryDirectory");
    }
    char const* getTemporaryDirectory() const noexcept override {
        unexpected("getTemporaryDirectory");
        return nullptr;
    }
    void setTempfileControlFlags(TempfileControlFlags) noexcept override {
        unexpected("setTempfileControlFlags");
    }
    TempfileControlFlags getTempfileControlFlags() const noexcept override {
        unexpected("getTempfileControlFlags");
        return TempfileControlFlags{};
    }
    void setPluginRegistryParent(IPluginRegistry* /*parent*/) noexcept override {
        unexpected("setPluginRegistryParent");
    }
    IRuntime* loadRuntime(char const* /*path*/) noexcept override {
        unexpected("loadRuntime");
        return nullptr;
    }
    void setEngineHostCodeAllowed(bool /*allowed*/) noexcept override {
        unexpected("setEngineHostCodeAllowed");
    }
    bool getEngineHostCodeAllowed() const noexcept override {
        unexpected("getEngineHostCodeAllowed");
        return false;
    }

private:
    Deserialization deserialization_;
    ILogger& logger_;
};

class StandInRuntime final : public IRuntime {
public:
    StandInRuntime(std::shared_ptr<Events> events, Deserialization deserialization, ILogger& logger)
        : events_(events), logger_(logger),
          impl_(std::move(events), std::move(deserialization), logger) {
        mImpl = &impl_;
        events_->runtime_alive = true;
    }
    StandInRuntime(StandInRuntime const&) = delete;
    StandInRuntime& operator=(StandInRuntime const&) = delete;
    StandInRuntime(StandInRuntime&&) = delete;
    StandInRuntime& operator=(StandInRuntime&&) = delete;
    ~StandInRuntime() override {
        EXPECT_TRUE(events_->logger_alive) << "a runtime outlived its logger";
        EXPECT_FALSE(events_->engine_alive) << "a runtime was destroyed before its engine";
        logger_.log(ILogger::Severity::kVERBOSE, "runtime destroyed");
        events_->runtime_alive = false;
        events_->destroyed.emplace_back("runtime");
    }
    RuntimeImpl& impl() noexcept { return impl_; }
    // The logger the runtime was created with: the adapter's, which forwards to the application's.
    ILogger& logger() noexcept { return logger_; }

private:
    std::shared_ptr<Events> events_;
    ILogger& logger_;
    RuntimeImpl impl_;
};

} // namespace tensoracle::testing::stand_in
