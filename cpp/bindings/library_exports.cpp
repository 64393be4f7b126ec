// Binds the reading of a plugin library's exported functions (no loading; see
// cubin/library_exports.hpp).
#include "cubin/library_exports.hpp"

#include "bindings.hpp"
#include "buffer_view.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;

namespace tensoracle::bindings {

void bind_library_exports(nb::module_& module) {
    module.def(
        "elf_exported_functions",
        [](nb::handle library, std::string const& name) {
            BufferView const view(library, "library");
            nb::gil_scoped_release released;
            return elf_exported_functions(view.bytes(), name);
        },
        nb::arg("library"), nb::arg("name"),
        "The functions an ELF shared library (its bytes) exports, read without loading it. "
        "Raises ValueError naming `name` for bytes that are not an ELF shared object.");
}

} // namespace tensoracle::bindings
