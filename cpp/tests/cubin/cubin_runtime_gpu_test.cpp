// Runs the example cubin bundle on a GPU through the cubin runtime: every kernel against a CPU
// reference, both dot-product variants, the TF32 control, and two CUDA contexts at once.
//
// Needs TENSORACLE_CUBIN_BUNDLE (a schema-1 bundle directory built by examples/cubin_kernels/
// build.py, loaded with LoadedBundle) and a CUDA device. Without a usable GPU it exits 77 (skip);
// on a machine with one, a missing bundle is a failure (tools/gpu_check builds it). With
// TENSORACLE_GPU_DUMP set, inputs and outputs are also written there as raw float32 files for the
// NumPy check (check_gpu_dump.py).
#include "cuda/loaded_driver.hpp"
#include "support/skip_exit.hpp"
#include "tensoracle/cubin/bundle_manifest.hpp"
#include "tensoracle/cubin/runtime.hpp"
#include "tensoracle/errors.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <iostream>
#include <memory>
#include <random>
#include <thread>
#include <vector>

namespace {

using tensoracle::cubin::ArgValue;
using tensoracle::cubin::CubinRuntime;
using tensoracle::cubin::Grid;
using tensoracle::cubin::LoadedBundle;
namespace cuda = tensoracle::cuda;

tensoracle::cubin::BundleRecord const* bundle = nullptr;

std::vector<float> random_floats(std::size_t count, unsigned seed) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> distribution(-1.0F, 1.0F);
    std::vector<float> values(count);
    for (float& value : values) {
        value = distribution(generator);
    }
    return values;
}

void dump(std::string const& name, std::vector<float> const& values) {
    char const* directory = std::getenv("TENSORACLE_GPU_DUMP");
    if (directory == nullptr) {
        return;
    }
    std::ofstream out(std::string{directory} + "/" + name + ".f32", std::ios::binary);
    out.write(reinterpret_cast<char const*>(values.data()),
              static_cast<std::streamsize>(values.size() * sizeof(float)));
}

// Device memory freed by its destructor, in whichever context is current then.
class DeviceBuffer {
public:
    explicit DeviceBuffer(std::size_t floats) : bytes_(floats * sizeof(float)) {
        cuda::Driver const& driver = cuda::Driver::get();
        driver.check(driver.mem_alloc(&address_, bytes_), "cuMemAlloc");
    }
    explicit DeviceBuffer(std::vector<float> const& values) : DeviceBuffer(values.size()) {
        cuda::Driver const& driver = cuda::Driver::get();
        driver.check(driver.memcpy_htod(address_, values.data(), bytes_), "cuMemcpyHtoD");
    }
    ~DeviceBuffer() { cuda::Driver::get().mem_free(address_); }
    DeviceBuffer(DeviceBuffer const&) = delete;
    DeviceBuffer& operator=(DeviceBuffer const&) = delete;

    cuda::DevicePtr address() const { return address_; }
    std::vector<float> read() const {
        std::vector<float> values(bytes_ / sizeof(float));
        cuda::Driver const& driver = cuda::Driver::get();
        driver.check(driver.ctx_synchronize(), "cuCtxSynchronize");
        driver.check(driver.memcpy_dtoh(values.data(), address_, bytes_), "cuMemcpyDtoH");
        return values;
    }

private:
    std::size_t bytes_;
    cuda::DevicePtr address_ = 0;
};

// A fresh context of device 0, current on this thread while the object lives.
class ContextScope {
public:
    ContextScope() {
        cuda::Driver const& driver = cuda::Driver::get();
        cuda::Device device = 0;
        driver.check(driver.device_get(&device, 0), "cuDeviceGet");
        driver.check(driver.ctx_create(&context_, 0, device), "cuCtxCreate");
    }
    ~ContextScope() {
        cuda::Driver::get().ctx_set_current(nullptr);
        cuda::Driver::get().ctx_destroy(context_);
    }
    ContextScope(ContextScope const&) = delete;
    ContextScope& operator=(ContextScope const&) = delete;
    cuda::Context get() const { return context_; }

private:
    cuda::Context context_ = nullptr;
};

double max_abs_difference(std::vector<float> const& a, std::vector<double> const& b) {
    double worst = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
    }
    return worst;
}

unsigned blocks(std::size_t count, std::size_t block) {
    return static_cast<unsigned>((count + block - 1) / block);
}

class CubinRuntimeGpu : public ::testing::Test {
protected:
    ContextScope context;
    CubinRuntime runtime{*bundle};
    cuda::Stream stream = nullptr;
};

TEST_F(CubinRuntimeGpu, ScaleAndBiasAddMatchTheReference) {
    std::size_t const rows = 37;
    std::size_t const cols = 1000;
    auto const x = random_floats(rows * cols, 1);
    auto const bias = random_floats(cols, 2);
    DeviceBuffer x_device(x);
    DeviceBuffer bias_device(bias);
    DeviceBuffer out_device(rows * cols);
    std::vector<ArgValue> const bias_args = {ArgValue::pointer(x_device.address()),
                                             ArgValue::pointer(bias_device.address()),
                                             ArgValue::pointer(out_device.address()),
                                             ArgValue::i32(static_cast<std::int32_t>(rows * cols)),
                                             ArgValue::i32(static_cast<std::int32_t>(cols))};
    runtime.kernel("bias_add").launch(Grid{blocks(rows * cols, 256), 1, 1}, stream, bias_args);
    auto const biased = out_device.read();
    std::vector<double> expected(rows * cols);
    for (std::size_t i = 0; i < rows * cols; ++i) {
        expected[i] = static_cast<double>(x[i]) + static_cast<double>(bias[i % cols]);
    }
    EXPECT_LT(max_abs_difference(biased, expected), 1e-6);
    dump("bias_add_x", x);
    dump("bias_add_bias", bias);
    dump("bias_add_out", biased);

    float const alpha = -2.5F;
    std::vector<ArgValue> const scale_args = {
        ArgValue::pointer(x_device.address()), ArgValue::pointer(out_device.address()),
        ArgValue::i32(static_cast<std::int32_t>(rows * cols)), ArgValue::f32(alpha)};
    runtime.kernel("scale").launch(Grid{blocks(rows * cols, 256), 1, 1}, stream, scale_args);
    auto const scaled = out_device.read();
    for (std::size_t i = 0; i < rows * cols; ++i) {
        expected[i] = static_cast<double>(alpha) * static_cast<double>(x[i]);
    }
    EXPECT_LT(max_abs_difference(scaled, expected), 1e-6);
    dump("scale_out", scaled);
}

TEST_F(CubinRuntimeGpu, BothDotVariantsLaunchAndTheSpecialisedOneRefusesOddSizes) {
    for (std::size_t const k : {std::size_t{1024}, std::size_t{1000}}) {
        std::size_t const rows = 64;
        auto const a = random_floats(rows * k, 3);
        auto const b = random_floats(rows * k, 4);
        DeviceBuffer a_device(a);
        DeviceBuffer b_device(b);
        DeviceBuffer out_device(rows);
        std::vector<ArgValue> const args = {
            ArgValue::pointer(a_device.address()), ArgValue::pointer(b_device.address()),
            ArgValue::pointer(out_device.address()), ArgValue::i32(static_cast<std::int32_t>(k))};
        std::vector<double> expected(rows, 0.0);
        for (std::size_t r = 0; r < rows; ++r) {
            for (std::size_t j = 0; j < k; ++j) {
                expected[r] +=
                    static_cast<double>(a[r * k + j]) * static_cast<double>(b[r * k + j]);
            }
        }
        auto const& specialised = runtime.kernel("row_dot_div16");
        auto const& general = runtime.kernel("row_dot");
        EXPECT_TRUE(general.accepts(args));
        EXPECT_EQ(specialised.accepts(args), k % 16 == 0);
        for (auto const* kernel : {&specialised, &general}) {
            if (!kernel->accepts(args)) {
                EXPECT_THROW(kernel->launch(Grid{static_cast<unsigned>(rows), 1, 1}, stream, args),
                             tensoracle::InvalidArgument);
                continue;
            }
            kernel->launch(Grid{static_cast<unsigned>(rows), 1, 1}, stream, args);
            auto const out = out_device.read();
            EXPECT_LT(max_abs_difference(out, expected), 1e-3) << kernel->record().name;
            std::string const name = std::string{kernel->record().name} + "_k" + std::to_string(k);
            dump(name + "_a", a);
            dump(name + "_b", b);
            dump(name + "_out", out);
        }
    }
}

TEST_F(CubinRuntimeGpu, Tf32ControlIsDistinguishableFromIeee) {
    std::size_t const m = 96;
    std::size_t const n = 80;
    std::size_t const k = 200;
    auto const a = random_floats(m * k, 5);
    auto const b = random_floats(k * n, 6);
    DeviceBuffer a_device(a);
    DeviceBuffer b_device(b);
    DeviceBuffer c_device(m * n);
    std::vector<double> expected(m * n, 0.0);
    for (std::size_t i = 0; i < m; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
            for (std::size_t p = 0; p < k; ++p) {
                expected[i * n + j] +=
                    static_cast<double>(a[i * k + p]) * static_cast<double>(b[p * n + j]);
            }
        }
    }
    std::vector<ArgValue> const args = {
        ArgValue::pointer(a_device.address()),       ArgValue::pointer(b_device.address()),
        ArgValue::pointer(c_device.address()),       ArgValue::i32(static_cast<std::int32_t>(m)),
        ArgValue::i32(static_cast<std::int32_t>(n)), ArgValue::i32(static_cast<std::int32_t>(k))};
    Grid const grid{blocks(m, 32), blocks(n, 32), 1};
    runtime.kernel("matmul_ieee").launch(grid, stream, args);
    auto const ieee = c_device.read();
    runtime.kernel("matmul_tf32").launch(grid, stream, args);
    auto const tf32 = c_device.read();
    double const ieee_error = max_abs_difference(ieee, expected);
    double const tf32_error = max_abs_difference(tf32, expected);
    std::cout << "matmul max abs error vs fp64: ieee " << ieee_error << ", tf32 " << tf32_error
              << '\n';
    EXPECT_LT(ieee_error, 1e-4);
    EXPECT_LT(tf32_error, 5e-2);
    EXPECT_GT(tf32_error, 10 * ieee_error);
    dump("matmul_a", a);
    dump("matmul_b", b);
    dump("matmul_ieee_out", ieee);
    dump("matmul_tf32_out", tf32);
}

TEST(CubinRuntimeContexts, TwoThreadsWithOwnContextsLoadAndLaunchConcurrently) {
    CubinRuntime runtime{*bundle};
    std::size_t const count = 1 << 20;
    auto const x = random_floats(count, 7);
    std::vector<std::vector<float>> results(2);
    std::vector<std::string> errors(2);
    auto const work = [&](std::size_t index) {
        try {
            ContextScope context;
            DeviceBuffer x_device(x);
            DeviceBuffer out_device(count);
            float const alpha = static_cast<float>(index + 2);
            std::vector<ArgValue> const args = {
                ArgValue::pointer(x_device.address()), ArgValue::pointer(out_device.address()),
                ArgValue::i32(static_cast<std::int32_t>(count)), ArgValue::f32(alpha)};
            for (int repeat = 0; repeat < 50; ++repeat) {
                runtime.kernel("scale").launch(Grid{blocks(count, 256), 1, 1}, nullptr, args);
            }
            results[index] = out_device.read();
            runtime.release_context(context.get());
        } catch (std::exception const& error) {
            errors[index] = error.what();
        }
    };
    std::thread first(work, 0);
    std::thread second(work, 1);
    first.join();
    second.join();
    for (std::size_t index = 0; index < 2; ++index) {
        ASSERT_EQ(errors[index], "") << "thread " << index;
        float const alpha = static_cast<float>(index + 2);
        for (std::size_t i = 0; i < count; i += 4099) {
            ASSERT_EQ(results[index][i], alpha * x[i]) << "thread " << index << " element " << i;
        }
    }
    EXPECT_EQ(runtime.loaded_modules(), 0U);
}

TEST(CubinRuntimeContexts, OneModulePerContextIsReusedAndReleased) {
    ContextScope context;
    CubinRuntime runtime{*bundle};
    DeviceBuffer x_device(std::vector<float>(256, 1.0F));
    DeviceBuffer out_device(256);
    std::vector<ArgValue> const args = {ArgValue::pointer(x_device.address()),
                                        ArgValue::pointer(out_device.address()), ArgValue::i32(256),
                                        ArgValue::f32(3.0F)};
    auto const start = std::chrono::steady_clock::now();
    runtime.kernel("scale").launch(Grid{1, 1, 1}, nullptr, args);
    out_device.read();
    auto const loaded = std::chrono::steady_clock::now();
    runtime.kernel("scale").launch(Grid{1, 1, 1}, nullptr, args);
    EXPECT_EQ(out_device.read()[255], 3.0F);
    auto const again = std::chrono::steady_clock::now();
    EXPECT_EQ(runtime.loaded_modules(), 1U);
    std::cout << "first launch (module load + digest) "
              << std::chrono::duration<double, std::micro>(loaded - start).count()
              << " us, second launch "
              << std::chrono::duration<double, std::micro>(again - loaded).count() << " us\n";
    runtime.release_context(context.get());
    EXPECT_EQ(runtime.loaded_modules(), 0U);
}

TEST(CubinRuntimeRefusals, NoCubinForTheDeviceOrAWrongDigestIsAnError) {
    ContextScope context;
    cuda::Driver const& driver = cuda::Driver::get();
    cuda::Device device = 0;
    driver.check(driver.ctx_get_device(&device), "cuCtxGetDevice");
    auto const sm = static_cast<std::uint32_t>(
        driver.attribute(cuda::DeviceAttribute::compute_capability_major, device) * 10 +
        driver.attribute(cuda::DeviceAttribute::compute_capability_minor, device));
    tensoracle::cubin::KernelRecord const* scale = nullptr;
    for (auto const& record : bundle->kernels) {
        if (record.name == "scale") {
            scale = &record;
        }
    }
    ASSERT_NE(scale, nullptr);
    std::vector<tensoracle::cubin::CubinImage> others;
    std::vector<tensoracle::cubin::CubinImage> tampered;
    for (auto const& image : scale->images) {
        if (image.sm / 10 != sm / 10) {
            others.push_back(image);
        } else if (image.sm == sm) {
            tampered.push_back(image);
            tampered.back().sha256 =
                "0000000000000000000000000000000000000000000000000000000000000000";
        }
    }
    ASSERT_FALSE(tampered.empty()) << "the bundle has no cubin for sm" << sm;
    DeviceBuffer x_device(256);
    std::vector<ArgValue> const args = {ArgValue::pointer(x_device.address()),
                                        ArgValue::pointer(x_device.address()), ArgValue::i32(256),
                                        ArgValue::f32(1.0F)};
    for (auto const& [images, expected] :
         {std::pair{std::span<tensoracle::cubin::CubinImage const>{others},
                    "no cubin for this device (sm" + std::to_string(sm) + ")"},
          std::pair{std::span<tensoracle::cubin::CubinImage const>{tampered},
                    std::string{"has SHA-256"}}}) {
        tensoracle::cubin::KernelRecord record = *scale;
        record.images = images;
        tensoracle::cubin::BundleRecord const one{bundle->sha256, std::span{&record, 1}};
        CubinRuntime runtime{one};
        try {
            runtime.kernel("scale").launch(Grid{1, 1, 1}, nullptr, args);
            ADD_FAILURE() << "launch succeeded; expected: " << expected;
        } catch (tensoracle::CubinRuntimeError const& error) {
            std::cout << "refused as expected: " << error.what() << '\n';
            EXPECT_NE(std::string{error.what()}.find(expected), std::string::npos) << error.what();
        }
    }
}

} // namespace

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    char const* directory = std::getenv("TENSORACLE_CUBIN_BUNDLE");
    std::string const reason = cuda::Driver::unavailable_reason();
    if (directory == nullptr) {
        std::cout << (reason.empty() ? "FAILED: " : "skipped: ")
                  << "set TENSORACLE_CUBIN_BUNDLE to a bundle directory built by "
                     "examples/cubin_kernels/build.py";
        if (!reason.empty()) {
            std::cout << " (and no usable GPU: " << reason << ")\n";
            return 77;
        }
        std::cout << " (this machine has a GPU, so the test must run)\n";
        return EXIT_FAILURE;
    }
    if (!reason.empty()) {
        std::cout << "skipped: no usable GPU: " << reason << '\n';
        return 77;
    }
    auto const loaded = std::make_unique<LoadedBundle>(directory);
    bundle = &loaded->record();
    std::cout << "bundle directory " << directory << " (" << bundle->sha256 << ")\n";
    return tensoracle::testing::run_all_tests_for_ctest();
}
