// The bytes a tensor of a dtype and concrete shape holds (see execution_contract.hpp).
#include "tensoracle/deploy/data_type.hpp"
#include "tensoracle/deploy/execution_contract.hpp"
#include "tensoracle/errors.hpp"
#include "text/message_text.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace tensoracle::deploy {

std::optional<int> element_bits(std::string_view dtype) {
    if (auto const type = data_type_from_name(dtype)) {
        return element_bits(*type);
    }
    return std::nullopt;
}

std::uint64_t tensor_bytes(std::string_view dtype, Shape const& shape) {
    auto const bits = element_bits(dtype);
    if (!bits) {
        throw InvalidArgument("unknown dtype '" + std::string(dtype) +
                              "': expected a TensorRT DataType name (FLOAT, HALF, ...)");
    }
    constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t elements = 1;
    for (std::int64_t const dim : shape) {
        if (dim < 0) {
            throw InvalidArgument("shape " + shape_text(shape) +
                                  " has a negative dimension: a tensor's size needs its concrete "
                                  "shape");
        }
        auto const size = static_cast<std::uint64_t>(dim);
        if (size != 0 && elements > kMax / size) {
            throw InvalidArgument("a " + std::string(dtype) + " tensor of shape " +
                                  shape_text(shape) + " is larger than 2^64 bytes");
        }
        elements *= size;
    }
    auto const element = static_cast<std::uint64_t>(*bits);
    if (elements > (kMax - 7) / element) {
        throw InvalidArgument("a " + std::string(dtype) + " tensor of shape " + shape_text(shape) +
                              " is larger than 2^64 bytes");
    }
    return (elements * element + 7) / 8;
}

} // namespace tensoracle::deploy
