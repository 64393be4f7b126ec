// Host or device memory, by the CUDA driver (see memory_kind.hpp).
#include "tensoracle/deploy/memory_kind.hpp"

#include "cuda/loaded_driver.hpp"
#include "tensoracle/errors.hpp"

#include <cstdint>

namespace tensoracle::deploy {
namespace {

// From cuda.h.
constexpr int kPointerAttributeMemoryType = 2; // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr unsigned kMemoryTypeDevice = 2;      // CU_MEMORYTYPE_DEVICE
constexpr cuda::Result kErrorInvalidValue = 1; // CUDA_ERROR_INVALID_VALUE

} // namespace

MemoryKind memory_kind(void const* address) {
    cuda::Driver const* driver = nullptr;
    try {
        driver = &cuda::Driver::get();
    } catch (CubinRuntimeError const&) {
        return MemoryKind::host; // no driver: no device memory in this process
    }
    unsigned type = 0;
    cuda::Result const asked = driver->pointer_get_attribute(
        &type, kPointerAttributeMemoryType,
        static_cast<cuda::DevicePtr>(reinterpret_cast<std::uintptr_t>(address)));
    if (asked == kErrorInvalidValue) {
        return MemoryKind::host; // memory the driver does not know
    }
    if (asked != 0) {
        throw Error("the CUDA driver cannot tell whether the memory at " +
                    std::to_string(reinterpret_cast<std::uintptr_t>(address)) +
                    " is host or device memory: cuPointerGetAttribute failed with " +
                    driver->error_name(asked));
    }
    return type == kMemoryTypeDevice ? MemoryKind::device : MemoryKind::host;
}

} // namespace tensoracle::deploy
