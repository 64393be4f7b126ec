// Translates the C++ error taxonomy into the Python exception classes of tensoracle.errors.
#include "tensoracle/errors.hpp"

#include "bindings.hpp"
#include "text/utf8_text.hpp"

#include <Python.h>
#include <exception>

namespace nb = nanobind;

namespace tensoracle::bindings {
namespace {

// The Python classes live in tensoracle/errors.py so that they are documented and typed there;
// the module is imported on first use only.
// Messages quote file names, JSON keys and parser excerpts that may hold any bytes: the bytes that
// are not UTF-8 are shown as \xNN, so that raising never fails with a UnicodeDecodeError. The
// refusal's fields are escaped the same way.

// Sets `name` on the exception instance to `text`, or to None where the field is empty. False,
// with the Python error set, where that fails.
bool set_field(PyObject* error, char const* name, std::string const& text) {
    PyObject* value = nullptr;
    if (text.empty()) {
        value = Py_NewRef(Py_None);
    } else {
        std::string const escaped = escape_invalid_utf8(text);
        value =
            PyUnicode_FromStringAndSize(escaped.data(), static_cast<Py_ssize_t>(escaped.size()));
    }
    if (value == nullptr) {
        return false;
    }
    int const status = PyObject_SetAttrString(error, name, value);
    Py_DECREF(value);
    return status == 0;
}

// Raises the exception `error` (a new reference, or null with the Python error set) as its own
// type, with the refusal's fields as the attributes path, field, observed, expected and remedy.
void raise_instance(PyObject* error, Refusal const& refusal) {
    if (error == nullptr) {
        return;
    }
    if (set_field(error, "path", refusal.subject) && set_field(error, "field", refusal.field) &&
        set_field(error, "observed", refusal.observed) &&
        set_field(error, "expected", refusal.expected) &&
        set_field(error, "remedy", refusal.remedy)) {
        PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error)), error);
    }
    Py_DECREF(error);
}

// Raises `type(message)` carrying the refusal's fields.
void set_error(PyObject* type, Error const& error) {
    std::string const text = escape_invalid_utf8(error.what());
    raise_instance(PyObject_CallFunction(type, "s", text.c_str()), error.refusal());
}

void raise_python(char const* class_name, Error const& error) {
    nb::object errors = nb::module_::import_("tensoracle.errors");
    nb::object type = errors.attr(class_name);
    set_error(type.ptr(), error);
}

void translate(std::exception_ptr const& error, void* /*payload*/) {
    try {
        std::rethrow_exception(error);
    } catch (MissingCubinError const& e) {
        raise_python("MissingCubinError", e);
    } catch (CorruptCubinError const& e) {
        raise_python("CorruptCubinError", e);
    } catch (CubinArchitectureError const& e) {
        raise_python("CubinArchitectureError", e);
    } catch (PluginBundleMismatchError const& e) {
        raise_python("PluginBundleMismatchError", e);
    } catch (BundleAbiError const& e) {
        raise_python("BundleAbiError", e);
    } catch (BundleError const& e) {
        raise_python("BundleError", e);
    } catch (CorruptEngineError const& e) {
        raise_python("CorruptEngineError", e);
    } catch (EngineConditionError const& e) {
        raise_python("EngineConditionError", e);
    } catch (UntrustedEngineError const& e) {
        raise_python("UntrustedEngineError", e);
    } catch (EngineKeyError const& e) {
        raise_python("EngineKeyError", e);
    } catch (EngineIOError const& e) {
        raise_python("EngineIOError", e);
    } catch (EngineCacheError const& e) {
        raise_python("EngineCacheError", e);
    } catch (EngineTargetError const& e) {
        raise_python("EngineTargetError", e);
    } catch (InvalidArgument const& e) {
        set_error(PyExc_ValueError, e);
    } catch (FileError const& e) {
        if (e.error_number() == 0) {
            set_error(PyExc_OSError, e);
            return;
        }
        // OSError(errno, text) is created as the errno's subclass (FileNotFoundError, ...);
        // its str() is "[Errno N] text".
        std::string const text = escape_invalid_utf8(e.what());
        raise_instance(PyObject_CallFunction(PyExc_OSError, "is", e.error_number(), text.c_str()),
                       e.refusal());
    }
}

} // namespace

void bind_errors(nb::module_& /*module*/) {
    nb::register_exception_translator(translate);
}

} // namespace tensoracle::bindings
