// The IO signature an engine header or a manifest entry records, read into the tensors the
// execution contract and the IO comparison take. Private to the deploy library (its sources, the
// Python bindings and the tests).
#pragma once

#include "tensoracle/deploy/execution_contract.hpp"
#include "text/json_members.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tensoracle::deploy {

// The tensors of an IO signature as the saved header (and the manifest's entries[].io) records
// it: {"tensors": [{"name", "mode": "INPUT"|"OUTPUT", "dtype", "shape", "location", "format",
// "profile": {"min", "opt", "max"} (inputs)}, ...]}; a tensor without location or format has
// TensorRT's defaults, "DEVICE" and "LINEAR". Throws InvalidArgument naming the field
// (such as "deploy.json: entries[0].io.tensors[1].shape"), its value and what was expected.
std::vector<TensorDescription> io_from_json(nlohmann::json const& io, JsonPlace const& where);

// The same, the value named by a text that already holds its path ("deploy.json: entries[0].io").
inline std::vector<TensorDescription> io_from_json(nlohmann::json const& io,
                                                   std::string const& where) {
    return io_from_json(io, JsonPlace::within(where));
}

} // namespace tensoracle::deploy
