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
#include "encryption/plan_sealing.hpp"
#include "support/encryption_keys.hpp"
#include "support/error_message.hpp"
#include "tensoracle/deploy/tensorrt.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <gtest/gtest.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tensoracle::deploy {
namespace {

using testing::message_of;
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
        EXPECT_EQ(events->calls.front(), "deserializeCudaEngineV2 4096");
        EXPECT_EQ(engine.path(), deployment.path);
        EXPECT_EQ(engine.plan_size(), deployment.plan.size());
        EXPECT_EQ(engine.device(), 0);
        EXPECT_FALSE(engine.why().empty());
    }
    // One byte of the plan changed in the file: the header is the verified one, so the short
    // path (which streams the plan) reaches deserializeCudaEngineV2, but the read of the chunk
    // holding that byte fails and hands over none of it: the reader's memory is left zeroed, and
    // no engine comes back.
    events->calls.clear();
    auto bytes = testing::read_all(deployment.path);
    bytes[bytes.size() - 10] ^= std::byte{1};
    testing::write_all(deployment.path, bytes);
    std::string const message = message_of<CorruptEngineError>([&] {
        (void)tensorrt::open_engine_for(deployment.manifest, "encoder", deployment.gpu, options);
    });
    EXPECT_NE(message.find("chunk 0 (bytes 0 to 4095 of the plan) has the XXH3-128 "),
              std::string::npos)
        << message;
    EXPECT_EQ(events->calls,
              std::vector<std::string>{"deserializeCudaEngineV2 0 then a failed read"});
    EXPECT_TRUE(stand_in->impl().received.empty());
    EXPECT_EQ(stand_in->impl().reads, std::vector<std::int64_t>{-1});
    ASSERT_EQ(stand_in->impl().handed.size(), 0U);
}

// An encrypted entry opened with its recipient's key: TensorRT (a stand-in recording what it is
// offered) is offered the plan decrypted, streamed chunk by chunk, and a sealed chunk changed
// after the open hands over none of its bytes; without the key, or with another recipient's,
// TensorRT is not called at all. What TensorRT then does with the plan is not proven here.
TEST(TensorRtLifetime, AnEncryptedPlanIsOfferedDecryptedAndOnlyWithItsRecipientsKey) {
    TensorRtDeployment deployment(testing::ranged_io(), {}, (std::size_t{5} << 20U) + 3);
    testing::KeyPair const alice(deployment.folder.path(), "alice");
    testing::KeyPair const bob(deployment.folder.path(), "bob");
    deployment.encrypt_for(alice.key.recipient());
    auto events = std::make_shared<Events>();
    StandInRuntime* stand_in = nullptr;
    auto options = deployment.options(std::make_shared<RecordingLogger>(events), events, &stand_in);
    for (auto const* key : {static_cast<testing::KeyPair const*>(nullptr), &bob}) {
        options.open->decrypt_key = key == nullptr ? std::filesystem::path() : key->private_file;
        EXPECT_THROW((void)tensorrt::open_engine_for(deployment.manifest, "encoder", deployment.gpu,
                                                     options),
                     EngineKeyError);
        EXPECT_TRUE(events->calls.empty()) << "TensorRT was called without the recipient's key";
    }
    options.open->decrypt_key = alice.private_file;
    {
        tensorrt::Engine const engine =
            tensorrt::open_engine_for(deployment.manifest, "encoder", deployment.gpu, options);
        EXPECT_EQ(stand_in->impl().received, deployment.plan);
        EXPECT_EQ(engine.plan_size(), deployment.plan.size());
    }
    // The last sealed chunk changed in the file: its read fails, none of it is handed over.
    events->calls.clear();
    auto bytes = testing::read_all(deployment.path);
    bytes[bytes.size() - 10] ^= std::byte{1};
    testing::write_all(deployment.path, bytes);
    EXPECT_THROW(
        (void)tensorrt::open_engine_for(deployment.manifest, "encoder", deployment.gpu, options),
        CorruptEngineError);
    // What was offered before the refused read is the plan's start, none of the changed chunk.
    EXPECT_LE(stand_in->impl().received.size(), encryption::kSealedPieceBytes);
    EXPECT_TRUE(std::equal(stand_in->impl().received.begin(), stand_in->impl().received.end(),
                           deployment.plan.begin()));
}

// What a streamed open hands TensorRT, read by read: each read gets the plan's next bytes, a
// read that ends inside a chunk is served from the reader's checked copy of that chunk, and a
// chunk that changed in the file after the open is refused at the read that reaches it, with
// none of its bytes in the destination; the chunks before it were handed over unchanged.
TEST(TensorRtLifetime, AStreamedPlanIsHandedOverChunkByChunkEachCheckedFirst) {
    TensorRtDeployment const deployment(testing::ranged_io(), {}, (std::size_t{9} << 20U) + 77);
    OpenOptions options = deployment.open_options();
    options.stream_plan = true;
    DeployedEngine const deployed = DeployedEngine::open(deployment.entry(), options);
    ASSERT_TRUE(deployed.streamed());
    EXPECT_EQ(deployed.plan_data(), nullptr);
    EXPECT_EQ(deployed.plan_size(), deployment.plan.size());

    // Whole, in reads of 3 MiB + 1 (straddling every chunk boundary).
    {
        tensorrt::VerifiedPlanStream stream(deployed);
        std::vector<std::byte> read_back;
        std::vector<std::byte> piece((std::size_t{3} << 20U) + 1);
        for (;;) {
            std::int64_t const got =
                stream.read(piece.data(), static_cast<std::int64_t>(piece.size()), nullptr);
            ASSERT_GE(got, 0);
            if (got == 0) {
                break;
            }
            read_back.insert(read_back.end(), piece.begin(), piece.begin() + got);
        }
        EXPECT_EQ(read_back, deployment.plan);
        EXPECT_EQ(stream.failure(), nullptr);
        EXPECT_LE(stream.reader().buffer_bytes(), std::size_t{4} << 20U);
        // Seeking back and reading again gives the same bytes; beyond the end is refused.
        EXPECT_TRUE(stream.seek(-100, nvinfer1::SeekPosition::kEND));
        std::vector<std::byte> tail(200);
        EXPECT_EQ(stream.read(tail.data(), 200, nullptr), 100);
        EXPECT_TRUE(std::equal(tail.begin(), tail.begin() + 100, deployment.plan.end() - 100));
        EXPECT_FALSE(stream.seek(1, nvinfer1::SeekPosition::kEND));
        EXPECT_FALSE(stream.seek(-1, nvinfer1::SeekPosition::kSET));
        EXPECT_EQ(stream.position(), deployment.plan.size());
    }

    // Chunk 1 (bytes kPlanChunkBytes to 2 * kPlanChunkBytes - 1) changed in the file after the
    // open.
    {
        auto bytes = testing::read_all(deployment.path);
        std::size_t const plan_offset = bytes.size() - deployment.plan.size();
        bytes[plan_offset + (std::size_t{5} << 20U)] ^= std::byte{1};
        testing::write_all(deployment.path, bytes);
        tensorrt::VerifiedPlanStream stream(deployed);
        std::vector<std::byte> first(std::size_t{4} << 20U);
        EXPECT_EQ(stream.read(first.data(), static_cast<std::int64_t>(first.size()), nullptr),
                  static_cast<std::int64_t>(first.size()));
        EXPECT_TRUE(std::equal(first.begin(), first.end(), deployment.plan.begin()));
        std::vector<std::byte> second(std::size_t{4} << 20U, std::byte{0xEE});
        EXPECT_EQ(stream.read(second.data(), static_cast<std::int64_t>(second.size()), nullptr),
                  -1);
        EXPECT_TRUE(std::all_of(second.begin(), second.end(),
                                [](std::byte value) { return value == std::byte{0}; }));
        ASSERT_NE(stream.failure(), nullptr);
        std::string const message =
            message_of<CorruptEngineError>([&] { std::rethrow_exception(stream.failure()); });
        EXPECT_NE(message.find("chunk 1 (bytes 4194304 to 8388607 of the plan) has the XXH3-128 "),
                  std::string::npos)
            << message;
        // Refused from then on, even where the bytes are unchanged.
        EXPECT_TRUE(stream.seek(0, nvinfer1::SeekPosition::kSET));
        EXPECT_EQ(stream.read(first.data(), 16, nullptr), -1);

        // Cut short after the open: refused at the read that reaches the cut, nothing crashes.
        bytes.resize(plan_offset + (std::size_t{6} << 20U));
        testing::write_all(deployment.path, bytes);
        tensorrt::VerifiedPlanStream cut(deployed);
        EXPECT_EQ(cut.read(first.data(), static_cast<std::int64_t>(first.size()), nullptr),
                  static_cast<std::int64_t>(first.size()));
        EXPECT_EQ(cut.read(second.data(), static_cast<std::int64_t>(second.size()), nullptr), -1);
        std::string const cut_message =
            message_of<CorruptEngineError>([&] { std::rethrow_exception(cut.failure()); });
        EXPECT_NE(cut_message.find("ends 2097152 bytes early: the file was cut"), std::string::npos)
            << cut_message;
    }
}

// A file replaced by another (renamed over it) after a streamed open changes nothing handed on:
// the reader reads the file it opened.
TEST(TensorRtLifetime, AStreamedPlanIsReadFromTheFileOpenedNotWhatLaterHasItsName) {
    TensorRtDeployment const deployment;
    OpenOptions options = deployment.open_options();
    options.stream_plan = true;
    DeployedEngine const deployed = DeployedEngine::open(deployment.entry(), options);
    auto bytes = testing::read_all(deployment.path);
    bytes.back() ^= std::byte{1};
    std::filesystem::path const other = deployment.path.string() + ".other";
    testing::write_all(other, bytes);
    std::filesystem::rename(other, deployment.path);
    tensorrt::VerifiedPlanStream stream(deployed);
    std::vector<std::byte> read_back(deployment.plan.size() + 10);
    EXPECT_EQ(stream.read(read_back.data(), static_cast<std::int64_t>(read_back.size()), nullptr),
              static_cast<std::int64_t>(deployment.plan.size()));
    read_back.resize(deployment.plan.size());
    EXPECT_EQ(read_back, deployment.plan);
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
