// Binds the GPU property query: _core.gpu_properties() and _core.gpu_absent_reason().
#include "bindings.hpp"
#include "cuda/gpu_properties_json.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace tensoracle::bindings {
namespace {

nb::object to_python(nlohmann::json const& value) {
    if (value.is_string()) {
        return nb::str(value.get<std::string>().c_str());
    }
    if (value.is_boolean()) {
        return nb::bool_(value.get<bool>());
    }
    if (value.is_number_unsigned()) {
        return nb::int_(value.get<std::uint64_t>());
    }
    return nb::int_(value.get<std::int64_t>());
}

} // namespace

void bind_gpu(nb::module_& module) {
    module.def(
        "gpu_properties",
        []() -> nb::object {
            GpuQuery const query = query_gpu_properties();
            if (!query.properties) {
                return nb::none();
            }
            // Kept in a named variable: a range-for over to_json(...).items() would iterate a
            // destroyed temporary (only the proxy returned by items() is lifetime-extended).
            nlohmann::json const properties = to_json(*query.properties);
            nb::dict result;
            for (auto const& [key, value] : properties.items()) {
                result[key.c_str()] = to_python(value);
            }
            return result;
        },
        "Compatibility properties of the current context's GPU (else device 0), or None.");
    module.def(
        "gpu_absent_reason",
        []() -> std::optional<std::string> {
            GpuQuery query = query_gpu_properties();
            if (query.properties) {
                return std::nullopt;
            }
            return std::move(query.absent_reason);
        },
        "Why no GPU can be described (no driver, no device, a driver error), or None.");
}

} // namespace tensoracle::bindings
