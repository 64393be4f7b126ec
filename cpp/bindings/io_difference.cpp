// Python binding of the one IO comparison (deploy/io_difference.hpp): the package describes the
// IO it holds as TensorDescription values and renders its own message from the difference.
#include "deploy/io_difference.hpp"

#include "bindings.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <tuple>

namespace nb = nanobind;

namespace tensoracle::bindings {

void bind_io_difference(nb::module_& module) {
    using deploy::Shape;
    using deploy::TensorDescription;
    using Profile = std::tuple<Shape, Shape, Shape>;
    nb::class_<TensorDescription>(module, "TensorDescription",
                                  "One IO tensor as an engine or a recorded IO signature "
                                  "describes it (TensorRT's enum names as texts).")
        .def(
            "__init__",
            [](TensorDescription* tensor, std::string name, bool is_input, std::string dtype,
               Shape shape, std::string location, std::string format,
               std::optional<Profile> profile) {
                auto* made = new (tensor) TensorDescription();
                made->name = std::move(name);
                made->is_input = is_input;
                made->dtype = std::move(dtype);
                made->shape = std::move(shape);
                made->location = std::move(location);
                made->format = std::move(format);
                if (profile) {
                    auto& [low, optimum, high] = *profile;
                    made->profile =
                        deploy::ShapeProfile{std::move(low), std::move(optimum), std::move(high)};
                }
            },
            nb::kw_only(), nb::arg("name"), nb::arg("is_input"), nb::arg("dtype"), nb::arg("shape"),
            nb::arg("location"), nb::arg("format"), nb::arg("profile").none() = nb::none(),
            "`location` and `format` empty where not stated; `profile` (min, opt, max) for an "
            "input whose profile 0 is recorded.")
        .def_ro("name", &TensorDescription::name)
        .def_ro("is_input", &TensorDescription::is_input)
        .def_ro("dtype", &TensorDescription::dtype)
        .def_ro("shape", &TensorDescription::shape)
        .def_ro("location", &TensorDescription::location)
        .def_ro("format", &TensorDescription::format);
    nb::class_<deploy::IoDifference>(module, "IoDifference",
                                     "Where two IO descriptions differ first.")
        .def_ro("tensor", &deploy::IoDifference::tensor)
        .def_ro("field", &deploy::IoDifference::field,
                "name, mode, dtype, shape, location, "
                "format or profile")
        .def_ro("observed", &deploy::IoDifference::observed)
        .def_ro("expected", &deploy::IoDifference::expected);
    module.def(
        "first_io_difference",
        [](std::vector<TensorDescription> const& observed,
           std::vector<TensorDescription> const& expected, bool placement_where_stated,
           bool profiles_last) {
            return deploy::first_io_difference(
                observed, expected,
                {.placement_where_stated = placement_where_stated, .profiles_last = profiles_last});
        },
        nb::arg("observed"), nb::arg("expected"), nb::kw_only(),
        nb::arg("placement_where_stated") = false, nb::arg("profiles_last") = false,
        "The first difference of `observed` from `expected` (tensoracle::deploy::"
        "first_io_difference: names, then each expected tensor's mode, dtype, shape, location, "
        "format and input profile; location and format only where `expected` states them when "
        "`placement_where_stated`; profiles after all other fields when `profiles_last`; a fixed "
        "input without a reported profile matches a profile equal to its shape), or None.");
    module.def("io_field", &deploy::io_field, nb::arg("difference"), nb::arg("expected"),
               "Where `difference` lies in an IO signature whose tensors are `expected`, as "
               "refusals name it: \"io.tensors[1].dtype\", or \"io.tensors\" for a tensor only "
               "the observed IO has (tensoracle::deploy::io_field).");
}

} // namespace tensoracle::bindings
