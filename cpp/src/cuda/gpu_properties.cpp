// Queries GPU compatibility properties through the run-time loaded CUDA driver
// (cuda/loaded_driver.hpp).
#include "cuda/gpu_properties_json.hpp"
#include "cuda/loaded_driver.hpp"
#include "tensoracle/errors.hpp"

#include <array>

namespace tensoracle {
namespace {

GpuQuery absent(std::string reason) {
    GpuQuery query;
    query.absent_reason = std::move(reason);
    return query;
}

GpuProperties describe(cuda::Driver const& driver, cuda::Device device) {
    using Attribute = cuda::DeviceAttribute;
    auto const attribute = [&](Attribute which) { return driver.attribute(which, device); };
    GpuProperties properties;
    std::array<char, 256> name{};
    driver.check(driver.device_get_name(name.data(), static_cast<int>(name.size()), device),
                 "cuDeviceGetName");
    properties.name = std::string(name.data());
    properties.compute_capability_major = attribute(Attribute::compute_capability_major);
    properties.compute_capability_minor = attribute(Attribute::compute_capability_minor);
    properties.memory_bus_width_bits = attribute(Attribute::global_memory_bus_width);
    properties.l2_cache_bytes = attribute(Attribute::l2_cache_size);
    properties.shared_memory_per_block_bytes = attribute(Attribute::max_shared_per_block);
    properties.shared_memory_per_block_optin_bytes =
        attribute(Attribute::max_shared_per_block_optin);
    properties.shared_memory_per_multiprocessor_bytes =
        attribute(Attribute::max_shared_per_multiprocessor);
    properties.texture_alignment_bytes = attribute(Attribute::texture_alignment);
    properties.multiprocessor_count = attribute(Attribute::multiprocessor_count);
    properties.integrated = attribute(Attribute::integrated) != 0;
    properties.ecc_enabled = attribute(Attribute::ecc_enabled) != 0;
    std::size_t total = 0;
    driver.check(driver.device_total_mem(&total, device), "cuDeviceTotalMem_v2");
    properties.total_memory_bytes = total;
    return properties;
}

} // namespace

GpuQuery query_gpu_properties() {
    if (std::string reason = cuda::Driver::unavailable_reason(); !reason.empty()) {
        return absent(std::move(reason));
    }
    try {
        cuda::Driver const& driver = cuda::Driver::get();
        // The device of the current context; without a current context, device 0.
        cuda::Device device = 0;
        if (driver.ctx_get_device(&device) != 0) {
            driver.check(driver.device_get(&device, 0), "cuDeviceGet");
        }
        GpuQuery query;
        query.properties = describe(driver, device);
        query.device = device;
        return query;
    } catch (CubinRuntimeError const& error) {
        return absent(error.what());
    }
}

GpuList query_all_gpu_properties() {
    GpuList list;
    if (std::string reason = cuda::Driver::unavailable_reason(); !reason.empty()) {
        list.absent_reason = std::move(reason);
        return list;
    }
    try {
        cuda::Driver const& driver = cuda::Driver::get();
        int count = 0;
        driver.check(driver.device_get_count(&count), "cuDeviceGetCount");
        for (int ordinal = 0; ordinal < count; ++ordinal) {
            cuda::Device device = 0;
            driver.check(driver.device_get(&device, ordinal), "cuDeviceGet");
            list.devices.push_back(describe(driver, device));
        }
        if (list.devices.empty()) {
            list.absent_reason = "the CUDA driver reports no device";
        }
    } catch (CubinRuntimeError const& error) {
        list.devices.clear();
        list.absent_reason = error.what();
    }
    return list;
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
