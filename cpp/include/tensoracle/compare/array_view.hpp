// A typed, strided, read-only view of array memory owned by someone else (a NumPy array, say), as
// the comparison (compare.hpp) takes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace tensoracle {

// The element types the comparison reads. Names follow NumPy / ml_dtypes spelling.
enum class ElementType : std::uint8_t {
    float16,
    bfloat16,
    float8_e4m3fn,
    float8_e5m2,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    boolean,
};

// What kind of values a type holds; only arrays of one kind can be compared.
enum class ElementKind : std::uint8_t { floating, integer, boolean };

// Parses a NumPy dtype name ("float16", "bfloat16", "bool", ...); throws InvalidArgument naming
// `field` and the name when the type is not one of ElementType.
ElementType parse_element_type(std::string_view name, std::string_view field);
std::string_view element_type_name(ElementType type) noexcept;
std::size_t element_size(ElementType type) noexcept;
ElementKind element_kind(ElementType type) noexcept;
std::string_view element_kind_name(ElementKind kind) noexcept;

// A view of `shape` elements starting at `data`; `strides` are in bytes and may be negative or
// zero. The memory must stay alive and unchanged while the view is read.
struct ArrayView {
    std::byte const* data = nullptr;
    ElementType type = ElementType::float64;
    std::span<std::int64_t const> shape;
    std::span<std::int64_t const> strides;
};

} // namespace tensoracle
