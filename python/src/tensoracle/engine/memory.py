"""Giving back to the operating system the heap a build has freed.

A TensorRT build allocates hundreds of megabytes on the C heap and frees them when it ends, but
glibc keeps freed memory in its arenas: a long-lived process that built an engine would keep the
builder's peak resident. After every build (succeeded or failed) tensoracle calls glibc's
``malloc_trim(0)``, which returns the free pages to the system. Where there is no glibc (macOS,
Windows, musl) there is nothing to call, and nothing changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any


@functools.cache
def _malloc_trim() -> Any:
    try:
        library = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = library.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release_freed_heap() -> bool:
    """Returns the freed heap to the operating system; False where the C library cannot."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
