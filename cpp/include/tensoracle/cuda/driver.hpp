// The CUDA driver API's handle types, as the cubin runtime (tensoracle/cubin/runtime.hpp) takes
// them: declared here, not taken from cuda.h, so that nothing links against libcuda (the core
// loads it at run time from libcuda.so.1) and everything builds and runs its non-GPU tests on
// machines without a driver.
#pragma once

#include <cstdint>

// The driver's opaque handle types, declared at global scope as cuda.h declares them, so that
// code which also includes cuda.h (a plugin, say) sees one type: cuda::Stream is CUstream.
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;

namespace tensoracle::cuda {

using Result = int; // CUresult; 0 is CUDA_SUCCESS
using Device = int;
using Context = ::CUctx_st*;
using Module = ::CUmod_st*;
using Function = ::CUfunc_st*;
using Stream = ::CUstream_st*;
using DevicePtr = std::uint64_t;

} // namespace tensoracle::cuda
