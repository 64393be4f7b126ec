// A typed, strided, read-only view of array memory owned by someone else (a NumPy array, say),
// and the loaders that read its elements in flat C order.
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

// Checks that shape and strides have one entry per dimension and no negative extents, then
// returns the element count; throws InvalidArgument naming `field` otherwise.
std::uint64_t checked_element_count(ArrayView const& view, std::string_view field);

// Whether the elements lie one after the other in flat C order, each element_size(type) bytes
// from the one before (dimensions of extent 1 aside).
bool is_contiguous(ArrayView const& view) noexcept;

// An integer read from any integer type: equality is exact across signedness and widths.
struct IntegerValue {
    std::uint64_t bits = 0;
    bool negative = false;
    friend bool operator==(IntegerValue const&, IntegerValue const&) = default;
};

// Readers of `count` consecutive elements (flat C order) starting at flat index `first`.
// Floating point views widen to double; integer views to IntegerValue; boolean views (and only
// those) to 0/1 in `load_booleans`.
void load_doubles(ArrayView const& view, std::uint64_t first, std::size_t count, double* out);
void load_integers(ArrayView const& view, std::uint64_t first, std::size_t count,
                   IntegerValue* out);
void load_booleans(ArrayView const& view, std::uint64_t first, std::size_t count,
                   std::uint8_t* out);

} // namespace tensoracle
