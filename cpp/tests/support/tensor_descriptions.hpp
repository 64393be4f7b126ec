// Described tensors for the deploy tests that need no engine: an input (FLOAT, with a profile
// where given) and an output (HALF), LINEAR and on the device.
#pragma once

#include "tensoracle/deploy/execution_contract.hpp"

#include <optional>
#include <string>
#include <utility>

namespace tensoracle::deploy::test_tensors {

inline TensorDescription input(std::string name, Shape shape,
                               std::optional<ShapeProfile> profile = {}) {
    TensorDescription tensor;
    tensor.name = std::move(name);
    tensor.is_input = true;
    tensor.dtype = "FLOAT";
    tensor.shape = std::move(shape);
    tensor.profile = std::move(profile);
    return tensor;
}

inline TensorDescription output(std::string name, Shape shape) {
    TensorDescription tensor;
    tensor.name = std::move(name);
    tensor.dtype = "HALF";
    tensor.shape = std::move(shape);
    return tensor;
}

} // namespace tensoracle::deploy::test_tensors
