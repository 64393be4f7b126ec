// The records a cubin bundle is made of (kernels, their argument ABI, their cubins), as compiled
// into a plugin by the producer's generated bundle.cpp or loaded from a bundle directory.
//
// The header depends on the standard library only, so that a generated bundle.cpp compiles with
// nothing but this include directory.
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
    std::string_view triton_type; // as written in the KernelSpec, e.g. "*fp32" or "i32"
    ArgType type;
    std::uint32_t divisibility;
};

// One cubin of a kernel, compiled for exactly one SM (86 for sm_86).
struct CubinImage {
    std::uint32_t sm;
    std::string_view sha256; // 64 lowercase hex digits of `bytes`
    std::span<unsigned char const> bytes;
    std::uint32_t shared_bytes; // dynamic shared memory the launch must request
};

// One kernel variant: its entry function, launch shape and cubins. Triton appends two hidden
// pointer parameters (global and profile scratch) after the public ones; the producer only
// accepts kernels whose scratch needs are zero, so the runtime passes two null pointers.
struct KernelRecord {
    std::string_view name;     // the variant's name in the bundle, e.g. "dot_div16"
    std::string_view function; // the entry symbol inside the cubin
    std::string_view source_sha256;
    std::uint32_t num_warps;
    std::uint32_t hidden_args;
    std::span<ArgSpec const> args;
    std::span<CubinImage const> images;
};

// A whole bundle. `sha256` is the digest of its bundle.json, which lists every cubin digest.
struct BundleRecord {
    std::string_view sha256;
    std::span<KernelRecord const> kernels;
};

// Defined by a producer-generated bundle.cpp: the bundle compiled into this library.
BundleRecord const& embedded_bundle() noexcept;

// The text that precedes the bundle digest in every library built from a generated bundle.cpp;
// inspection looks for it to tell which bundle a library embeds.
inline constexpr std::string_view embedded_marker_prefix = "tensoracle-cubin-bundle-sha256:";

} // namespace tensoracle::cubin
