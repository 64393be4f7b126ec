// Queries GPU properties from the CUDA driver, loaded with dlopen and declared without headers.
#include "tensoracle/gpu_properties.hpp"

#include <array>
#include <dlfcn.h>
#include <string_view>

namespace tensoracle {
namespace {

// The driver API uses int for CUresult and CUdevice; these are the few entry points we need.
using CuResult = int;
using CuDevice = int;
using CuInit = CuResult (*)(unsigned int);
using CuCtxGetDevice = CuResult (*)(CuDevice*);
using CuDeviceGetCount = CuResult (*)(int*);
using CuDeviceGet = CuResult (*)(CuDevice*, int);
using CuDeviceGetName = CuResult (*)(char*, int, CuDevice);
using CuDeviceGetAttribute = CuResult (*)(int*, int, CuDevice);
using CuDeviceTotalMem = CuResult (*)(std::size_t*, CuDevice);
using CuGetErrorName = CuResult (*)(CuResult, char const**);

constexpr CuResult kSuccess = 0;

// CUdevice_attribute values from the driver API.
enum Attribute : int {
    kSharedMemoryPerBlock = 8,
    kTextureAlignment = 14,
    kMultiprocessorCount = 16,
    kIntegrated = 18,
    kEccEnabled = 32,
    kMemoryBusWidth = 37,
    kL2CacheSize = 38,
    kComputeCapabilityMajor = 75,
    kComputeCapabilityMinor = 76,
    kSharedMemoryPerMultiprocessor = 81,
    kSharedMemoryPerBlockOptin = 97,
};

struct Driver {
    void* library = nullptr;
    std::string load_error;
    CuInit init = nullptr;
    CuCtxGetDevice ctx_get_device = nullptr;
    CuDeviceGetCount device_get_count = nullptr;
    CuDeviceGet device_get = nullptr;
    CuDeviceGetName device_get_name = nullptr;
    CuDeviceGetAttribute device_get_attribute = nullptr;
    CuDeviceTotalMem device_total_mem = nullptr;
    CuGetErrorName get_error_name = nullptr;
};

template <typename Function>
Function symbol(void* library, char const* name) {
    return reinterpret_cast<Function>(dlsym(library, name));
}

// Loaded once per process and kept loaded: the driver library is never unloaded safely.
Driver const& driver() {
    static Driver const loaded = [] {
        Driver d;
        d.library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (d.library == nullptr) {
            char const* reason = dlerror();
            d.load_error = std::string("cannot load the CUDA driver library libcuda.so.1: ") +
                           (reason != nullptr ? reason : "unknown reason");
            return d;
        }
        d.init = symbol<CuInit>(d.library, "cuInit");
        d.ctx_get_device = symbol<CuCtxGetDevice>(d.library, "cuCtxGetDevice");
        d.device_get_count = symbol<CuDeviceGetCount>(d.library, "cuDeviceGetCount");
        d.device_get = symbol<CuDeviceGet>(d.library, "cuDeviceGet");
        d.device_get_name = symbol<CuDeviceGetName>(d.library, "cuDeviceGetName");
        d.device_get_attribute = symbol<CuDeviceGetAttribute>(d.library, "cuDeviceGetAttribute");
        d.device_total_mem = symbol<CuDeviceTotalMem>(d.library, "cuDeviceTotalMem_v2");
        d.get_error_name = symbol<CuGetErrorName>(d.library, "cuGetErrorName");
        if (d.init == nullptr || d.ctx_get_device == nullptr || d.device_get_count == nullptr ||
            d.device_get == nullptr || d.device_get_name == nullptr ||
            d.device_get_attribute == nullptr || d.device_total_mem == nullptr) {
            d.load_error = "libcuda.so.1 lacks a driver entry point tensoracle needs";
            d.library = nullptr;
        }
        return d;
    }();
    return loaded;
}

std::string describe(Driver const& d, std::string_view call, CuResult result) {
    std::string text = std::string(call) + " returned CUDA error " + std::to_string(result);
    char const* name = nullptr;
    if (d.get_error_name != nullptr && d.get_error_name(result, &name) == kSuccess &&
        name != nullptr) {
        text += std::string(" (") + name + ")";
    }
    return text;
}

GpuQuery absent(std::string reason) {
    GpuQuery query;
    query.absent_reason = std::move(reason);
    return query;
}

} // namespace

GpuQuery query_gpu_properties() {
    Driver const& d = driver();
    if (d.library == nullptr) {
        return absent(d.load_error);
    }
    if (CuResult const result = d.init(0); result != kSuccess) {
        return absent(describe(d, "cuInit", result));
    }
    int count = 0;
    if (CuResult const result = d.device_get_count(&count); result != kSuccess) {
        return absent(describe(d, "cuDeviceGetCount", result));
    }
    if (count == 0) {
        return absent("the CUDA driver reports no device");
    }
    // The device of the current context; without a current context, device 0.
    CuDevice device = 0;
    if (d.ctx_get_device(&device) != kSuccess) {
        if (CuResult const result = d.device_get(&device, 0); result != kSuccess) {
            return absent(describe(d, "cuDeviceGet", result));
        }
    }

    GpuProperties properties;
    std::array<char, 256> name{};
    if (CuResult const result =
            d.device_get_name(name.data(), static_cast<int>(name.size()), device);
        result != kSuccess) {
        return absent(describe(d, "cuDeviceGetName", result));
    }
    properties.name = std::string(name.data());

    struct Field {
        Attribute attribute;
        int* target;
    };
    int integrated = 0;
    int ecc = 0;
    std::array const fields = {
        Field{kComputeCapabilityMajor, &properties.compute_capability_major},
        Field{kComputeCapabilityMinor, &properties.compute_capability_minor},
        Field{kMemoryBusWidth, &properties.memory_bus_width_bits},
        Field{kL2CacheSize, &properties.l2_cache_bytes},
        Field{kSharedMemoryPerBlock, &properties.shared_memory_per_block_bytes},
        Field{kSharedMemoryPerBlockOptin, &properties.shared_memory_per_block_optin_bytes},
        Field{kSharedMemoryPerMultiprocessor, &properties.shared_memory_per_multiprocessor_bytes},
        Field{kTextureAlignment, &properties.texture_alignment_bytes},
        Field{kMultiprocessorCount, &properties.multiprocessor_count},
        Field{kIntegrated, &integrated},
        Field{kEccEnabled, &ecc},
    };
    for (Field const& field : fields) {
        if (CuResult const result = d.device_get_attribute(field.target, field.attribute, device);
            result != kSuccess) {
            return absent(describe(d,
                                   "cuDeviceGetAttribute(" +
                                       std::to_string(static_cast<int>(field.attribute)) + ")",
                                   result));
        }
    }
    properties.integrated = integrated != 0;
    properties.ecc_enabled = ecc != 0;
    std::size_t total = 0;
    if (CuResult const result = d.device_total_mem(&total, device); result != kSuccess) {
        return absent(describe(d, "cuDeviceTotalMem_v2", result));
    }
    properties.total_memory_bytes = total;

    GpuQuery query;
    query.properties = std::move(properties);
    return query;
}

nlohmann::json to_json(GpuProperties const& properties) {
    return {
        {"name", properties.name},
        {"compute_capability", std::to_string(properties.compute_capability_major) + "." +
                                   std::to_string(properties.compute_capability_minor)},
        {"memory_bus_width_bits", properties.memory_bus_width_bits},
        {"l2_cache_bytes", properties.l2_cache_bytes},
        {"shared_memory_per_block_bytes", properties.shared_memory_per_block_bytes},
        {"shared_memory_per_block_optin_bytes", properties.shared_memory_per_block_optin_bytes},
        {"shared_memory_per_multiprocessor_bytes",
         properties.shared_memory_per_multiprocessor_bytes},
        {"texture_alignment_bytes", properties.texture_alignment_bytes},
        {"multiprocessor_count", properties.multiprocessor_count},
        {"integrated", properties.integrated},
        {"ecc_enabled", properties.ecc_enabled},
        {"total_memory_bytes", properties.total_memory_bytes},
    };
}

} // namespace tensoracle
