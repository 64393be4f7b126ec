// Loads the CUDA driver (libcuda.so.1 with dlopen; nvcuda.dll with LoadLibrary on Windows) and
// resolves the driver entry points the cubin runtime uses.
#include "cuda/loaded_driver.hpp"
#include "io/platform.hpp"
#include "tensoracle/errors.hpp"

#include <mutex>

namespace tensoracle::cuda {
namespace {

struct Loaded {
    Driver const* driver = nullptr;
    std::string error;
};

template <typename Pointer>
void resolve(platform::DynamicLibrary const& library, Pointer& target, char const* symbol) {
    void* address = library.symbol(symbol);
    if (address == nullptr) {
        throw CubinRuntimeError(std::string{"the CUDA driver lacks "} + symbol);
    }
    // POSIX guarantees that object and function pointers convert; C++ says so conditionally.
    target = reinterpret_cast<Pointer>(address);
}

} // namespace

Driver const& Driver::get() {
    static Loaded const loaded = [] {
        Loaded result;
        try {
            std::string why;
            auto library = platform::DynamicLibrary::load(platform::cuda_driver_library(), why);
            if (!library) {
                throw CubinRuntimeError(std::string{"cannot load the CUDA driver "} +
                                        platform::cuda_driver_library() + ": " + why);
            }
            static Driver driver;
            auto const shared = std::make_shared<platform::DynamicLibrary>(std::move(*library));
            driver.library_ = shared;
            platform::DynamicLibrary const& handle = *shared;
            resolve(handle, driver.init, "cuInit");
            resolve(handle, driver.get_error_name, "cuGetErrorName");
            resolve(handle, driver.device_get, "cuDeviceGet");
            resolve(handle, driver.device_get_count, "cuDeviceGetCount");
            resolve(handle, driver.device_get_attribute, "cuDeviceGetAttribute");
            resolve(handle, driver.device_get_name, "cuDeviceGetName");
            resolve(handle, driver.device_total_mem, "cuDeviceTotalMem_v2");
            resolve(handle, driver.ctx_create, "cuCtxCreate_v2");
            resolve(handle, driver.ctx_destroy, "cuCtxDestroy_v2");
            resolve(handle, driver.ctx_get_current, "cuCtxGetCurrent");
            resolve(handle, driver.ctx_set_current, "cuCtxSetCurrent");
            resolve(handle, driver.ctx_push_current, "cuCtxPushCurrent_v2");
            resolve(handle, driver.ctx_pop_current, "cuCtxPopCurrent_v2");
            resolve(handle, driver.ctx_get_device, "cuCtxGetDevice");
            resolve(handle, driver.ctx_synchronize, "cuCtxSynchronize");
            resolve(handle, driver.module_load_data, "cuModuleLoadData");
            resolve(handle, driver.module_unload, "cuModuleUnload");
            resolve(handle, driver.module_get_function, "cuModuleGetFunction");
            resolve(handle, driver.func_get_attribute, "cuFuncGetAttribute");
            resolve(handle, driver.func_set_attribute, "cuFuncSetAttribute");
            resolve(handle, driver.launch_kernel, "cuLaunchKernel");
            resolve(handle, driver.mem_alloc, "cuMemAlloc_v2");
            resolve(handle, driver.mem_free, "cuMemFree_v2");
            resolve(handle, driver.memcpy_htod, "cuMemcpyHtoD_v2");
            resolve(handle, driver.memcpy_dtoh, "cuMemcpyDtoH_v2");
            resolve(handle, driver.pointer_get_attribute, "cuPointerGetAttribute");
            driver.check(driver.init(0), "cuInit");
            result.driver = &driver;
        } catch (CubinRuntimeError const& error) {
            result.error = error.what();
        }
        return result;
    }();
    if (loaded.driver == nullptr) {
        throw CubinRuntimeError(loaded.error);
    }
    return *loaded.driver;
}

std::string Driver::unavailable_reason() {
    try {
        Driver const& driver = get();
        int count = 0;
        if (driver.device_get_count(&count) != 0 || count == 0) {
            return "the CUDA driver reports no device";
        }
        return {};
    } catch (CubinRuntimeError const& error) {
        return error.what();
    }
}

std::string Driver::error_name(Result result) const {
    char const* name = nullptr;
    if (get_error_name(result, &name) != 0 || name == nullptr) {
        return "CUDA error " + std::to_string(result);
    }
    return name;
}

void Driver::check(Result result, char const* call) const {
    if (result != 0) {
        throw CubinRuntimeError(std::string{call} + " failed: " + error_name(result) + " (" +
                                std::to_string(result) + ")");
    }
}

int Driver::attribute(DeviceAttribute attribute, Device device) const {
    int value = 0;
    check(device_get_attribute(&value, static_cast<int>(attribute), device),
          "cuDeviceGetAttribute");
    return value;
}

} // namespace tensoracle::cuda
