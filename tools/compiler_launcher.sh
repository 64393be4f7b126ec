#!/bin/sh
# The compiler launcher of make test's C++ builds (CMAKE_<LANG>_COMPILER_LAUNCHER): ccache where
# it is installed (make apt installs it; the Makefile sets CCACHE_DIR), else the compiler itself,
# so that a build configured before ccache was installed, or on a machine without it, still works.
if command -v ccache >/dev/null 2>&1; then
    exec ccache "$@"
fi
exec "$@"
