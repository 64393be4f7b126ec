// The CUDA driver API, loaded at run time from libcuda.so.1: the few entry points the cubin
// runtime, the GPU property query (gpu_properties.hpp), the deploy library's memory kinds and the
// GPU tests call, declared here so that nothing links against libcuda and everything builds and
// runs its non-GPU tests on machines without a driver. The handle types are public
// (tensoracle/cuda/driver.hpp).
#pragma once

#include "tensoracle/cuda/driver.hpp"

#include <cstddef>
#include <memory>
#include <string>

namespace tensoracle::cuda {

// The device and function attribute numbers we query (values from cuda.h).
enum class DeviceAttribute : int {
    max_threads_per_block = 1,
    max_shared_per_block = 8,
    max_registers_per_block = 12,
    texture_alignment = 14,
    multiprocessor_count = 16,
    integrated = 18,
    ecc_enabled = 32,
    global_memory_bus_width = 37,
    l2_cache_size = 38,
    compute_capability_major = 75,
    compute_capability_minor = 76,
    max_shared_per_multiprocessor = 81,
    max_shared_per_block_optin = 97,
};
enum class FunctionAttribute : int {
    max_threads_per_block = 0,
    static_shared_bytes = 1,
    num_registers = 4,
    max_dynamic_shared_bytes = 8,
};

// Function pointers into libcuda, resolved once. Every call goes through check() so that a
// failure names the call and the driver's error name.
class Driver {
public:
    // The process-wide driver, loaded and initialised (cuInit) on first use. Throws
    // CubinRuntimeError when libcuda.so.1 cannot be loaded, a symbol is missing, or cuInit fails.
    static Driver const& get();
    // Why get() would fail, or an empty string when a driver and at least one device are present.
    static std::string unavailable_reason();

    // Throws CubinRuntimeError "<call> failed: <name> (<code>)" unless `result` is success.
    void check(Result result, char const* call) const;
    std::string error_name(Result result) const;

    Result (*init)(unsigned);
    Result (*get_error_name)(Result, char const**);
    Result (*device_get)(Device*, int);
    Result (*device_get_count)(int*);
    Result (*device_get_attribute)(int*, int, Device);
    Result (*device_get_name)(char*, int, Device);
    Result (*device_total_mem)(std::size_t*, Device);
    Result (*ctx_create)(Context*, unsigned, Device);
    Result (*ctx_destroy)(Context);
    Result (*ctx_get_current)(Context*);
    Result (*ctx_set_current)(Context);
    Result (*ctx_push_current)(Context);
    Result (*ctx_pop_current)(Context*);
    Result (*ctx_get_device)(Device*);
    Result (*ctx_synchronize)();
    Result (*module_load_data)(Module*, void const*);
    Result (*module_unload)(Module);
    Result (*module_get_function)(Function*, Module, char const*);
    Result (*func_get_attribute)(int*, int, Function);
    Result (*func_set_attribute)(Function, int, int);
    Result (*launch_kernel)(Function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, Stream, void**, void**);
    Result (*mem_alloc)(DevicePtr*, std::size_t);
    Result (*mem_free)(DevicePtr);
    Result (*memcpy_htod)(DevicePtr, void const*, std::size_t);
    Result (*pointer_get_attribute)(void*, int, DevicePtr); // cuPointerGetAttribute
    Result (*memcpy_dtoh)(void*, DevicePtr, std::size_t);

    int attribute(DeviceAttribute attribute, Device device) const;

private:
    Driver() = default;
    std::shared_ptr<void> library_;
};

} // namespace tensoracle::cuda
