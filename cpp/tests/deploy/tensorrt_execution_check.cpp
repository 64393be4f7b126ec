// Which TensorRT calls an execution unit (tensorrt::Execution) makes, in which order and with which
// arguments: the engine's IO queried and checked before a context exists, creation shapes set,
// every later shape and address checked before TensorRT sees it, the caller's exact pointers and
// stream passed through, nothing allocated or synchronized, and nothing called after a refusal or
// a close. TensorRT is stood in for by the recording stand-ins of tensorrt_stand_ins.hpp; they
// prove our calls, never what TensorRT does with them (engine execution itself runs only on a
// GPU with TensorRT: python/tests/engine, marked gpu).
#include "deploy/tensorrt_deployment.hpp"
#include "deploy/tensorrt_stand_ins.hpp"
#include "support/error_message.hpp"
#include "tensoracle/deploy/tensorrt.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <cstdint>
#include <gtest/gtest.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tensoracle::deploy {
namespace {

using testing::TensorRtDeployment;
using testing::stand_in::Behaviour;
using testing::stand_in::Events;
using testing::stand_in::RecordingLogger;
using testing::stand_in::Tensor;

void* address(std::uintptr_t value) {
    return reinterpret_cast<void*>(value); // NOLINT(performance-no-int-to-ptr): never dereferenced
}

cudaStream_t stream(std::uintptr_t value) {
    return reinterpret_cast<cudaStream_t>(value); // NOLINT(performance-no-int-to-ptr)
}

std::string text(void const* pointer) {
    return testing::stand_in::pointer_text(pointer);
}

// An engine of `tensors` opened through the stand-in runtime; `events` records every call.
struct Opened {
    TensorRtDeployment deployment;
    std::shared_ptr<Events> events = std::make_shared<Events>();
    std::optional<tensorrt::Engine> engine;

    explicit Opened(std::vector<Tensor> tensors = testing::ranged_io(), Behaviour behaviour = {})
        : deployment(std::move(tensors)) {
        auto const options = deployment.options(std::make_shared<RecordingLogger>(events), events,
                                                nullptr, std::move(behaviour));
        engine.emplace(
            tensorrt::open_engine_for(deployment.manifest, "encoder", deployment.gpu, options));
    }

    // The calls made since the last call of this function.
    std::vector<std::string> calls() {
        std::vector<std::string> made = std::move(events->calls);
        events->calls.clear();
        return made;
    }
};

bool is_query(std::string const& call) {
    return call.rfind("get", 0) == 0 || call.rfind("isShapeInferenceIO", 0) == 0;
}

TEST(TensorRtExecution, CreationQueriesTheEngineThenCreatesOneContextAndSetsTheOptimum) {
    Opened opened;
    (void)opened.calls();
    tensorrt::Execution const unit = opened.engine->create_execution();
    std::vector<std::string> const calls = opened.calls();
    auto const created = std::find(calls.begin(), calls.end(), "createExecutionContext 0");
    ASSERT_NE(created, calls.end()); // kSTATIC: TensorRT allocates the context's memory
    EXPECT_TRUE(std::all_of(calls.begin(), created, is_query));
    for (char const* query :
         {"getNbIOTensors", "getIOTensorName 0", "getTensorIOMode x", "getTensorDataType y",
          "getTensorLocation x", "getTensorFormat y", "isShapeInferenceIO x",
          "getProfileShape x 0 0", "getProfileShape x 0 1", "getProfileShape x 0 2"}) {
        EXPECT_NE(std::find(calls.begin(), created, query), created) << query;
    }
    EXPECT_EQ(std::vector<std::string>(created + 1, calls.end()),
              (std::vector<std::string>{"setInputShape x [1, 4]", "getTensorShape y"}));
    EXPECT_EQ(unit.ranged_input_names(), std::vector<std::string>{"x"});
}

TEST(TensorRtExecution, ShapesAreCheckedBeforeTensorRtSeesThem) {
    Opened opened;
    tensorrt::Execution unit = opened.engine->create_execution();
    (void)opened.calls();
    EXPECT_THROW(unit.set_input_shapes({{"x", {1, 9}}}), InvalidArgument); // beyond [1, 8]
    EXPECT_THROW(unit.set_input_shapes({{"x", {2, 4}}}), InvalidArgument); // a fixed axis
    EXPECT_THROW(unit.set_input_shapes({{"z", {1, 4}}}), InvalidArgument); // no such input
    EXPECT_THROW(unit.set_input_shapes({}), InvalidArgument);              // x missing
    EXPECT_TRUE(opened.calls().empty());
    unit.set_input_shapes({{"x", {1, 6}}});
    EXPECT_EQ(opened.calls(),
              (std::vector<std::string>{"setInputShape x [1, 6]", "getTensorShape y"}));
    EXPECT_EQ(unit.shape("y"), (Shape{1, 6}));
    EXPECT_EQ(unit.bytes("y"), 24U);
}

TEST(TensorRtExecution, TheCallersExactAddressesAndStreamArePassedAndNothingElseIsCalled) {
    Opened opened;
    tensorrt::Execution unit = opened.engine->create_execution();
    unit.set_input_shapes({{"x", {1, 8}}});
    (void)opened.calls();
    unit.bind({{"y", address(0x7f0000020000)}, {"x", address(0x7f0000010000)}});
    unit.enqueue(stream(0x5a5a00));
    // Inputs first, in the engine's order; then the one enqueue: no allocation, no copy, no sync.
    EXPECT_EQ(opened.calls(),
              (std::vector<std::string>{"setTensorAddress x " + text(address(0x7f0000010000)),
                                        "setTensorAddress y " + text(address(0x7f0000020000)),
                                        "enqueueV3 " + text(stream(0x5a5a00))}));
    unit.enqueue(stream(0x5a5b00)); // addresses stay bound
    EXPECT_EQ(opened.calls(), std::vector<std::string>{"enqueueV3 " + text(stream(0x5a5b00))});
}

TEST(TensorRtExecution, AddressesAreCheckedBeforeTensorRtSeesThem) {
    Opened opened;
    tensorrt::Execution unit = opened.engine->create_execution();
    unit.set_input_shapes({{"x", {1, 8}}});
    (void)opened.calls();
    EXPECT_THROW(unit.bind({{"x", address(0x7f0000010004)}, {"y", address(0x7f0000020000)}}),
                 InvalidArgument); // not 256-byte aligned
    EXPECT_THROW(unit.bind({{"x", nullptr}, {"y", address(0x7f0000020000)}}), InvalidArgument);
    EXPECT_THROW(unit.bind({{"x", address(0x7f0000010000)}}), InvalidArgument); // y missing
    EXPECT_THROW(unit.enqueue(stream(0x5a5a00)), Error);                        // nothing bound
    EXPECT_TRUE(opened.calls().empty());
}

TEST(TensorRtExecution, EnqueueBeforeShapesAreSetIsRefusedWithoutCallingTensorRt) {
    Opened opened;
    tensorrt::Execution unit = opened.engine->create_execution();
    // Addresses may be bound first (TensorRT keeps them across shape changes), but x is ranged:
    // its shape must be chosen before an enqueue.
    unit.bind({{"x", address(0x7f0000010000)}, {"y", address(0x7f0000020000)}});
    (void)opened.calls();
    EXPECT_THROW(unit.enqueue(stream(0x5a5a00)), Error);
    EXPECT_TRUE(opened.calls().empty());
    unit.set_input_shapes({{"x", {1, 2}}});
    unit.enqueue(stream(0x5a5a00));
    EXPECT_EQ(opened.calls().back(), "enqueueV3 " + text(stream(0x5a5a00)));
}

TEST(TensorRtExecution, ARefusalByTensorRtIsATensorRtErrorAndBlocksEnqueue) {
    Behaviour behaviour;
    behaviour.refused_addresses = {"y"};
    Opened opened(testing::ranged_io(), behaviour);
    tensorrt::Execution unit = opened.engine->create_execution();
    unit.set_input_shapes({{"x", {1, 8}}});
    (void)opened.calls();
    try {
        unit.bind({{"x", address(0x7f0000010000)}, {"y", address(0x7f0000020000)}});
        FAIL() << "a refused address was accepted";
    } catch (TensorRtError const& error) {
        EXPECT_NE(std::string(error.what()).find("'y'"), std::string::npos) << error.what();
    }
    EXPECT_EQ(opened.calls().size(), 2U); // x, then y, which TensorRT refused
    EXPECT_THROW(unit.enqueue(stream(0x5a5a00)), Error);
    EXPECT_TRUE(opened.calls().empty());
}

TEST(TensorRtExecution, ARefusedShapeIsATensorRtErrorAndBlocksEnqueue) {
    Behaviour behaviour;
    behaviour.refused_shapes = {"x"};
    testing::TensorRtDeployment const deployment;
    auto events = std::make_shared<Events>();
    auto const options =
        deployment.options(std::make_shared<RecordingLogger>(events), events, nullptr, behaviour);
    tensorrt::Engine const engine =
        tensorrt::open_engine_for(deployment.manifest, "encoder", deployment.gpu, options);
    // The creation shape is refused already: no unit.
    EXPECT_THROW((void)engine.create_execution(), TensorRtError);
    EXPECT_FALSE(events->context_alive);
}

TEST(TensorRtExecution, AFailedEnqueueIsATensorRtError) {
    Behaviour behaviour;
    behaviour.enqueue_succeeds = false;
    Opened opened(testing::ranged_io(), behaviour);
    tensorrt::Execution unit = opened.engine->create_execution();
    unit.set_input_shapes({{"x", {1, 8}}});
    unit.bind({{"x", address(0x7f0000010000)}, {"y", address(0x7f0000020000)}});
    EXPECT_THROW(unit.enqueue(stream(0x5a5a00)), TensorRtError);
}

TEST(TensorRtExecution, NoContextIsATensorRtErrorAndNothingFollows) {
    Behaviour behaviour;
    behaviour.context_created = false;
    Opened opened(testing::ranged_io(), behaviour);
    (void)opened.calls();
    EXPECT_THROW((void)opened.engine->create_execution(), TensorRtError);
    std::vector<std::string> const calls = opened.calls();
    ASSERT_FALSE(calls.empty());
    EXPECT_EQ(calls.back(), "createExecutionContext 0");
}

TEST(TensorRtExecution, WhatAUnitCannotRunIsRefusedBeforeAContextExists) {
    for (auto const& [change, field] : std::vector<std::pair<void (*)(Tensor&), std::string>>{
             {[](Tensor& x) { x.location = nvinfer1::TensorLocation::kHOST; }, "HOST"},
             {[](Tensor& x) { x.format = nvinfer1::TensorFormat::kCHW32; }, "CHW32"}}) {
        std::vector<Tensor> tensors = testing::ranged_io();
        change(tensors.front());
        Opened opened(tensors);
        (void)opened.calls();
        try {
            (void)opened.engine->create_execution();
            FAIL() << "an engine with a " << field << " input was accepted";
        } catch (EngineIOError const& error) {
            EXPECT_NE(std::string(error.what()).find(field), std::string::npos) << error.what();
        }
        std::vector<std::string> const calls = opened.calls();
        EXPECT_TRUE(std::all_of(calls.begin(), calls.end(), is_query));
    }
}

std::vector<Tensor> value_dependent_io() {
    std::vector<Tensor> tensors = testing::ranged_io();
    tensors.back().data_dependent = true;
    return tensors;
}

// The application's allocator for outputs whose sizes depend on tensor values: it records what
// the unit asks of it and hands out made-up 256-byte aligned addresses (never dereferenced).
class RecordingMemory final : public nvinfer1::IGpuAsyncAllocator {
public:
    explicit RecordingMemory(std::shared_ptr<Events> events) : events_(std::move(events)) {}
    void* allocateAsync(std::uint64_t size, std::uint64_t alignment,
                        nvinfer1::AllocatorFlags /*flags*/, cudaStream_t on) noexcept override {
        events_->calls.push_back("allocateAsync " + std::to_string(size) + " " +
                                 std::to_string(alignment) + " " + text(on));
        if (fail) {
            return nullptr;
        }
        next_ += 0x100000;
        return address(next_);
    }
    bool deallocateAsync(void* memory, cudaStream_t on) noexcept override {
        events_->calls.push_back("deallocateAsync " + text(memory) + " " + text(on) +
                                 (events_->context_alive ? " (context alive)" : ""));
        return true;
    }
    bool fail = false;

private:
    std::shared_ptr<Events> events_;
    std::uintptr_t next_ = 0x7f0000000000;
};

tensorrt::ExecutionOptions with_output_memory(std::shared_ptr<RecordingMemory> memory) {
    tensorrt::ExecutionOptions options;
    options.output_memory = std::move(memory);
    return options;
}

TEST(TensorRtExecution, AnOutputWhoseSizeDependsOnValuesIsRefusedWithoutAnAllocator) {
    Opened opened(value_dependent_io());
    std::string const message =
        testing::message_of<EngineIOError>([&] { (void)opened.engine->create_execution(); });
    EXPECT_NE(message.find("ExecutionOptions::output_memory): 'y' [1, -1]"), std::string::npos)
        << message;
    EXPECT_FALSE(opened.events->context_alive);
}

TEST(TensorRtExecution, AValueDependentOutputGetsItsMemoryFromTheApplicationsAllocatorInEnqueue) {
    Opened opened(value_dependent_io());
    auto const memory = std::make_shared<RecordingMemory>(opened.events);
    tensorrt::Execution unit = opened.engine->create_execution(with_output_memory(memory));
    std::vector<std::string> const created = opened.calls();
    EXPECT_NE(std::find(created.begin(), created.end(), "setOutputAllocator y"), created.end());
    EXPECT_TRUE(std::none_of(created.begin(), created.end(), [](std::string const& call) {
        return call.rfind("allocateAsync", 0) == 0; // nothing is allocated before an enqueue
    }));
    EXPECT_EQ(unit.value_dependent_output_names(), std::vector<std::string>{"y"});
    unit.set_input_shapes({{"x", {1, 8}}});
    EXPECT_THROW((void)unit.shape("y"), Error);
    EXPECT_FALSE(unit.value_dependent_output("y").shape.has_value());
    EXPECT_THROW((void)unit.value_dependent_output("x"), InvalidArgument);
    (void)opened.calls();
    EXPECT_THROW(unit.bind({{"x", address(0x7f0000010000)}, {"y", address(0x7f0000020000)}}),
                 InvalidArgument);
    EXPECT_TRUE(opened.calls().empty());

    // TensorRT asks for the bytes it needs during enqueueV3: the unit takes them from the
    // application's allocator on the enqueue's stream, and keeps the shape TensorRT reports.
    unit.bind({{"x", address(0x7f0000010000)}});
    opened.events->value_dependent["y"] = {4096, {1, 3}};
    unit.enqueue(stream(0x5a5a00));
    void* const first = address(0x7f0000100000);
    EXPECT_EQ(opened.calls(),
              (std::vector<std::string>{"setTensorAddress x " + text(address(0x7f0000010000)),
                                        "enqueueV3 " + text(stream(0x5a5a00)),
                                        "allocateAsync 4096 256 " + text(stream(0x5a5a00)),
                                        "reallocateOutputAsync y 4096 gave " + text(first)}));
    tensorrt::ValueDependentOutput output = unit.value_dependent_output("y");
    EXPECT_EQ(output.address, first);
    EXPECT_EQ(output.capacity, 4096U);
    EXPECT_EQ(output.shape, (Shape{1, 3}));

    // A smaller result reuses the memory; a larger one gives it back on the enqueue's stream
    // and takes more.
    opened.events->value_dependent["y"] = {1024, {1, 1}};
    unit.enqueue(stream(0x5a5b00));
    EXPECT_EQ(opened.calls(),
              (std::vector<std::string>{"enqueueV3 " + text(stream(0x5a5b00)),
                                        "reallocateOutputAsync y 1024 gave " + text(first)}));
    EXPECT_EQ(unit.value_dependent_output("y").shape, (Shape{1, 1}));
    EXPECT_EQ(unit.value_dependent_output("y").capacity, 4096U);
    opened.events->value_dependent["y"] = {8192, {1, 6}};
    unit.enqueue(stream(0x5a5b00));
    void* const second = address(0x7f0000200000);
    EXPECT_EQ(opened.calls(),
              (std::vector<std::string>{"enqueueV3 " + text(stream(0x5a5b00)),
                                        "deallocateAsync " + text(first) + " " +
                                            text(stream(0x5a5b00)) + " (context alive)",
                                        "allocateAsync 8192 256 " + text(stream(0x5a5b00)),
                                        "reallocateOutputAsync y 8192 gave " + text(second)}));
    output = unit.value_dependent_output("y");
    EXPECT_EQ(output.address, second);
    EXPECT_EQ(output.shape, (Shape{1, 6}));

    // Closing releases the context first, then gives the memory back.
    unit.close();
    std::vector<std::string> const closed = opened.calls();
    EXPECT_NE(std::find(closed.begin(), closed.end(),
                        "deallocateAsync " + text(second) + " " + text(nullptr)),
              closed.end());
    EXPECT_THROW((void)unit.value_dependent_output("y"), Error);
}

TEST(TensorRtExecution, AFailedOutputAllocationFailsTheEnqueueAsATensorRtError) {
    Opened opened(value_dependent_io());
    auto const memory = std::make_shared<RecordingMemory>(opened.events);
    memory->fail = true;
    tensorrt::Execution unit = opened.engine->create_execution(with_output_memory(memory));
    unit.set_input_shapes({{"x", {1, 8}}});
    unit.bind({{"x", address(0x7f0000010000)}});
    opened.events->value_dependent["y"] = {4096, {1, 3}};
    EXPECT_THROW(unit.enqueue(stream(0x5a5a00)), TensorRtError);
    EXPECT_EQ(unit.value_dependent_output("y").address, nullptr);
    EXPECT_FALSE(unit.value_dependent_output("y").shape.has_value());
}

TEST(TensorRtExecution, AnOutputAllocatorTensorRtRefusesIsATensorRtError) {
    Behaviour behaviour;
    behaviour.refused_allocators = {"y"};
    Opened opened(value_dependent_io(), behaviour);
    auto const memory = std::make_shared<RecordingMemory>(opened.events);
    std::string const message = testing::message_of<TensorRtError>(
        [&] { (void)opened.engine->create_execution(with_output_memory(memory)); });
    EXPECT_NE(message.find("output allocator of output 'y'"), std::string::npos) << message;
    EXPECT_FALSE(opened.events->context_alive);
}

TEST(TensorRtExecution, AClosedUnitCallsNothing) {
    Opened opened;
    tensorrt::Execution unit = opened.engine->create_execution();
    unit.set_input_shapes({{"x", {1, 8}}});
    unit.close();
    EXPECT_FALSE(opened.events->context_alive);
    (void)opened.calls();
    EXPECT_THROW(unit.set_input_shapes({{"x", {1, 8}}}), Error);
    EXPECT_THROW(unit.bind({{"x", address(0x7f0000010000)}, {"y", address(0x7f0000020000)}}),
                 Error);
    EXPECT_THROW(unit.enqueue(stream(0x5a5a00)), Error);
    EXPECT_TRUE(opened.calls().empty());
    EXPECT_TRUE(unit.closed());
}

TEST(TensorRtExecution, AUserManagedUnitTakesTheApplicationsMemoryBeforeItsFirstEnqueue) {
    Behaviour behaviour;
    behaviour.device_memory = 3 << 20;
    Opened opened(testing::ranged_io(), behaviour);
    (void)opened.calls();
    tensorrt::ExecutionOptions options;
    options.user_managed_memory = true;
    tensorrt::Execution unit = opened.engine->create_execution(options);
    std::vector<std::string> calls = opened.calls();
    EXPECT_NE(std::find(calls.begin(), calls.end(), "createExecutionContext 2"), calls.end());
    EXPECT_EQ(unit.device_memory_bytes(), 3 << 20);
    unit.set_input_shapes({{"x", {1, 8}}});
    unit.bind({{"x", address(0x7f0000010000)}, {"y", address(0x7f0000020000)}});
    (void)opened.calls();
    EXPECT_THROW(unit.enqueue(stream(0x5a5a00)), Error); // no memory yet
    EXPECT_THROW(unit.set_device_memory(address(0x7f0000100000), (3 << 20) - 1), InvalidArgument);
    EXPECT_THROW(unit.set_device_memory(address(0x7f0000100080), 3 << 20), InvalidArgument);
    EXPECT_THROW(unit.set_device_memory(nullptr, 3 << 20), InvalidArgument);
    calls = opened.calls();
    EXPECT_TRUE(std::all_of(calls.begin(), calls.end(), is_query)); // nothing handed over
    unit.set_device_memory(address(0x7f0000100000), 4 << 20);
    unit.enqueue(stream(0x5a5a00));
    calls = opened.calls();
    EXPECT_EQ(
        std::vector<std::string>(calls.end() - 2, calls.end()),
        (std::vector<std::string>{"setDeviceMemoryV2 " + text(address(0x7f0000100000)) + " 4194304",
                                  "enqueueV3 " + text(stream(0x5a5a00))}));
}

TEST(TensorRtExecution, ATensorRtManagedUnitRefusesTheApplicationsMemory) {
    Opened opened;
    tensorrt::Execution unit = opened.engine->create_execution();
    (void)opened.calls();
    EXPECT_THROW(unit.set_device_memory(address(0x7f0000100000), 1 << 30), InvalidArgument);
    std::vector<std::string> const calls = opened.calls();
    EXPECT_TRUE(std::all_of(calls.begin(), calls.end(), is_query));
}

TEST(TensorRtExecution, AuxiliaryStreamsArePassedAsGivenUnlessOneWouldDeadlock) {
    Behaviour behaviour;
    behaviour.aux_streams = 2;
    Opened opened(testing::ranged_io(), behaviour);
    tensorrt::Execution unit = opened.engine->create_execution();
    (void)opened.calls();
    EXPECT_THROW(unit.set_aux_streams({stream(0xa100), nullptr}), InvalidArgument);
    EXPECT_THROW(unit.set_aux_streams({stream(0xa100), stream(0xa100)}), InvalidArgument);
    EXPECT_TRUE(opened.calls().empty());
    unit.set_aux_streams({stream(0xa100), stream(0xa200)});
    EXPECT_EQ(opened.calls(), std::vector<std::string>{"setAuxStreams 2 " + text(stream(0xa100)) +
                                                       " " + text(stream(0xa200))});
}

TEST(TensorRtExecution, TheInputConsumedEventIsTensorRtsOrATensorRtError) {
    auto* const event = reinterpret_cast<cudaEvent_t>(0xe100); // NOLINT(performance-no-int-to-ptr)
    Opened opened;
    tensorrt::Execution unit = opened.engine->create_execution();
    (void)opened.calls();
    unit.set_input_consumed_event(event);
    EXPECT_EQ(opened.calls(), std::vector<std::string>{"setInputConsumedEvent " + text(event)});
    Behaviour refusing;
    refusing.input_consumed_event_accepted = false;
    Opened other(testing::ranged_io(), refusing);
    tensorrt::Execution refused = other.engine->create_execution();
    EXPECT_THROW(refused.set_input_consumed_event(event), TensorRtError);
}

TEST(TensorRtExecution, TheContextItselfIsReachableUntilTheUnitIsClosed) {
    Opened opened;
    tensorrt::Execution unit = opened.engine->create_execution();
    (void)opened.calls();
    nvinfer1::ICudaEngine const& engine = unit.context().getEngine();
    EXPECT_EQ(&engine, &opened.engine->get());
    EXPECT_EQ(opened.calls(), std::vector<std::string>{"getEngine"});
    unit.close();
    EXPECT_THROW((void)unit.context(), Error);
    EXPECT_THROW((void)unit.device_memory_bytes(), Error);
    EXPECT_THROW(unit.set_aux_streams({}), Error);
    EXPECT_TRUE(opened.calls().empty());
}

// An engine of two profiles: x from [1, 1] to [1, 8] in profile 0, from [1, 16] to [1, 64] in 1.
std::vector<Tensor> two_profiles() {
    std::vector<Tensor> tensors = testing::ranged_io();
    tensors.front().more_profiles = {{{{1, 16}, {1, 32}, {1, 64}}}};
    return tensors;
}

TEST(TensorRtExecution, AnotherProfileIsSelectedOnTheGivenStreamAndItsRangesAreChecked) {
    Behaviour behaviour;
    behaviour.profiles = 2;
    Opened opened(two_profiles(), behaviour);
    (void)opened.calls();
    tensorrt::ExecutionOptions options;
    options.profile = 1;
    options.profile_stream = stream(0x5a5c00);
    tensorrt::Execution unit = opened.engine->create_execution(options);
    std::vector<std::string> calls = opened.calls();
    for (char const* query :
         {"getProfileShape x 0 0", "getProfileShape x 1 0", "getProfileShape x 1 2"}) {
        EXPECT_NE(std::find(calls.begin(), calls.end(), query), calls.end()) << query;
    }
    auto const created = std::find(calls.begin(), calls.end(), "createExecutionContext 0");
    ASSERT_NE(created, calls.end());
    EXPECT_EQ(std::vector<std::string>(created + 1, calls.end()),
              (std::vector<std::string>{"setOptimizationProfileAsync 1 " + text(stream(0x5a5c00)),
                                        "setInputShape x [1, 32]", "getTensorShape y"}));
    EXPECT_EQ(unit.contract().profile(), 1);
    try {
        unit.set_input_shapes({{"x", {1, 8}}}); // profile 0's, not 1's
        FAIL() << "a shape outside profile 1 was accepted";
    } catch (InvalidArgument const& error) {
        EXPECT_NE(std::string(error.what())
                      .find("outside profile 1, which allows [1, 16] to "
                            "[1, 64]"),
                  std::string::npos)
            << error.what();
    }
    EXPECT_TRUE(opened.calls().empty());
    unit.set_input_shapes({{"x", {1, 40}}});
    EXPECT_EQ(opened.calls(),
              (std::vector<std::string>{"setInputShape x [1, 40]", "getTensorShape y"}));
    EXPECT_EQ(unit.device_memory_bytes(), behaviour.device_memory);
    EXPECT_EQ(opened.calls(), std::vector<std::string>{"getDeviceMemorySizeForProfileV2 1"});
}

TEST(TensorRtExecution, AProfileTheEngineLacksIsRefusedBeforeAContextExists) {
    Behaviour behaviour;
    behaviour.profiles = 2;
    Opened opened(two_profiles(), behaviour);
    for (std::int32_t const profile : {2, -1}) {
        (void)opened.calls();
        tensorrt::ExecutionOptions options;
        options.profile = profile;
        try {
            (void)opened.engine->create_execution(options);
            FAIL() << "profile " << profile << " was accepted";
        } catch (InvalidArgument const& error) {
            EXPECT_EQ(std::string(error.what()),
                      "ExecutionOptions::profile is " + std::to_string(profile) +
                          ", but the engine '" + opened.deployment.path.string() +
                          "' has 2 optimization profiles (0 to 1)");
        }
        std::vector<std::string> const calls = opened.calls();
        EXPECT_TRUE(std::all_of(calls.begin(), calls.end(), is_query));
    }
}

TEST(TensorRtExecution, AProfileTensorRtRefusesIsATensorRtError) {
    Behaviour behaviour;
    behaviour.profiles = 2;
    behaviour.profile_accepted = false;
    Opened opened(two_profiles(), behaviour);
    tensorrt::ExecutionOptions options;
    options.profile = 1;
    EXPECT_THROW((void)opened.engine->create_execution(options), TensorRtError);
    EXPECT_FALSE(opened.events->context_alive);
}

TEST(TensorRtExecution, AUnitIsCreatedOnlyOnTheDeviceItsEngineWasDeserializedOn) {
    std::filesystem::path const path = "/cache/encoder.engine";
    EXPECT_NO_THROW(tensorrt::Engine::check_device(1, 1, path));
    EXPECT_NO_THROW(tensorrt::Engine::check_device(1, std::nullopt, path)); // no driver to ask
    try {
        tensorrt::Engine::check_device(0, 1, path);
        FAIL() << "another device was accepted";
    } catch (EngineTargetError const& error) {
        EXPECT_EQ(std::string(error.what()),
                  "the engine '/cache/encoder.engine' was selected for and deserialized on CUDA "
                  "device 0, but device 1 is current in this thread: TensorRT runs an engine only "
                  "on the device it was deserialized on; make device 0 current (cudaSetDevice) "
                  "before creating an execution unit");
    }
}

} // namespace
} // namespace tensoracle::deploy
