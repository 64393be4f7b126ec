// The records the core's cubin runtime works from: kernels, their argument ABI and one cubin image
// per SM, as LoadedBundle builds them from a bundle directory (bundle_manifest.hpp).
//
// The header depends on the standard library only.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace tensoracle::cubin {

// The kinds of public kernel argument the runtime can pass. Pointers are device addresses.
enum class ArgType : std::uint8_t { pointer, i32, i64, f32, f64 };

// The number of bytes a value of `type` occupies in the kernel's parameter buffer.
constexpr std::uint32_t arg_size(ArgType type) noexcept {
    return type == ArgType::i32 || type == ArgType::f32 ? 4U : 8U;
}

// One public argument, in the kernel's parameter order. `divisibility` is 1 when nothing is
// assumed, else the value (for a pointer: the address) must be a multiple of it.
struct ArgSpec {
    std::string_view name;
    std::string_view triton_type; // as the manifest's signature spells it, e.g. "*fp32" or "i32"
    ArgType type;
    std::uint32_t divisibility;
};

// One cubin of a kernel, compiled for exactly one SM (86 for sm_86), with what its launch needs.
struct CubinImage {
    std::uint32_t sm;
    std::string_view sha256; // 64 lowercase hex digits of `bytes`
    std::span<unsigned char const> bytes;
    std::uint32_t shared_bytes;  // dynamic shared memory the launch must request
    std::string_view function;   // the entry symbol inside the cubin
    std::uint32_t registers;     // per thread, as the manifest records them
    std::uint32_t block_threads; // threads per block the kernel was compiled for
};

// One kernel of a bundle and its images. Triton appends two hidden pointer parameters (global and
// profile scratch) after the public ones; bundles only hold kernels whose scratch needs are zero,
// so the runtime passes two null pointers.
struct KernelRecord {
    std::string_view name; // the kernel's name in the bundle, e.g. "dot_div16"
    std::string_view source_sha256;
    std::uint32_t hidden_args;
    std::span<ArgSpec const> args;
    std::span<CubinImage const> images;
};

// A whole bundle. `sha256` is its digest (bundle_sha256 of the manifest).
struct BundleRecord {
    std::string_view sha256;
    std::span<KernelRecord const> kernels;
};

} // namespace tensoracle::cubin
