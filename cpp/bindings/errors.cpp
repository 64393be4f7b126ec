// Translates the C++ error taxonomy into the Python exception classes of tensoracle.errors.
#include "tensoracle/errors.hpp"

#include "bindings.hpp"
#include "tensoracle/text/utf8_text.hpp"

#include <Python.h>
#include <exception>

namespace nb = nanobind;

namespace tensoracle::bindings {
namespace {

// The Python classes live in tensoracle/errors.py so that they are documented and typed there;
// the module is imported on first use only.
// Messages quote file names, JSON keys and parser excerpts that may hold any bytes: the bytes that
// are not UTF-8 are shown as \xNN, so that raising never fails with a UnicodeDecodeError.
void set_error(PyObject* type, char const* message) {
    std::string const text = escape_invalid_utf8(message);
    PyErr_SetString(type, text.c_str());
}

void raise_python(char const* class_name, char const* message) {
    nb::object errors = nb::module_::import_("tensoracle.errors");
    nb::object type = errors.attr(class_name);
    set_error(type.ptr(), message);
}

void translate(std::exception_ptr const& error, void* /*payload*/) {
    try {
        std::rethrow_exception(error);
    } catch (MissingCubinError const& e) {
        raise_python("MissingCubinError", e.what());
    } catch (CorruptCubinError const& e) {
        raise_python("CorruptCubinError", e.what());
    } catch (CubinArchitectureError const& e) {
        raise_python("CubinArchitectureError", e.what());
    } catch (PluginBundleMismatchError const& e) {
        raise_python("PluginBundleMismatchError", e.what());
    } catch (BundleAbiError const& e) {
        raise_python("BundleAbiError", e.what());
    } catch (BundleError const& e) {
        raise_python("BundleError", e.what());
    } catch (CorruptEngineError const& e) {
        raise_python("CorruptEngineError", e.what());
    } catch (EngineConditionError const& e) {
        raise_python("EngineConditionError", e.what());
    } catch (UntrustedEngineError const& e) {
        raise_python("UntrustedEngineError", e.what());
    } catch (EngineIOError const& e) {
        raise_python("EngineIOError", e.what());
    } catch (EngineCacheError const& e) {
        raise_python("EngineCacheError", e.what());
    } catch (EngineTargetError const& e) {
        raise_python("EngineTargetError", e.what());
    } catch (InvalidArgument const& e) {
        set_error(PyExc_ValueError, e.what());
    } catch (FileError const& e) {
        if (e.error_number() == 0) {
            set_error(PyExc_OSError, e.what());
            return;
        }
        // OSError(errno, text) is created as the errno's subclass (FileNotFoundError, ...);
        // its str() is "[Errno N] text".
        std::string const text = escape_invalid_utf8(e.what());
        PyObject* error =
            PyObject_CallFunction(PyExc_OSError, "is", e.error_number(), text.c_str());
        if (error != nullptr) {
            PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error)), error);
            Py_DECREF(error);
        }
    }
}

} // namespace

void bind_errors(nb::module_& /*module*/) {
    nb::register_exception_translator(translate);
}

} // namespace tensoracle::bindings
