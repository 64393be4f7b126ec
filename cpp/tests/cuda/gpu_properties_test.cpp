// Tests the GPU property query where no usable GPU exists: it must report why, never throw.
#include "cuda/gpu_properties_json.hpp"

#include <gtest/gtest.h>
#include <string>

#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif

namespace tensoracle {
namespace {

// The CUDA driver library of the platform, loaded here as the core loads it.
#ifdef _WIN32
constexpr char const* kDriverLibrary = "nvcuda.dll";

bool driver_loadable() {
    HMODULE const library =
        ::LoadLibraryExW(L"nvcuda.dll", nullptr, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
    if (library == nullptr) {
        return false;
    }
    ::FreeLibrary(library);
    return true;
}
#else
constexpr char const* kDriverLibrary = "libcuda.so.1";

bool driver_loadable() {
    void* library = dlopen(kDriverLibrary, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        return false;
    }
    dlclose(library);
    return true;
}
#endif

TEST(GpuProperties, WithoutDriverReportsTheLibraryThatIsMissing) {
    if (driver_loadable()) {
        GTEST_SKIP() << kDriverLibrary
                     << " is present; gpu_properties_gpu_test covers this machine";
    }
    GpuQuery const query = query_gpu_properties();
    EXPECT_FALSE(query.properties.has_value());
    EXPECT_NE(query.absent_reason.find(kDriverLibrary), std::string::npos) << query.absent_reason;
    // A second query gives the same answer (the failed load is remembered, not retried badly).
    EXPECT_EQ(query_gpu_properties().absent_reason, query.absent_reason);
}

TEST(GpuProperties, WithoutDriverNoGpuIsListedAndTheReasonSaysWhy) {
    if (driver_loadable()) {
        GTEST_SKIP() << kDriverLibrary
                     << " is present; gpu_properties_gpu_test covers this machine";
    }
    GpuList const list = query_all_gpu_properties();
    EXPECT_TRUE(list.devices.empty());
    EXPECT_EQ(list.absent_reason, query_gpu_properties().absent_reason);
}

TEST(GpuProperties, JsonHoldsOnlyIntegersStringsAndBooleans) {
    GpuProperties properties;
    properties.name = "Example GPU";
    properties.compute_capability_major = 8;
    properties.compute_capability_minor = 6;
    properties.total_memory_bytes = 48ULL << 30;
    properties.ecc_enabled = true;
    nlohmann::json const json = to_json(properties);
    EXPECT_EQ(json.at("name"), "Example GPU");
    EXPECT_EQ(json.at("compute_capability"), "8.6");
    EXPECT_EQ(json.at("total_memory_bytes").get<std::uint64_t>(), 48ULL << 30);
    EXPECT_EQ(json.at("ecc_enabled"), true);
    for (auto const& [key, value] : json.items()) {
        EXPECT_FALSE(value.is_number_float()) << key;
    }
    EXPECT_EQ(json.size(), 12U);
}

} // namespace
} // namespace tensoracle
