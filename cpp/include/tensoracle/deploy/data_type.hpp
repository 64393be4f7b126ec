// The element types of an engine's IO tensors, as an enum: what the manifest and the saved header
// record as TensorRT's enum names ("FLOAT", "HALF", ...), which TensorDescription::dtype keeps as
// text. The mapping to TensorRT's own nvinfer1::DataType is the TensorRT adapter's
// (tensorrt.hpp: to_tensorrt, from_tensorrt), so that this header needs no TensorRT.
//
// This header compiles as C++17 and includes no third-party header.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace tensoracle::deploy {

enum class DataType {
    float32,  // "FLOAT"
    float16,  // "HALF"
    bfloat16, // "BF16"
    int8,     // "INT8"
    int32,    // "INT32"
    int64,    // "INT64"
    boolean,  // "BOOL"
    uint8,    // "UINT8"
    fp8,      // "FP8"
    e8m0,     // "E8M0"
    int4,     // "INT4"
    fp4,      // "FP4"
};

// Every DataType with its name and the bits one element occupies (4 for INT4 and FP4).
struct DataTypeInfo {
    DataType type;
    std::string_view name;
    int bits;
};
inline constexpr std::array<DataTypeInfo, 12> kDataTypes{{
    {DataType::float32, "FLOAT", 32},
    {DataType::float16, "HALF", 16},
    {DataType::bfloat16, "BF16", 16},
    {DataType::int8, "INT8", 8},
    {DataType::int32, "INT32", 32},
    {DataType::int64, "INT64", 64},
    {DataType::boolean, "BOOL", 8},
    {DataType::uint8, "UINT8", 8},
    {DataType::fp8, "FP8", 8},
    {DataType::e8m0, "E8M0", 8},
    {DataType::int4, "INT4", 4},
    {DataType::fp4, "FP4", 4},
}};

// The DataType of a recorded name ("FLOAT" gives float32), or nothing for a name that is not one
// (names are compared exactly: "float" is not one).
constexpr std::optional<DataType> data_type_from_name(std::string_view name) noexcept {
    for (DataTypeInfo const& info : kDataTypes) {
        if (info.name == name) {
            return info.type;
        }
    }
    return std::nullopt;
}

// The name the manifest records for `type` ("FLOAT" for float32).
constexpr std::string_view data_type_name(DataType type) noexcept {
    return kDataTypes[static_cast<std::size_t>(type)].name;
}

// The bits one element of `type` occupies.
constexpr int element_bits(DataType type) noexcept {
    return kDataTypes[static_cast<std::size_t>(type)].bits;
}

} // namespace tensoracle::deploy
