// The compatibility properties of a GPU as JSON: the form engine identities and the Python
// package's tensoracle.gpu.properties() record them.
#pragma once

#include "tensoracle/cuda/gpu_properties.hpp"

#include <nlohmann/json.hpp>

namespace tensoracle {

// {"name", "compute_capability": "X.Y", "memory_bus_width_bits", ...}: integers and strings only.
nlohmann::json to_json(GpuProperties const& properties);

} // namespace tensoracle
