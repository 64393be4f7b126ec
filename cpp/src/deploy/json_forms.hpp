// The deploy library's types read from the JSON that engine headers, manifests and
// tensoracle.gpu.properties() record. Private to the library (its sources, the Python bindings and
// the tests): the public deploy headers include no third-party header, so an application built
// with any nlohmann_json, or none, links the library.
#pragma once

#include "tensoracle/deploy/execution_contract.hpp"
#include "tensoracle/deploy/selection.hpp"
#include "text/json_members.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tensoracle::deploy {

// `where` names the value in messages, such as "deploy.json: entries[0].conditions". Each throws
// InvalidArgument naming the field and its value when a field the library reads is mistyped.
EntryConditions conditions_from_json(nlohmann::json const& conditions, JsonPlace const& where);
DeviceDescription device_from_json(nlohmann::json const& device, JsonPlace const& where);

// The same, the value named by a text that already holds its path ("deploy.json: entries[0].io",
// "the GPU description"): its members are written after it with '.'.
inline EntryConditions conditions_from_json(nlohmann::json const& conditions,
                                            std::string const& where) {
    return conditions_from_json(conditions, JsonPlace::within(where));
}
inline DeviceDescription device_from_json(nlohmann::json const& device, std::string const& where) {
    return device_from_json(device, JsonPlace::within(where));
}

} // namespace tensoracle::deploy
