// Nothing that is not exactly the manifest's entry reaches TensorRT: tensorrt::deserialize refuses
// an entry that another TensorRT built, and tensorrt::load (open, then deserialize) one that was
// tampered with, truncated, unsigned or signed by another key, before TensorRT sees a byte. Built
// as tensorrt_runtime_test against TensorRT's headers (tests/deploy/tensorrt_header.cmake); no
// TensorRT library is linked or run. The IRuntime handed over is a recording stand-in whose every
// method FAILS the test when called: TensorRT's IRuntime forwards each call to its implementation
// object (apiv::VRuntime, NvInferImpl.h) through the protected member mImpl, so a subclass of
// IRuntime that points mImpl at a VRuntime of ours sees every call the adapter would make.
// Nothing here stands in for what TensorRT does.
#include "cache/identity.hpp"
#include "cache/store.hpp"
#include "remote/object.hpp"
#include "remote/signature.hpp"
#include "support/deploy_fixture.hpp"
#include "support/signing_keys.hpp"
#include "support/test_support.hpp"
#include "tensoracle/deploy/tensorrt.hpp"
#include "tensoracle/errors.hpp"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace tensoracle::deploy {
namespace {

using Json = nlohmann::json;

// Every call is recorded and fails the test; none returns anything TensorRT would.
class FailingRuntimeImpl final : public nvinfer1::apiv::VRuntime {
public:
    mutable std::vector<std::string> calls; // recorded by const methods too

    nvinfer1::IRuntime* getPImpl() noexcept override { return called("getPImpl", nullptr); }
    nvinfer1::ICudaEngine* deserializeCudaEngine(void const* /*blob*/,
                                                 std::size_t /*size*/) noexcept override {
        return called("deserializeCudaEngine", nullptr);
    }
    void setDLACore(std::int32_t /*core*/) noexcept override { called("setDLACore"); }
    std::int32_t getDLACore() const noexcept override { return called("getDLACore", 0); }
    std::int32_t getNbDLACores() const noexcept override { return called("getNbDLACores", 0); }
    void setGpuAllocator(nvinfer1::IGpuAllocator* /*allocator*/) noexcept override {
        called("setGpuAllocator");
    }
    void setErrorRecorder(nvinfer1::IErrorRecorder* /*recorder*/) noexcept override {
        called("setErrorRecorder");
    }
    nvinfer1::IErrorRecorder* getErrorRecorder() const noexcept override {
        return called("getErrorRecorder", nullptr);
    }
    nvinfer1::ILogger* getLogger() const noexcept override { return called("getLogger", nullptr); }
    bool setMaxThreads(std::int32_t /*threads*/) noexcept override {
        return called("setMaxThreads", false);
    }
    std::int32_t getMaxThreads() const noexcept override { return called("getMaxThreads", 0); }
    void setTemporaryDirectory(char const* /*path*/) noexcept override {
        called("setTemporaryDirectory");
    }
    char const* getTemporaryDirectory() const noexcept override {
        return called("getTemporaryDirectory", nullptr);
    }
    void setTempfileControlFlags(nvinfer1::TempfileControlFlags /*flags*/) noexcept override {
        called("setTempfileControlFlags");
    }
    nvinfer1::TempfileControlFlags getTempfileControlFlags() const noexcept override {
        return called("getTempfileControlFlags", nvinfer1::TempfileControlFlags{});
    }
    nvinfer1::IPluginRegistry& getPluginRegistry() noexcept override {
        called("getPluginRegistry");
        std::abort(); // no registry to return: the test has failed already
    }
    void setPluginRegistryParent(nvinfer1::IPluginRegistry* /*parent*/) noexcept override {
        called("setPluginRegistryParent");
    }
    nvinfer1::IRuntime* loadRuntime(char const* /*path*/) noexcept override {
        return called("loadRuntime", nullptr);
    }
    void setEngineHostCodeAllowed(bool /*allowed*/) noexcept override {
        called("setEngineHostCodeAllowed");
    }
    bool getEngineHostCodeAllowed() const noexcept override {
        return called("getEngineHostCodeAllowed", false);
    }
    nvinfer1::ICudaEngine*
    deserializeCudaEngineV2(nvinfer1::IStreamReaderV2& /*reader*/) noexcept override {
        return called("deserializeCudaEngineV2", nullptr);
    }

private:
    void called(char const* name) const noexcept {
        ADD_FAILURE() << "TensorRT was called: IRuntime::" << name;
        calls.emplace_back(name);
    }
    template <typename Result>
    Result called(char const* name, Result result) const noexcept {
        called(name);
        return result;
    }
};

// An IRuntime whose calls all reach FailingRuntimeImpl.
class RecordingRuntime final : public nvinfer1::IRuntime {
public:
    explicit RecordingRuntime(FailingRuntimeImpl& impl) { mImpl = &impl; }
};

// A cache folder holding one saved entry built with `conditions`, and its manifest entry.
struct Deployment {
    testing::TemporaryDirectory folder;
    std::vector<std::byte> plan = testing::random_bytes(4096, 11);
    ManifestEntry entry;
    std::filesystem::path path;

    explicit Deployment(Json const& conditions) {
        EngineIdentity const identity = recorded_identity(conditions);
        Json const io = {{"tensors", Json::array()}};
        path = Store(folder.path()).save(identity, {{"io", io}}, plan);
        entry = testing::manifest_entry_of(path, identity, io);
    }

    DeployedEngine open() const { return DeployedEngine::open(entry, {folder.path(), {}}); }
};

Json conditions(std::string const& backend, std::string const& version) {
    return {{"name", "encoder"},       {"graph_version", "3"},
            {"backend", backend},      {"backend_version", version},
            {"gpu", nullptr},          {"hardware_compatibility", "ampere_plus"},
            {"targets", Json::array()}};
}

std::string refusal(Deployment const& deployment, RuntimeBackend const& backend,
                    FailingRuntimeImpl& impl) {
    DeployedEngine const deployed = deployment.open(); // verified: the bytes are the entry's
    RecordingRuntime runtime(impl);
    try {
        (void)tensorrt::deserialize(runtime, deployed, backend);
    } catch (EngineConditionError const& error) {
        EXPECT_EQ(error.path(), deployed.path());
        return error.what();
    }
    ADD_FAILURE() << "deserialize accepted the entry";
    return {};
}

TEST(TensorRtRuntime, AnEntryOfAnotherBackendNeverReachesDeserializeCudaEngine) {
    Deployment const deployment(conditions("tensorrt_rtx", "1.7.1.116"));
    FailingRuntimeImpl impl;
    EXPECT_EQ(refusal(deployment, {"tensorrt", "11.1.0.106"}, impl),
              "the engine '" + deployment.path.string() +
                  "' was built by tensorrt_rtx 1.7.1.116, but this application runs tensorrt "
                  "11.1.0.106: it cannot deserialize it");
    EXPECT_TRUE(impl.calls.empty());
}

TEST(TensorRtRuntime, AnEntryOfAnotherTensorRtVersionNeverReachesDeserializeCudaEngine) {
    Deployment const deployment(conditions("tensorrt", "11.0.0.114"));
    FailingRuntimeImpl impl;
    EXPECT_EQ(refusal(deployment, {"tensorrt", "11.1.0.106"}, impl),
              "the engine '" + deployment.path.string() +
                  "' was built by tensorrt 11.0.0.114, but this application runs tensorrt "
                  "11.1.0.106: it cannot deserialize it");
    EXPECT_TRUE(impl.calls.empty());
}

TEST(TensorRtRuntime, TheBackendVersionIsTheLibrarysWithinTheHeadersMajorVersion) {
    // Another minor version than the headers: the library's version is what engines match.
    RuntimeBackend const backend = tensorrt::backend_for_library(NV_TENSORRT_MAJOR, 4, 0, 106);
    EXPECT_EQ(backend.name, "tensorrt");
    EXPECT_EQ(backend.version, std::to_string(NV_TENSORRT_MAJOR) + ".4.0.106");
    try {
        (void)tensorrt::backend_for_library(10, 14, 1, 48);
        FAIL() << "a library of another major version was accepted";
    } catch (Error const& error) {
        EXPECT_EQ(std::string(error.what()),
                  "the TensorRT library loaded is version 10.14.1.48, but the application was "
                  "compiled with the headers of TensorRT " +
                      tensorrt::header_version_text() + ": run it with a TensorRT " +
                      std::to_string(NV_TENSORRT_MAJOR) + " library");
    }
}

// The application's path, tensorrt::load: an entry that is not exactly the manifest's is refused
// while it is opened, and TensorRT's IRuntime is never called.
std::string hex_of(Signature const& signature) {
    return testing::hex_digits(signature);
}

void sign(Deployment& deployment, SigningKey const& key) {
    auto const trailer =
        signature_trailer(key, deployment.entry.file_name, testing::read_all(deployment.path));
    Signature signature{};
    std::memcpy(signature.data(), trailer.data(), signature.size());
    deployment.entry.fleet =
        FleetObject{"engines/" + deployment.entry.file_name,
                    "s3://b/engines/" + deployment.entry.file_name, true, hex_of(signature)};
}

template <typename Refusal>
std::string load_refusal(Deployment const& deployment, OpenOptions const& options) {
    FailingRuntimeImpl impl;
    RecordingRuntime runtime(impl);
    std::string message;
    try {
        (void)tensorrt::load(runtime, deployment.entry, options, {"tensorrt", "11.1.0.106"});
        ADD_FAILURE() << "load accepted the entry";
    } catch (Refusal const& error) {
        message = error.what();
    }
    EXPECT_TRUE(impl.calls.empty());
    return message;
}

TEST(TensorRtRuntime, ATamperedOrTruncatedEntryNeverReachesTensorRt) {
    Deployment const deployment(conditions("tensorrt", "11.1.0.106"));
    OpenOptions const options{deployment.folder.path(), {}};
    auto bytes = testing::read_all(deployment.path);
    bytes[bytes.size() / 2] ^= std::byte{0x40};
    testing::write_all(deployment.path, bytes);
    EXPECT_NE(load_refusal<CorruptEngineError>(deployment, options).find("XXH3-128"),
              std::string::npos);
    bytes.resize(bytes.size() - 1);
    testing::write_all(deployment.path, bytes);
    EXPECT_NE(load_refusal<CorruptEngineError>(deployment, options).find("engine_bytes"),
              std::string::npos);
}

TEST(TensorRtRuntime, AnUnsignedOrForeignSignedEntryNeverReachesTensorRt) {
    testing::TemporaryDirectory keys;
    SigningKey const trusted = SigningKey::from_pem(testing::new_private_key_pem(), "trusted");
    SigningKey const stranger = SigningKey::from_pem(testing::new_private_key_pem(), "stranger");
    auto const verify_key = keys.path() / "verify-key.pem";
    std::ofstream(verify_key) << trusted.public_key_pem();
    Deployment deployment(conditions("tensorrt", "11.1.0.106"));
    OpenOptions const options{deployment.folder.path(), verify_key};
    EXPECT_NE(load_refusal<UntrustedEngineError>(deployment, options).find("no signature"),
              std::string::npos);
    sign(deployment, stranger);
    EXPECT_NE(load_refusal<UntrustedEngineError>(deployment, options).find("does not accept"),
              std::string::npos);
    // Signed by the trusted key, then one plan byte changed: refused by the chunk digest the
    // signed header records; one header byte changed: refused by the signature.
    sign(deployment, trusted);
    auto const signed_bytes = testing::read_all(deployment.path);
    auto bytes = signed_bytes;
    bytes.back() ^= std::byte{1};
    testing::write_all(deployment.path, bytes);
    EXPECT_NE(load_refusal<UntrustedEngineError>(deployment, options)
                  .find("does not hold what its signature vouches for: chunk 0"),
              std::string::npos);
    bytes = signed_bytes;
    bytes[40] ^= std::byte{1};
    testing::write_all(deployment.path, bytes);
    EXPECT_NE(load_refusal<UntrustedEngineError>(deployment, options).find("does not accept"),
              std::string::npos);
}

TEST(TensorRtRuntime, ShapesConvertToDimsAndBack) {
    nvinfer1::Dims const dims = tensorrt::dims_of({2, 3, 224});
    EXPECT_EQ(dims.nbDims, 3);
    EXPECT_EQ(tensorrt::shape_of(dims), (Shape{2, 3, 224}));
    nvinfer1::Dims invalid{};
    invalid.nbDims = -1;
    EXPECT_FALSE(tensorrt::shape_of(invalid).has_value());
    EXPECT_THROW((void)tensorrt::dims_of(Shape(9, 1)), InvalidArgument);
}

} // namespace
} // namespace tensoracle::deploy
