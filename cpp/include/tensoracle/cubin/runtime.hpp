// Runs the kernels of a cubin bundle through the CUDA driver API, without TensorRT.
//
// A CubinRuntime owns, for every kernel of one bundle, at most one loaded module per CUDA
// context. Kernel::launch runs in the caller's current context: on first use there it picks the
// cubin for the context's device (rule below), checks its SHA-256 and the kernel's resource needs
// against the device's limits, loads it, and caches the module. Each launch first checks the
// argument count, types and divisibility rules recorded by the producer, then appends the two
// null scratch pointers Triton 3.x kernels take, and calls cuLaunchKernel.
//
// Cubin choice: the cubin built for exactly the device's SM; otherwise the newest cubin of the
// same major version that is not newer than the device (sm86 runs on an sm89 device), because
// the driver runs such cubins unchanged. Anything else is an error naming the device's SM and the
// bundle's. Arch-specific cubins (sm90a, sm100a, sm120a, what Triton emits from sm90 on) only run
// on their own SM; for them only an exact match is accepted.
//
// The records come from a bundle directory loaded by LoadedBundle (bundle_manifest.hpp). Nothing
// in this header depends on TensorRT.
#pragma once

#include "tensoracle/cubin/bundle.hpp"
#include "tensoracle/cuda/driver.hpp"

#include <array>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tensoracle::cuda {
class Driver; // the core's loaded libcuda
} // namespace tensoracle::cuda

namespace tensoracle::cubin {

// One argument value for a launch, with its kind, stored the way the parameter buffer wants it.
class ArgValue {
public:
    static ArgValue pointer(cuda::DevicePtr address) { return {ArgType::pointer, address}; }
    static ArgValue i32(std::int32_t value) { return {ArgType::i32, value}; }
    static ArgValue i64(std::int64_t value) { return {ArgType::i64, value}; }
    static ArgValue f32(float value) { return {ArgType::f32, value}; }
    static ArgValue f64(double value) { return {ArgType::f64, value}; }

    ArgType type() const noexcept { return type_; }
    // The address of the value for cuLaunchKernel's parameter array.
    void* storage() noexcept { return storage_.data(); }
    // The value read as an unsigned integer (pointers and integers), for divisibility checks.
    std::uint64_t integer_bits() const noexcept;

private:
    template <typename T>
    ArgValue(ArgType type, T value) : type_(type) {
        std::memcpy(storage_.data(), &value, sizeof(T));
    }
    ArgType type_;
    alignas(8) std::array<unsigned char, 8> storage_{};
};

// Grid dimensions in blocks. The block is the chosen image's block_threads.
struct Grid {
    unsigned x = 1;
    unsigned y = 1;
    unsigned z = 1;
};

class CubinRuntime;

// One kernel variant of a bundle, bound to its runtime.
class Kernel {
public:
    KernelRecord const& record() const noexcept { return *record_; }

    // Why `args` cannot be passed to this variant (count, type or divisibility), or nothing.
    std::optional<std::string> reject_reason(std::span<ArgValue const> args) const;
    bool accepts(std::span<ArgValue const> args) const { return !reject_reason(args); }

    // Launches on `stream` in the current context. `args` holds the public arguments only.
    // Throws InvalidArgument naming the argument when reject_reason() has one, and
    // CubinRuntimeError for a missing context, no suitable cubin, resources beyond the device's
    // limits, a digest mismatch, or a failed driver call.
    void launch(Grid grid, cuda::Stream stream, std::span<ArgValue const> args) const;

private:
    friend class CubinRuntime;
    Kernel(CubinRuntime& runtime, KernelRecord const& record)
        : runtime_(&runtime), record_(&record) {}
    CubinRuntime* runtime_;
    KernelRecord const* record_;
};

class CubinRuntime {
public:
    // Keeps references into `bundle` (a LoadedBundle's record), which must outlive the runtime. The
    // CUDA driver is loaded on the first launch, so argument checks work on machines without one.
    explicit CubinRuntime(BundleRecord const& bundle);
    // Unloads every module in the context that loaded it.
    ~CubinRuntime();
    CubinRuntime(CubinRuntime const&) = delete;
    CubinRuntime& operator=(CubinRuntime const&) = delete;

    // The variant named `name`; throws InvalidArgument listing the bundle's variants otherwise.
    Kernel const& kernel(std::string_view name) const;
    std::span<Kernel const> kernels() const noexcept { return kernels_; }

    // The cubin of `record` this runtime would load on a device of SM `sm`, or nullptr.
    static CubinImage const* select_image(KernelRecord const& record, std::uint32_t sm) noexcept;

    // Unloads the modules loaded in `context` (call before destroying it).
    void release_context(cuda::Context context);
    // Modules currently loaded, over all contexts (for tests and diagnostics).
    std::size_t loaded_modules() const;

private:
    friend class Kernel;
    struct Loaded {
        cuda::Module module = nullptr;
        cuda::Function function = nullptr;
        std::uint32_t shared_bytes = 0;
        std::uint32_t block_threads = 0;
    };
    Loaded const& function_for(Kernel const& kernel, cuda::Context context);
    Loaded load(KernelRecord const& record, cuda::Context context);

    cuda::Driver const* driver_ = nullptr; // set by the first launch, under mutex_
    BundleRecord const& bundle_;
    std::vector<Kernel> kernels_;
    mutable std::mutex mutex_;
    std::map<std::pair<KernelRecord const*, cuda::Context>, Loaded> modules_;
};

} // namespace tensoracle::cubin
