// TensorRT's enum values (data types, tensor formats and locations) by the names the Python
// package and the manifest write, and tensoracle::deploy::DataType to TensorRT's and back.
//
// One piece of the TensorRT adapter, tensoracle/deploy/tensorrt.hpp (which applications
// include, and whose comment gives the whole path): header-only, compiled as C++17 against the
// application's TensorRT 11 headers.
#pragma once

#include "tensoracle/deploy/data_type.hpp"

#include <NvInferRuntime.h>
#include <optional>
#include <string_view>

namespace tensoracle::deploy::tensorrt {

constexpr std::string_view dtype_name(nvinfer1::DataType type) noexcept {
    switch (type) {
    case nvinfer1::DataType::kFLOAT:
        return "FLOAT";
    case nvinfer1::DataType::kHALF:
        return "HALF";
    case nvinfer1::DataType::kINT8:
        return "INT8";
    case nvinfer1::DataType::kINT32:
        return "INT32";
    case nvinfer1::DataType::kBOOL:
        return "BOOL";
    case nvinfer1::DataType::kUINT8:
        return "UINT8";
    case nvinfer1::DataType::kFP8:
        return "FP8";
    case nvinfer1::DataType::kBF16:
        return "BF16";
    case nvinfer1::DataType::kINT64:
        return "INT64";
    case nvinfer1::DataType::kINT4:
        return "INT4";
    case nvinfer1::DataType::kFP4:
        return "FP4";
    case nvinfer1::DataType::kE8M0:
        return "E8M0";
    }
    return "UNKNOWN";
}

// The TensorRT DataType of a tensoracle::deploy::DataType (data_type.hpp), and back: nothing for
// a TensorRT type the manifest has no name for.
constexpr nvinfer1::DataType to_tensorrt(DataType type) noexcept {
    switch (type) {
    case DataType::float32:
        return nvinfer1::DataType::kFLOAT;
    case DataType::float16:
        return nvinfer1::DataType::kHALF;
    case DataType::bfloat16:
        return nvinfer1::DataType::kBF16;
    case DataType::int8:
        return nvinfer1::DataType::kINT8;
    case DataType::int32:
        return nvinfer1::DataType::kINT32;
    case DataType::int64:
        return nvinfer1::DataType::kINT64;
    case DataType::boolean:
        return nvinfer1::DataType::kBOOL;
    case DataType::uint8:
        return nvinfer1::DataType::kUINT8;
    case DataType::fp8:
        return nvinfer1::DataType::kFP8;
    case DataType::e8m0:
        return nvinfer1::DataType::kE8M0;
    case DataType::int4:
        return nvinfer1::DataType::kINT4;
    case DataType::fp4:
        return nvinfer1::DataType::kFP4;
    }
    return nvinfer1::DataType::kFLOAT; // not reached: every enumerator is handled above
}

constexpr std::optional<DataType> from_tensorrt(nvinfer1::DataType type) noexcept {
    return data_type_from_name(dtype_name(type));
}

constexpr std::string_view format_name(nvinfer1::TensorFormat format) noexcept {
    switch (format) {
    case nvinfer1::TensorFormat::kLINEAR:
        return "LINEAR";
    case nvinfer1::TensorFormat::kCHW2:
        return "CHW2";
    case nvinfer1::TensorFormat::kHWC8:
        return "HWC8";
    case nvinfer1::TensorFormat::kCHW4:
        return "CHW4";
    case nvinfer1::TensorFormat::kCHW16:
        return "CHW16";
    case nvinfer1::TensorFormat::kCHW32:
        return "CHW32";
    case nvinfer1::TensorFormat::kDHWC8:
        return "DHWC8";
    case nvinfer1::TensorFormat::kCDHW32:
        return "CDHW32";
    case nvinfer1::TensorFormat::kHWC:
        return "HWC";
    case nvinfer1::TensorFormat::kDLA_LINEAR:
        return "DLA_LINEAR";
    case nvinfer1::TensorFormat::kDLA_HWC4:
        return "DLA_HWC4";
    case nvinfer1::TensorFormat::kHWC16:
        return "HWC16";
    case nvinfer1::TensorFormat::kDHWC:
        return "DHWC";
    }
    return "UNKNOWN";
}

constexpr std::string_view location_name(nvinfer1::TensorLocation location) noexcept {
    switch (location) {
    case nvinfer1::TensorLocation::kDEVICE:
        return "DEVICE";
    case nvinfer1::TensorLocation::kHOST:
        return "HOST";
    }
    return "UNKNOWN";
}

} // namespace tensoracle::deploy::tensorrt
