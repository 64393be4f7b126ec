// Shapes as TensorRT's Dims and back.
//
// One piece of the TensorRT adapter, tensoracle/deploy/tensorrt.hpp (which applications
// include, and whose comment gives the whole path): header-only, compiled as C++17 against the
// application's TensorRT 11 headers.
#pragma once

#include "tensoracle/deploy/execution_contract.hpp"
#include "tensoracle/errors.hpp"

#include <NvInferRuntime.h>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace tensoracle::deploy::tensorrt {

// A TensorRT Dims as a shape; nothing for an invalid one (rank -1).
inline std::optional<Shape> shape_of(nvinfer1::Dims const& dims) {
    if (dims.nbDims < 0 || dims.nbDims > nvinfer1::Dims::MAX_DIMS) {
        return std::nullopt;
    }
    Shape shape;
    shape.reserve(static_cast<std::size_t>(dims.nbDims));
    for (std::int32_t axis = 0; axis < dims.nbDims; ++axis) {
        shape.push_back(dims.d[axis]);
    }
    return shape;
}

// A shape as a TensorRT Dims; InvalidArgument beyond Dims::MAX_DIMS dimensions.
inline nvinfer1::Dims dims_of(Shape const& shape) {
    if (shape.size() > static_cast<std::size_t>(nvinfer1::Dims::MAX_DIMS)) {
        throw InvalidArgument("a TensorRT shape has at most " +
                              std::to_string(nvinfer1::Dims::MAX_DIMS) + " dimensions, not " +
                              std::to_string(shape.size()));
    }
    nvinfer1::Dims dims{};
    dims.nbDims = static_cast<std::int32_t>(shape.size());
    for (std::size_t axis = 0; axis < shape.size(); ++axis) {
        dims.d[axis] = shape[axis];
    }
    return dims;
}

} // namespace tensoracle::deploy::tensorrt
