// What the TensorRT adapter returns keeps alive what it depends on: the logger outlives the
// runtime, the runtime every engine, an engine every execution unit, whatever order the
// application lets go of them in; a failed runtime creation leaves nothing dangling; the errors a
// runtime remembers are bounded. Built as tensorrt_lifetime_test with AddressSanitizer and
// UndefinedBehaviorSanitizer (tests/deploy/tensorrt_header.cmake), so that a use after free is a
// failure even where no check below sees it. TensorRT is stood in for by the recording stand-ins
// of tensorrt_stand_ins.hpp, which check at each destruction that what it depends on is alive and
// log through the runtime's logger as they go; they prove our ownership, not TensorRT's.
#include "deploy/tensorrt_deployment.hpp"
#include "deploy/tensorrt_stand_ins.hpp"
#include "tensoracle/deploy/tensorrt.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <array>
#include <gtest/gtest.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tensoracle::deploy {
namespace {

using testing::TensorRtDeployment;
using testing::stand_in::Events;
using testing::stand_in::RecordingLogger;
using testing::stand_in::StandInRuntime;

enum class Handle { logger, runtime, engine, execution };

std::string names(std::array<Handle, 4> const& order) {
    static constexpr std::array<char const*, 4> kNames{"logger", "runtime", "engine", "execution"};
    std::string text;
    for (Handle const handle : order) {
        text +=
            (text.empty() ? "" : ", ") + std::string(kNames.at(static_cast<std::size_t>(handle)));
    }
    return text;
}

TEST(TensorRtLifetime, EveryOrderOfLettingGoDestroysContextEngineRuntimeLoggerInTurn) {
    TensorRtDeployment const deployment;
    std::array<Handle, 4> order{Handle::logger, Handle::runtime, Handle::engine, Handle::execution};
    int orders = 0;
    do {
        SCOPED_TRACE("let go of: " + names(order));
        auto events = std::make_shared<Events>();
        auto logger = std::make_shared<RecordingLogger>(events);
        tensorrt::EngineOptions options = deployment.options(logger, events);
        std::shared_ptr<tensorrt::Runtime> runtime = options.runtime;
        std::optional<tensorrt::Engine> engine =
            tensorrt::open_engine_for(deployment.manifest, "encoder", deployment.gpu, options);
        options.runtime.reset(); // the application's handles only, from here
        std::optional<tensorrt::Execution> execution = engine->create_execution();
        ASSERT_TRUE(events->context_alive);
        for (Handle const handle : order) {
            switch (handle) {
            case Handle::logger:
                logger.reset();
                break;
            case Handle::runtime:
                runtime.reset();
                break;
            case Handle::engine:
                engine.reset();
                break;
            case Handle::execution:
                execution.reset();
                break;
            }
        }
        EXPECT_EQ(events->destroyed,
                  (std::vector<std::string>{"context", "engine", "runtime", "logger"}));
        EXPECT_TRUE(events->unexpected.empty());
        ++orders;
    } while (std::next_permutation(order.begin(), order.end()));
    EXPECT_EQ(orders, 24);
}

TEST(TensorRtLifetime, AnEngineFromDeserializeHoldsItsRuntimeAndLogger) {
    TensorRtDeployment const deployment;
    auto events = std::make_shared<Events>();
    StandInRuntime* stand_in = nullptr;
    std::shared_ptr<tensorrt::Runtime> runtime =
        deployment.options(std::make_shared<RecordingLogger>(events), events, &stand_in).runtime;
    DeployedEngine const deployed =
        DeployedEngine::open(deployment.manifest.entries.at(0), deployment.open_options());
    std::shared_ptr<nvinfer1::ICudaEngine> engine =
        tensorrt::deserialize(runtime, deployed, testing::kBackend);
    runtime.reset();
    EXPECT_TRUE(events->runtime_alive);
    EXPECT_TRUE(events->logger_alive);
    engine.reset();
    EXPECT_EQ(events->destroyed, (std::vector<std::string>{"engine", "runtime", "logger"}));
}

TEST(TensorRtLifetime, TensorRtIsOfferedTheVerifiedPlanAfterItWasVerifiedAndNothingBefore) {
    TensorRtDeployment const deployment;
    auto events = std::make_shared<Events>();
    StandInRuntime* stand_in = nullptr;
    auto const options =
        deployment.options(std::make_shared<RecordingLogger>(events), events, &stand_in);
    {
        tensorrt::Engine const engine =
            tensorrt::open_engine_for(deployment.manifest, "encoder", deployment.gpu, options);
        EXPECT_EQ(stand_in->impl().received, deployment.plan);
        EXPECT_EQ(events->calls.front(), "deserializeCudaEngine 4096");
        EXPECT_EQ(engine.path(), deployment.path);
        EXPECT_EQ(engine.plan_size(), deployment.plan.size());
        EXPECT_EQ(engine.device(), 0);
        EXPECT_FALSE(engine.why().empty());
    }
    // One byte of the plan changed in the file: refused while opening, TensorRT never called.
    events->calls.clear();
    auto bytes = testing::read_all(deployment.path);
    bytes[bytes.size() - 10] ^= std::byte{1};
    testing::write_all(deployment.path, bytes);
    EXPECT_THROW(
        (void)tensorrt::open_engine_for(deployment.manifest, "encoder", deployment.gpu, options),
        CorruptEngineError);
    EXPECT_TRUE(events->calls.empty());
}

TEST(TensorRtLifetime, ARefusedSelectionNeitherOpensTheEntryNorCallsTensorRt) {
    TensorRtDeployment const deployment;
    auto events = std::make_shared<Events>();
    auto const options = deployment.options(std::make_shared<RecordingLogger>(events), events);
    CurrentGpu const turing{
        0, device_from_json({{"name", "NVIDIA T4"}, {"compute_capability", "7.5"}}, "gpu")};
    std::filesystem::remove(deployment.path); // opening it would fail otherwise
    EXPECT_THROW((void)tensorrt::open_engine_for(deployment.manifest, "encoder", turing, options),
                 EngineTargetError);
    EXPECT_THROW(
        (void)tensorrt::open_engine_for(deployment.manifest, "decoder", deployment.gpu, options),
        InvalidArgument);
    EXPECT_TRUE(events->calls.empty());
}

TEST(TensorRtLifetime, ANullEngineIsACorruptEngineErrorQuotingTensorRt) {
    TensorRtDeployment const deployment;
    auto events = std::make_shared<Events>();
    auto const options =
        deployment.options(std::make_shared<RecordingLogger>(events), events, nullptr, {},
                           "IRuntime::deserializeCudaEngine: "
                           "Error Code 1: Serialization (magic)");
    try {
        (void)tensorrt::open_engine_for(deployment.manifest, "encoder", deployment.gpu, options);
        FAIL() << "a null engine was accepted";
    } catch (CorruptEngineError const& error) {
        EXPECT_EQ(error.path(), deployment.path);
        EXPECT_EQ(std::string(error.what()),
                  "TensorRT refused to deserialize the plan of '" + deployment.path.string() +
                      "' (4096 bytes, verified against its manifest entry): "
                      "IRuntime::deserializeCudaEngine: Error Code 1: Serialization (magic)");
    }
}

TEST(TensorRtLifetime, AFailedRuntimeCreationLeavesNothingDangling) {
    auto events = std::make_shared<Events>();
    auto logger = std::make_shared<RecordingLogger>(events);
    nvinfer1::ILogger* handed = nullptr;
    try {
        (void)tensorrt::Runtime::create(logger, [&](nvinfer1::ILogger& forwarded) {
            handed = &forwarded;
            forwarded.log(nvinfer1::ILogger::Severity::kERROR, "CUDA initialization failure "
                                                               "with error: 35");
            return new StandInRuntime(events, {}, forwarded);
        });
        FAIL() << "a runtime that logged an error was handed out";
    } catch (TensorRtError const& error) {
        EXPECT_EQ(std::string(error.what()), "TensorRT could not create a usable runtime: CUDA "
                                             "initialization failure with error: 35");
    }
    // The runtime is left to the process (TensorRT's crashes when deleted), and so is the logger
    // it may still call, though the application let go of its handle.
    std::weak_ptr<RecordingLogger> const watched = logger;
    logger.reset();
    ASSERT_NE(handed, nullptr);
    handed->log(nvinfer1::ILogger::Severity::kERROR, "a message after the refusal");
    ASSERT_FALSE(watched.expired());
    EXPECT_EQ(watched.lock()->messages.back(), "a message after the refusal");
    EXPECT_TRUE(events->runtime_alive);
    // None returned: nothing to leave, and the logger is let go.
    auto other = std::make_shared<RecordingLogger>(std::make_shared<Events>());
    std::weak_ptr<RecordingLogger> const released = other;
    EXPECT_THROW(
        (void)tensorrt::Runtime::create(
            std::move(other), [](nvinfer1::ILogger&) -> nvinfer1::IRuntime* { return nullptr; }),
        TensorRtError);
    EXPECT_TRUE(released.expired());
}

TEST(TensorRtLifetime, TheErrorsARuntimeRemembersAreBounded) {
    TensorRtDeployment const deployment;
    auto events = std::make_shared<Events>();
    auto logger = std::make_shared<RecordingLogger>(events);
    StandInRuntime* stand_in = nullptr;
    auto const runtime = deployment.options(logger, events, &stand_in).runtime;
    std::string const long_error(10000, 'e');
    for (int index = 0; index < 100000; ++index) {
        stand_in->logger().log(nvinfer1::ILogger::Severity::kERROR, long_error.c_str());
        stand_in->logger().log(nvinfer1::ILogger::Severity::kWARNING, "not an error");
    }
    EXPECT_EQ(logger->messages.size(), 200000U); // the application's logger gets every message
    std::string const kept(tensorrt::kRememberedErrorBytes, 'e');
    std::string expected;
    for (std::size_t index = 0; index < tensorrt::kRememberedErrors; ++index) {
        expected += (index == 0 ? "" : "; ") + kept + "...";
    }
    expected += "; and " + std::to_string(100000 - tensorrt::kRememberedErrors) + " more";
    EXPECT_EQ(runtime->take_errors(), expected);
    EXPECT_EQ(runtime->take_errors(), "");
}

} // namespace
} // namespace tensoracle::deploy
