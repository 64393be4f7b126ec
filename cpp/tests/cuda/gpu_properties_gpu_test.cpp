// On a machine with a GPU: the query describes a real device with plausible values.
#include "cuda/gpu_properties_json.hpp"

#include <cstdio>
#include <cstdlib>

int main() {
    tensoracle::GpuQuery const query = tensoracle::query_gpu_properties();
    if (!query.properties) {
        std::printf("skipped: %s\n", query.absent_reason.c_str());
        return 77;
    }
    tensoracle::GpuProperties const& p = *query.properties;
    std::printf("%s\n", tensoracle::to_json(p).dump(2).c_str());
    bool const plausible = !p.name.empty() && p.compute_capability_major >= 5 &&
                           p.multiprocessor_count > 0 && p.total_memory_bytes > 0 &&
                           p.l2_cache_bytes > 0 && p.memory_bus_width_bits > 0 &&
                           p.shared_memory_per_block_bytes > 0 &&
                           p.shared_memory_per_block_optin_bytes >= p.shared_memory_per_block_bytes;
    if (!plausible) {
        std::printf("implausible properties\n");
        return EXIT_FAILURE;
    }
    // Every GPU is listed, the query's own (device 0 without a current context) first.
    tensoracle::GpuList const all = tensoracle::query_all_gpu_properties();
    std::printf("%zu GPU(s) listed\n", all.devices.size());
    if (all.devices.empty() || tensoracle::to_json(all.devices.front()) != tensoracle::to_json(p)) {
        std::printf("the list does not start with the device of the query: %s\n",
                    all.absent_reason.c_str());
        return EXIT_FAILURE;
    }
    return EXIT_SUCCESS;
}
