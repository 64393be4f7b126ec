// Reads what inspection needs from a cubin's ELF image: the SM it was built for, its kernel
// functions and each kernel's parameter layout (from the .nv.info.<kernel> attributes).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
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
    // Threads per block the kernel was compiled for (.reqntid or .maxntid x*y*z), when recorded.
    std::optional<std::uint32_t> block_threads;
};

// The SMs tensoracle 1.x bundles are built for, and the larger set our producer and inspector
// accept (its extra targets). The arch-specific "a" variants count as their SM.
inline constexpr std::array<std::uint32_t, 3> kSms1x = {86, 89, 120};
inline constexpr std::array<std::uint32_t, 6> kSmsInspected = {80, 86, 89, 90, 100, 120};

// The SM of a cubin read from its ELF header alone: 64-bit little-endian ELF of at least 64
// bytes, e_machine EM_CUDA (190), EI_ABIVERSION 7 (SM in bits 16..23 of e_flags) or 8 (bits
// 8..15). Throws CubinArchitectureError naming `path` when the header is none of these or the SM
// is not in `allowed`.
std::uint32_t cubin_sm(std::span<std::byte const> bytes, std::span<std::uint32_t const> allowed,
                       std::string const& path);

struct CubinElf {
    std::uint32_t sm;          // 90 for a cubin built for sm_90 or sm_90a
    std::uint32_t abi_version; // the CUDA ELF ABI version of the header
    std::vector<CubinFunction> functions;

    // The function named `name`, or nullptr.
    CubinFunction const* function(std::string_view name) const noexcept;
};

// Parses a cubin's ELF image (a bounds-checked reader of our own). Throws CorruptCubinError naming
// `path` (used in messages only) when the bytes are not a 64-bit CUDA ELF image or its attribute
// tables are malformed.
CubinElf read_cubin_elf(std::span<std::byte const> bytes, std::string const& path);

} // namespace tensoracle::cubin
