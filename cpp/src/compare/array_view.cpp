// Element types, view validation and the strided loaders behind the comparison kernels.
#include "tensoracle/compare/array_view.hpp"

#include "compare/element_readers.hpp"
#include "compare/float_formats.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <string>

namespace tensoracle {
namespace {

// NumPy 2 allows at most 64 dimensions.
constexpr std::size_t max_dimensions = 64;

struct TypeInfo {
    ElementType type;
    std::string_view name;
    std::size_t size;
    ElementKind kind;
};

constexpr std::array<TypeInfo, 15> type_table{{
    {ElementType::float16, "float16", 2, ElementKind::floating},
    {ElementType::bfloat16, "bfloat16", 2, ElementKind::floating},
    {ElementType::float8_e4m3fn, "float8_e4m3fn", 1, ElementKind::floating},
    {ElementType::float8_e5m2, "float8_e5m2", 1, ElementKind::floating},
    {ElementType::float32, "float32", 4, ElementKind::floating},
    {ElementType::float64, "float64", 8, ElementKind::floating},
    {ElementType::int8, "int8", 1, ElementKind::integer},
    {ElementType::int16, "int16", 2, ElementKind::integer},
    {ElementType::int32, "int32", 4, ElementKind::integer},
    {ElementType::int64, "int64", 8, ElementKind::integer},
    {ElementType::uint8, "uint8", 1, ElementKind::integer},
    {ElementType::uint16, "uint16", 2, ElementKind::integer},
    {ElementType::uint32, "uint32", 4, ElementKind::integer},
    {ElementType::uint64, "uint64", 8, ElementKind::integer},
    {ElementType::boolean, "bool", 1, ElementKind::boolean},
}};

TypeInfo const& info(ElementType type) noexcept {
    return type_table[static_cast<std::size_t>(type)];
}

template <class T>
T read(std::byte const* address) noexcept {
    T value;
    std::memcpy(&value, address, sizeof value);
    return value;
}

// Every binary16 value, widened once; a lookup is cheaper than decoding bits per element.
std::array<float, 65536> const& float16_table() {
    static std::array<float, 65536> const table = [] {
        std::array<float, 65536> values{};
        for (std::size_t bits = 0; bits < values.size(); ++bits) {
            values[bits] = static_cast<float>(decode_float16(static_cast<std::uint16_t>(bits)));
        }
        return values;
    }();
    return table;
}

template <double (*Decode)(std::uint8_t) noexcept>
std::array<float, 256> const& byte_table() {
    static std::array<float, 256> const table = [] {
        std::array<float, 256> values{};
        for (std::size_t bits = 0; bits < values.size(); ++bits) {
            values[bits] = static_cast<float>(Decode(static_cast<std::uint8_t>(bits)));
        }
        return values;
    }();
    return table;
}

// A view with adjacent dimensions merged wherever memory allows, so that contiguous arrays of
// any rank are walked as one long run.
struct Layout {
    std::size_t rank = 0;
    std::array<std::int64_t, max_dimensions> shape{};
    std::array<std::int64_t, max_dimensions> strides{};
};

Layout collapse(ArrayView const& view) noexcept {
    Layout layout;
    for (std::size_t d = 0; d < view.shape.size(); ++d) {
        if (view.shape[d] == 1) {
            continue;
        }
        if (layout.rank > 0) {
            std::size_t const last = layout.rank - 1;
            if (layout.strides[last] == view.shape[d] * view.strides[d]) {
                layout.shape[last] *= view.shape[d];
                layout.strides[last] = view.strides[d];
                continue;
            }
        }
        layout.shape[layout.rank] = view.shape[d];
        layout.strides[layout.rank] = view.strides[d];
        ++layout.rank;
    }
    if (layout.rank == 0) {
        layout.rank = 1;
        layout.shape[0] = 1;
        layout.strides[0] = 0;
    }
    return layout;
}

// Calls fn(address, stride, n) for each stretch of the innermost dimension that covers the
// `count` elements from flat index `first` on.
template <class Fn>
void for_each_run(ArrayView const& view, std::uint64_t first, std::size_t count, Fn&& fn) {
    Layout const layout = collapse(view);
    std::size_t const rank = layout.rank;
    std::array<std::int64_t, max_dimensions> index{};
    std::int64_t offset = 0;
    std::uint64_t remainder = first;
    for (std::size_t d = rank; d-- > 0;) {
        auto const extent = static_cast<std::uint64_t>(layout.shape[d]);
        index[d] = static_cast<std::int64_t>(remainder % extent);
        remainder /= extent;
        offset += index[d] * layout.strides[d];
    }
    std::size_t const inner = rank - 1;
    while (count > 0) {
        auto const available = static_cast<std::size_t>(layout.shape[inner] - index[inner]);
        std::size_t const run = std::min(count, available);
        fn(view.data + offset, layout.strides[inner], run);
        count -= run;
        if (count == 0) {
            break;
        }
        // The run ended at the end of the innermost row: carry into the outer dimensions.
        offset -= index[inner] * layout.strides[inner];
        index[inner] = 0;
        for (std::size_t d = inner; d-- > 0;) {
            ++index[d];
            offset += layout.strides[d];
            if (index[d] < layout.shape[d]) {
                break;
            }
            offset -= index[d] * layout.strides[d];
            index[d] = 0;
        }
    }
}

template <class T, class Convert, class Out>
void load_runs(ArrayView const& view, std::uint64_t first, std::size_t count, Out* out,
               Convert convert) {
    for_each_run(view, first, count,
                 [&](std::byte const* address, std::int64_t stride, std::size_t n) {
                     if (stride == static_cast<std::int64_t>(sizeof(T))) {
                         for (std::size_t i = 0; i < n; ++i) {
                             out[i] = convert(read<T>(address + i * sizeof(T)));
                         }
                     } else {
                         for (std::size_t i = 0; i < n; ++i) {
                             out[i] = convert(read<T>(address));
                             address += stride;
                         }
                     }
                     out += n;
                 });
}

[[noreturn]] void throw_wrong_kind(ArrayView const& view, std::string_view expected) {
    std::string message = "cannot read ";
    message += element_type_name(view.type);
    message += " elements as ";
    message += expected;
    throw InvalidArgument(message);
}

} // namespace

ElementType parse_element_type(std::string_view name, std::string_view field) {
    for (TypeInfo const& entry : type_table) {
        if (entry.name == name) {
            return entry.type;
        }
    }
    std::string message{field};
    message += " has dtype '";
    message += name;
    message += "', which is not supported; supported dtypes:";
    for (TypeInfo const& entry : type_table) {
        message += ' ';
        message += entry.name;
    }
    throw InvalidArgument(message);
}

std::string_view element_type_name(ElementType type) noexcept {
    return info(type).name;
}

std::size_t element_size(ElementType type) noexcept {
    return info(type).size;
}

ElementKind element_kind(ElementType type) noexcept {
    return info(type).kind;
}

std::string_view element_kind_name(ElementKind kind) noexcept {
    switch (kind) {
    case ElementKind::floating:
        return "floating point";
    case ElementKind::integer:
        return "integer";
    case ElementKind::boolean:
        return "boolean";
    }
    return "unknown";
}

std::uint64_t checked_element_count(ArrayView const& view, std::string_view field) {
    if (view.shape.size() != view.strides.size()) {
        throw InvalidArgument(std::string{field} + " has " + std::to_string(view.shape.size()) +
                              " dimensions but " + std::to_string(view.strides.size()) +
                              " strides");
    }
    if (view.shape.size() > max_dimensions) {
        throw InvalidArgument(std::string{field} + " has " + std::to_string(view.shape.size()) +
                              " dimensions; at most 64 are supported");
    }
    std::uint64_t count = 1;
    for (std::int64_t extent : view.shape) {
        if (extent < 0) {
            throw InvalidArgument(std::string{field} + " has a negative extent " +
                                  std::to_string(extent));
        }
        auto const unsigned_extent = static_cast<std::uint64_t>(extent);
        if (unsigned_extent != 0 &&
            count > std::numeric_limits<std::uint64_t>::max() / unsigned_extent) {
            throw InvalidArgument(std::string{field} + " has too many elements");
        }
        count *= unsigned_extent;
    }
    if (count > 0 && view.data == nullptr) {
        throw InvalidArgument(std::string{field} + " has elements but no data");
    }
    return count;
}

bool is_contiguous(ArrayView const& view) noexcept {
    Layout const layout = collapse(view);
    return layout.rank == 1 &&
           (layout.shape[0] == 1 ||
            layout.strides[0] == static_cast<std::int64_t>(element_size(view.type)));
}

void load_doubles(ArrayView const& view, std::uint64_t first, std::size_t count, double* out) {
    switch (view.type) {
    case ElementType::float16: {
        auto const& table = float16_table();
        load_runs<std::uint16_t>(view, first, count, out,
                                 [&](std::uint16_t bits) { return double{table[bits]}; });
        return;
    }
    case ElementType::bfloat16:
        load_runs<std::uint16_t>(view, first, count, out, decode_bfloat16);
        return;
    case ElementType::float8_e4m3fn: {
        auto const& table = byte_table<decode_float8_e4m3fn>();
        load_runs<std::uint8_t>(view, first, count, out,
                                [&](std::uint8_t bits) { return double{table[bits]}; });
        return;
    }
    case ElementType::float8_e5m2: {
        auto const& table = byte_table<decode_float8_e5m2>();
        load_runs<std::uint8_t>(view, first, count, out,
                                [&](std::uint8_t bits) { return double{table[bits]}; });
        return;
    }
    case ElementType::float32:
        load_runs<float>(view, first, count, out, [](float value) { return double{value}; });
        return;
    case ElementType::float64:
        load_runs<double>(view, first, count, out, [](double value) { return value; });
        return;
    default:
        throw_wrong_kind(view, "floating point values");
    }
}

void load_integers(ArrayView const& view, std::uint64_t first, std::size_t count,
                   IntegerValue* out) {
    auto const from_signed = [](auto value) {
        // `value` is a signed integer element; int8 elements are numbers, not characters.
        std::int64_t const wide = value; // NOLINT(bugprone-signed-char-misuse)
        return IntegerValue{static_cast<std::uint64_t>(wide), wide < 0};
    };
    auto const from_unsigned = [](auto value) {
        return IntegerValue{static_cast<std::uint64_t>(value), false};
    };
    switch (view.type) {
    case ElementType::int8:
        load_runs<std::int8_t>(view, first, count, out, from_signed);
        return;
    case ElementType::int16:
        load_runs<std::int16_t>(view, first, count, out, from_signed);
        return;
    case ElementType::int32:
        load_runs<std::int32_t>(view, first, count, out, from_signed);
        return;
    case ElementType::int64:
        load_runs<std::int64_t>(view, first, count, out, from_signed);
        return;
    case ElementType::uint8:
        load_runs<std::uint8_t>(view, first, count, out, from_unsigned);
        return;
    case ElementType::uint16:
        load_runs<std::uint16_t>(view, first, count, out, from_unsigned);
        return;
    case ElementType::uint32:
        load_runs<std::uint32_t>(view, first, count, out, from_unsigned);
        return;
    case ElementType::uint64:
        load_runs<std::uint64_t>(view, first, count, out, from_unsigned);
        return;
    default:
        throw_wrong_kind(view, "integers");
    }
}

void load_booleans(ArrayView const& view, std::uint64_t first, std::size_t count,
                   std::uint8_t* out) {
    if (view.type != ElementType::boolean) {
        throw_wrong_kind(view, "booleans");
    }
    load_runs<std::uint8_t>(view, first, count, out,
                            [](std::uint8_t value) { return std::uint8_t{value != 0}; });
}

} // namespace tensoracle
