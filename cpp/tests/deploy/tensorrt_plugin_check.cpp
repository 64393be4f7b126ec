// The plugin libraries an entry was built with reach TensorRT only as the bytes verified: each is
// hashed and compared with the digests the entry's conditions record before TensorRT is called,
// loaded into the runtime's registry from a sealed in-memory copy (which no later change to the
// file reaches), and deregistered only after the engine is gone. Part of tensorrt_lifetime_test
// (AddressSanitizer, UndefinedBehaviorSanitizer); TensorRT's runtime and registry are the
// recording stand-ins of tensorrt_stand_ins.hpp, which prove our calls, not TensorRT's loading.
#include "deploy/tensorrt_deployment.hpp"
#include "deploy/tensorrt_stand_ins.hpp"
#include "io/hash.hpp"
#include "support/test_support.hpp"
#include "tensoracle/deploy/plugin_library.hpp"
#include "tensoracle/deploy/tensorrt.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace tensoracle::deploy {
namespace {

using testing::TensorRtDeployment;
using testing::stand_in::Events;
using testing::stand_in::RecordingLogger;
using testing::stand_in::StandInRuntime;

std::string text_of(std::vector<std::byte> const& bytes) {
    return {reinterpret_cast<char const*>(bytes.data()), bytes.size()};
}

struct Library {
    testing::TemporaryDirectory folder;
    std::filesystem::path path = folder.path() / "libplugin.so";
    std::vector<std::byte> bytes;
    std::string sha256;

    explicit Library(std::uint32_t seed) : bytes(testing::random_bytes(8192, seed)) {
        testing::write_all(path, bytes);
        sha256 = sha256_hex(std::span<std::byte const>(bytes));
    }
};

TEST(TensorRtPlugins, ALibraryIsLoadedFromItsVerifiedCopyAndDeregisteredAfterTheEngine) {
    Library const library(21);
    TensorRtDeployment const deployment(testing::ranged_io(), {library.sha256});
    auto events = std::make_shared<Events>();
    StandInRuntime* stand_in = nullptr;
    tensorrt::EngineOptions options =
        deployment.options(std::make_shared<RecordingLogger>(events), events, &stand_in);
    options.plugins = {library.path};
    std::optional<tensorrt::Engine> engine =
        tensorrt::open_engine_for(deployment.manifest, "encoder", deployment.gpu, options);
    std::vector<std::string> const& calls = events->calls;
    ASSERT_GE(calls.size(), 3U);
    EXPECT_EQ(calls[0], "getPluginRegistry");
    EXPECT_EQ(calls[1].rfind("loadLibrary /proc/self/fd/", 0), 0U) << calls[1];
    EXPECT_EQ(calls[2], "deserializeCudaEngineV2 4096");
    ASSERT_EQ(stand_in->impl().registry.loaded.size(), 1U);
    EXPECT_EQ(stand_in->impl().registry.loaded[0], text_of(library.bytes));

    events->calls.clear();
    options.runtime.reset();
    engine.reset(); // the engine, then its libraries, then the runtime (its last hold)
    EXPECT_EQ(events->destroyed, (std::vector<std::string>{"engine", "runtime", "logger"}));
    EXPECT_EQ(events->calls,
              (std::vector<std::string>{"getPluginRegistry", "deregisterLibrary 0"}));
}

TEST(TensorRtPlugins, AnotherOrAMissingLibraryIsRefusedBeforeTensorRtIsCalled) {
    Library const built_with(21);
    Library const other(22);
    TensorRtDeployment const deployment(testing::ranged_io(), {built_with.sha256});
    auto events = std::make_shared<Events>();
    tensorrt::EngineOptions options =
        deployment.options(std::make_shared<RecordingLogger>(events), events);
    options.plugins = {other.path};
    try {
        (void)tensorrt::open_engine_for(deployment.manifest, "encoder", deployment.gpu, options);
        FAIL() << "another library was accepted";
    } catch (EngineConditionError const& error) {
        EXPECT_EQ(error.path(), other.path);
        EXPECT_EQ(std::string(error.what()),
                  "plugin library '" + other.path.string() + "' has SHA-256 " + other.sha256 +
                      ", which the entry " + deployment.manifest.entries[0].file_name +
                      " was not built with (its plugins: " + built_with.sha256 +
                      "): pass the libraries it was built with");
    }
    options.plugins = {};
    try {
        (void)tensorrt::open_engine_for(deployment.manifest, "encoder", deployment.gpu, options);
        FAIL() << "a missing library was accepted";
    } catch (EngineConditionError const& error) {
        EXPECT_NE(std::string(error.what()).find(built_with.sha256 + ", which none of the 0"),
                  std::string::npos)
            << error.what();
    }
    EXPECT_TRUE(events->calls.empty());
}

TEST(TensorRtPlugins, TheVerifiedCopyIsTheBytesReadWhateverTheFileBecomes) {
    Library const library(23);
    TensorRtDeployment const deployment(testing::ranged_io(), {library.sha256});
    VerifiedPluginLibrary const verified =
        VerifiedPluginLibrary::open(library.path, deployment.manifest.entries[0]);
    EXPECT_EQ(verified.sha256(), library.sha256);
    testing::write_all(library.path, testing::random_bytes(100, 24)); // replaced and cut short
    EXPECT_EQ(testing::read_all(verified.loader_path()), library.bytes);
    // Sealed: not even this process can change the copy.
    int const writer = ::open(verified.loader_path().c_str(), O_WRONLY | O_CLOEXEC);
    if (writer >= 0) {
        char const byte = 'x';
        EXPECT_EQ(::write(writer, &byte, 1), -1);
        EXPECT_EQ(errno, EPERM);
        ::close(writer);
    }
    EXPECT_EQ(testing::read_all(verified.loader_path()), library.bytes);
}

TEST(TensorRtPlugins, ALibraryTensorRtRefusesIsATensorRtErrorAndNothingStaysLoaded) {
    Library const library(25);
    TensorRtDeployment const deployment(testing::ranged_io(), {library.sha256});
    auto events = std::make_shared<Events>();
    StandInRuntime* stand_in = nullptr;
    tensorrt::EngineOptions options =
        deployment.options(std::make_shared<RecordingLogger>(events), events, &stand_in);
    options.plugins = {library.path};
    stand_in->impl().registry.fail_loads = true;
    EXPECT_THROW(
        (void)tensorrt::open_engine_for(deployment.manifest, "encoder", deployment.gpu, options),
        TensorRtError);
    EXPECT_EQ(
        std::count(events->calls.begin(), events->calls.end(), "deserializeCudaEngineV2 4096"), 0);
}

} // namespace
} // namespace tensoracle::deploy
