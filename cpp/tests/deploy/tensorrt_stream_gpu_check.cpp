// On a machine with a GPU: what tensorrt::VerifiedPlanStream hands over into device memory, as
// TensorRT's deserializeCudaEngine(IStreamReaderV2&) may ask for it (cudaPointerGetAttributes
// says device, and the checked chunk is copied with cudaMemcpyAsync on the caller's stream), is
// the verified plan, read by read; a chunk changed in the file after the open is refused with
// nothing of it copied. No TensorRT runs here: the reads are made the way TensorRT's interface
// makes them, and what arrives in device memory is copied back and compared.
#include "deploy/tensorrt_deployment.hpp"
#include "support/error_message.hpp"
#include "tensoracle/deploy/memory_kind.hpp"
#include "tensoracle/deploy/tensorrt.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace tensoracle::deploy {
namespace {

using testing::message_of;
using testing::TensorRtDeployment;

// Device memory of `bytes` bytes, freed at the end of the scope.
class DeviceBuffer {
public:
    explicit DeviceBuffer(std::size_t bytes) {
        if (cudaMalloc(&address_, bytes) != cudaSuccess) {
            address_ = nullptr;
        }
    }
    DeviceBuffer(DeviceBuffer const&) = delete;
    DeviceBuffer& operator=(DeviceBuffer const&) = delete;
    ~DeviceBuffer() { (void)cudaFree(address_); }
    std::byte* get() const noexcept { return static_cast<std::byte*>(address_); }

private:
    void* address_ = nullptr;
};

bool has_gpu() {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

TEST(TensorRtStreamGpu, TheDriverTellsDeviceFromHostMemory) {
    if (!has_gpu()) {
        GTEST_SKIP() << "needs a CUDA device";
    }
    DeviceBuffer const device(4096);
    ASSERT_NE(device.get(), nullptr);
    EXPECT_EQ(memory_kind(device.get()), MemoryKind::device);
    EXPECT_EQ(memory_kind(device.get() + 100), MemoryKind::device);
    std::vector<std::byte> pageable(4096);
    EXPECT_EQ(memory_kind(pageable.data()), MemoryKind::host);
    void* pinned = nullptr;
    ASSERT_EQ(cudaMallocHost(&pinned, 4096), cudaSuccess);
    EXPECT_EQ(memory_kind(pinned), MemoryKind::host);
    (void)cudaFreeHost(pinned);
}

TEST(TensorRtStreamGpu, DeviceMemoryReceivesTheVerifiedPlanReadByRead) {
    if (!has_gpu()) {
        GTEST_SKIP() << "needs a CUDA device";
    }
    std::size_t const plan_size = (std::size_t{9} << 20U) + 77;
    TensorRtDeployment const deployment(testing::ranged_io(), {}, plan_size);
    OpenOptions options = deployment.open_options();
    options.stream_plan = true;
    DeployedEngine const deployed = DeployedEngine::open(deployment.entry(), options);
    ASSERT_TRUE(deployed.streamed());

    DeviceBuffer const device(plan_size);
    ASSERT_NE(device.get(), nullptr);
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    tensorrt::VerifiedPlanStream reader(deployed);
    // Reads of 3 MiB + 1 straddle every chunk boundary; each lands at its place in the buffer.
    std::size_t const piece = (std::size_t{3} << 20U) + 1;
    std::size_t at = 0;
    for (;;) {
        std::int64_t const got =
            reader.read(device.get() + at, static_cast<std::int64_t>(piece), stream);
        ASSERT_GE(got, 0) << "read at " << at;
        if (got == 0) {
            break;
        }
        at += static_cast<std::size_t>(got);
    }
    EXPECT_EQ(at, plan_size);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    std::vector<std::byte> back(plan_size);
    ASSERT_EQ(cudaMemcpy(back.data(), device.get(), plan_size, cudaMemcpyDeviceToHost),
              cudaSuccess);
    EXPECT_EQ(back, deployment.plan);

    // Chunk 2 changed in the file after the open: the read that reaches it copies nothing.
    auto bytes = testing::read_all(deployment.path);
    std::size_t const plan_offset = bytes.size() - plan_size;
    bytes[plan_offset + (std::size_t{8} << 20U) + 5] ^= std::byte{1};
    testing::write_all(deployment.path, bytes);
    ASSERT_EQ(cudaMemset(device.get(), 0, plan_size), cudaSuccess);
    tensorrt::VerifiedPlanStream changed(deployed);
    std::int64_t const first =
        changed.read(device.get(), static_cast<std::int64_t>(std::size_t{8} << 20U), stream);
    EXPECT_EQ(first, static_cast<std::int64_t>(std::size_t{8} << 20U));
    EXPECT_EQ(changed.read(device.get() + first, static_cast<std::int64_t>(plan_size), stream), -1);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(back.data(), device.get(), plan_size, cudaMemcpyDeviceToHost),
              cudaSuccess);
    auto const split = back.begin() + static_cast<std::ptrdiff_t>(first);
    EXPECT_TRUE(std::equal(back.begin(), split, deployment.plan.begin()));
    EXPECT_TRUE(
        std::all_of(split, back.end(), [](std::byte value) { return value == std::byte{0}; }));
    std::string const message =
        message_of<CorruptEngineError>([&] { std::rethrow_exception(changed.failure()); });
    EXPECT_NE(message.find("chunk 2 (bytes 8388608 to 9437260 of the plan)"), std::string::npos)
        << message;
    (void)cudaStreamDestroy(stream);
}

} // namespace
} // namespace tensoracle::deploy
