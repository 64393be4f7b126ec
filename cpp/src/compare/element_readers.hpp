// Reading the elements of an ArrayView (tensoracle/compare/array_view.hpp) in flat C order, for
// the comparison's passes.
#pragma once

#include "tensoracle/compare/array_view.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tensoracle {

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
