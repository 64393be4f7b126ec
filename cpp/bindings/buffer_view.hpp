// A read-only view of a Python bytes-like object for the bindings (no copy).
#pragma once

#include <Python.h>
#include <cstddef>
#include <nanobind/nanobind.h>
#include <span>
#include <string>

namespace tensoracle::bindings {

// A contiguous, read-only view of any object exporting the buffer protocol (bytes, bytearray,
// memoryview, numpy arrays, mmap...), released with the object. Holding the export also keeps a
// bytearray from being resized while the GIL is released.
class BufferView {
public:
    explicit BufferView(nanobind::handle object, std::string const& what = "plan") {
        if (PyObject_GetBuffer(object.ptr(), &buffer_, PyBUF_SIMPLE) != 0) {
            PyErr_Clear();
            throw nanobind::type_error(
                (what + " must be a contiguous bytes-like object (buffer protocol)").c_str());
        }
    }
    BufferView(BufferView const&) = delete;
    BufferView& operator=(BufferView const&) = delete;
    ~BufferView() { PyBuffer_Release(&buffer_); }
    std::span<std::byte const> bytes() const noexcept {
        return {static_cast<std::byte const*>(buffer_.buf), static_cast<std::size_t>(buffer_.len)};
    }

private:
    Py_buffer buffer_{};
};

} // namespace tensoracle::bindings
