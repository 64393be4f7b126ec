// Kept for existing code that includes this name (docs/compatibility.md): the header is now
// tensoracle/cubin/runtime.hpp.
#pragma once

#include "tensoracle/cubin/runtime.hpp"
