// Reads what inspection needs from a cubin's ELF image: the SM it was built for, its kernel
// functions and each kernel's parameter layout (from the .nv.info.<kernel> attributes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tensoracle::cubin {

// One kernel parameter as the cubin records it: position, byte offset and size.
struct CubinParam {
    std::uint32_t ordinal;
    std::uint32_t offset;
    std::uint32_t size;
};

struct CubinFunction {
    std::string name;
    std::vector<CubinParam> params; // sorted by ordinal
};

struct CubinElf {
    std::uint32_t sm;          // 90 for a cubin built for sm_90 or sm_90a
    std::uint32_t abi_version; // the CUDA ELF ABI version of the header
    std::vector<CubinFunction> functions;

    // The function named `name`, or nullptr.
    CubinFunction const* function(std::string_view name) const noexcept;
};

// Parses a cubin with libelf. Throws CorruptCubinError naming `path` (used in messages only)
// when the bytes are not a 64-bit CUDA ELF image or its attribute tables are malformed.
CubinElf read_cubin_elf(std::span<std::byte const> bytes, std::string const& path);

} // namespace tensoracle::cubin
