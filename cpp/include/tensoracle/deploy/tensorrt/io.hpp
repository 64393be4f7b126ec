// The engine's IO as TensorRT reports it, and checked against the manifest entry's IO signature.
//
// One piece of the TensorRT adapter, tensoracle/deploy/tensorrt.hpp (which applications
// include, and whose comment gives the whole path): header-only, compiled as C++17 against the
// application's TensorRT 11 headers.
#pragma once

#include "tensoracle/deploy/deployed_engine.hpp"
#include "tensoracle/deploy/execution_contract.hpp"
#include "tensoracle/deploy/manifest.hpp"
#include "tensoracle/deploy/tensorrt/names.hpp"
#include "tensoracle/deploy/tensorrt/shapes.hpp"
#include "tensoracle/errors.hpp"

#include <NvInferRuntime.h>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tensoracle::deploy::tensorrt {

// Every IO tensor of `engine`, in its order, as TensorRT reports it, the inputs' ranges those of
// optimization profile `profile` (0 by default). Throws EngineIOError (carrying `path`) for a
// tensor whose shape TensorRT reports as invalid.
inline std::vector<TensorDescription> describe_io(nvinfer1::ICudaEngine const& engine,
                                                  std::filesystem::path const& path,
                                                  std::int32_t profile = 0) {
    std::vector<TensorDescription> tensors;
    std::int32_t const count = engine.getNbIOTensors();
    bool const has_profile = engine.getNbOptimizationProfiles() > 0;
    for (std::int32_t index = 0; index < count; ++index) {
        char const* name = engine.getIOTensorName(index);
        TensorDescription tensor;
        tensor.name = name == nullptr ? std::string() : std::string(name);
        tensor.is_input = engine.getTensorIOMode(name) == nvinfer1::TensorIOMode::kINPUT;
        tensor.dtype = std::string(dtype_name(engine.getTensorDataType(name)));
        std::optional<Shape> shape = shape_of(engine.getTensorShape(name));
        if (!shape) {
            throw EngineIOError("TensorRT reports no valid shape for tensor '" + tensor.name +
                                    "' of the engine '" + path.string() + "'",
                                path);
        }
        tensor.shape = std::move(*shape);
        tensor.location = std::string(location_name(engine.getTensorLocation(name)));
        tensor.format = std::string(format_name(engine.getTensorFormat(name)));
        tensor.is_shape_tensor = engine.isShapeInferenceIO(name);
        if (tensor.is_input && has_profile) {
            auto const point = [&](nvinfer1::OptProfileSelector select) {
                return shape_of(engine.getProfileShape(name, profile, select));
            };
            auto low = point(nvinfer1::OptProfileSelector::kMIN);
            auto optimum = point(nvinfer1::OptProfileSelector::kOPT);
            auto high = point(nvinfer1::OptProfileSelector::kMAX);
            if (low && optimum && high && low->size() == tensor.shape.size()) {
                tensor.profile =
                    ShapeProfile{std::move(*low), std::move(*optimum), std::move(*high)};
            }
        } else if (!tensor.is_input) {
            char const* source = engine.getAliasedInputTensor(name);
            if (source != nullptr) {
                tensor.aliased_input = source;
            }
        }
        tensors.push_back(std::move(tensor));
    }
    return tensors;
}

// Checks the IO `engine` reports against the manifest entry's IO signature (check_engine_io:
// EngineIOError naming the tensor, the field, the observed and the expected value; InvalidArgument
// naming the field when the entry's io is not an IO signature). `path` is the entry's file, which
// messages name. Returns the engine's IO.
inline std::vector<TensorDescription> check_io(nvinfer1::ICudaEngine const& engine,
                                               ManifestEntry const& entry,
                                               std::filesystem::path const& path) {
    std::vector<TensorDescription> described = describe_io(engine, path);
    if (!entry.io) {
        throw InvalidArgument(entry.file_name + ": io is null: the entry records no IO signature");
    }
    check_engine_io(described, *entry.io, path);
    return described;
}

inline std::vector<TensorDescription> check_io(nvinfer1::ICudaEngine const& engine,
                                               DeployedEngine const& deployed) {
    return check_io(engine, deployed.entry(), deployed.path());
}

} // namespace tensoracle::deploy::tensorrt
