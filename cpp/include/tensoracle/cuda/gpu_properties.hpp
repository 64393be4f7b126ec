// Compatibility properties of the GPU engines are built for, read from the CUDA driver. This header
// includes no third-party header (cuda/gpu_properties_json.hpp gives them as JSON).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tensoracle {

// The properties the engine identity records: two devices with equal properties share engines.
struct GpuProperties {
    std::string name;
    int compute_capability_major = 0;
    int compute_capability_minor = 0;
    int memory_bus_width_bits = 0;
    int l2_cache_bytes = 0;
    int shared_memory_per_block_bytes = 0;
    int shared_memory_per_block_optin_bytes = 0;
    int shared_memory_per_multiprocessor_bytes = 0;
    int texture_alignment_bytes = 0;
    int multiprocessor_count = 0;
    bool integrated = false;
    bool ecc_enabled = false;
    std::uint64_t total_memory_bytes = 0;
};

// Either the properties of the device of the current CUDA context (device 0 when no context is
// current), or the reason no GPU can be described (no driver library, no device, a driver error).
struct GpuQuery {
    std::optional<GpuProperties> properties;
    std::string absent_reason; // empty when properties holds a value
    // The CUDA ordinal of the device described (the device cudaGetDevice reports in the calling
    // thread), when properties holds a value.
    int device = 0;
};

// Loads libcuda.so.1 with dlopen on first use, so programs linking the core run without a driver.
// Never throws for a missing driver or device; those are reported in absent_reason.
GpuQuery query_gpu_properties();

// Every GPU of this machine, in the CUDA driver's order (ordinal 0 first, as CUDA_VISIBLE_DEVICES
// leaves them), or the reason none can be described. A host with two different GPUs gets two
// different descriptions: each selects its own engine.
struct GpuList {
    std::vector<GpuProperties> devices;
    std::string absent_reason; // empty when devices holds at least one
};
GpuList query_all_gpu_properties();

} // namespace tensoracle
