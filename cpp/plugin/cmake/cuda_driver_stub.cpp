// A link-time stand-in for the CUDA driver (libcuda.so, soname libcuda.so.1), built by
// TensoracleCuda.cmake on Linux when no driver link library is found (machines without an NVIDIA
// driver whose CUDA headers come without CUDA's own stubs). A plugin linked against it records
// DT_NEEDED libcuda.so.1 and runs against the real driver; called, every entry point here
// returns CUDA_ERROR_STUB_LIBRARY. cuda.h is included so that each name gets the versioned
// symbol (cuMemAlloc -> cuMemAlloc_v2, ...) the driver exports and plugin code refers to.
#include <cuda.h>

#define TENSORACLE_STUB(name, parameters)                                                          \
    extern "C" __attribute__((visibility("default"))) CUresult CUDAAPI name parameters {           \
        return CUDA_ERROR_STUB_LIBRARY;                                                            \
    }

// Initialisation, devices and contexts.
TENSORACLE_STUB(cuInit, (unsigned int))
TENSORACLE_STUB(cuDriverGetVersion, (int*))
TENSORACLE_STUB(cuDeviceGet, (CUdevice*, int))
TENSORACLE_STUB(cuDeviceGetCount, (int*))
TENSORACLE_STUB(cuDeviceGetName, (char*, int, CUdevice))
TENSORACLE_STUB(cuDeviceGetAttribute, (int*, CUdevice_attribute, CUdevice))
TENSORACLE_STUB(cuDeviceTotalMem, (size_t*, CUdevice))
TENSORACLE_STUB(cuDevicePrimaryCtxRetain, (CUcontext*, CUdevice))
TENSORACLE_STUB(cuDevicePrimaryCtxRelease, (CUdevice))
TENSORACLE_STUB(cuCtxDestroy, (CUcontext))
TENSORACLE_STUB(cuCtxGetCurrent, (CUcontext*))
TENSORACLE_STUB(cuCtxSetCurrent, (CUcontext))
TENSORACLE_STUB(cuCtxPushCurrent, (CUcontext))
TENSORACLE_STUB(cuCtxPopCurrent, (CUcontext*))
TENSORACLE_STUB(cuCtxGetDevice, (CUdevice*))
TENSORACLE_STUB(cuCtxGetId, (CUcontext, unsigned long long*))
TENSORACLE_STUB(cuCtxSynchronize, (void))

// Modules, functions and launches.
TENSORACLE_STUB(cuModuleLoadData, (CUmodule*, void const*))
TENSORACLE_STUB(cuModuleUnload, (CUmodule))
TENSORACLE_STUB(cuModuleGetFunction, (CUfunction*, CUmodule, char const*))
TENSORACLE_STUB(cuFuncGetAttribute, (int*, CUfunction_attribute, CUfunction))
TENSORACLE_STUB(cuFuncSetAttribute, (CUfunction, CUfunction_attribute, int))
TENSORACLE_STUB(cuLaunchKernel,
                (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
                 unsigned int, unsigned int, CUstream, void**, void**))

// Memory.
TENSORACLE_STUB(cuMemAlloc, (CUdeviceptr*, size_t))
TENSORACLE_STUB(cuMemFree, (CUdeviceptr))
TENSORACLE_STUB(cuMemGetInfo, (size_t*, size_t*))
TENSORACLE_STUB(cuMemcpyHtoD, (CUdeviceptr, void const*, size_t))
TENSORACLE_STUB(cuMemcpyDtoH, (void*, CUdeviceptr, size_t))
TENSORACLE_STUB(cuMemcpyHtoDAsync, (CUdeviceptr, void const*, size_t, CUstream))
TENSORACLE_STUB(cuMemcpyDtoHAsync, (void*, CUdeviceptr, size_t, CUstream))
TENSORACLE_STUB(cuMemsetD8, (CUdeviceptr, unsigned char, size_t))
TENSORACLE_STUB(cuMemsetD8Async, (CUdeviceptr, unsigned char, size_t, CUstream))
TENSORACLE_STUB(cuPointerGetAttribute, (void*, CUpointer_attribute, CUdeviceptr))

// Streams, events and errors.
TENSORACLE_STUB(cuStreamCreate, (CUstream*, unsigned int))
TENSORACLE_STUB(cuStreamDestroy, (CUstream))
TENSORACLE_STUB(cuStreamSynchronize, (CUstream))
TENSORACLE_STUB(cuEventCreate, (CUevent*, unsigned int))
TENSORACLE_STUB(cuEventRecord, (CUevent, CUstream))
TENSORACLE_STUB(cuEventSynchronize, (CUevent))
TENSORACLE_STUB(cuEventDestroy, (CUevent))
TENSORACLE_STUB(cuEventElapsedTime, (float*, CUevent, CUevent))
TENSORACLE_STUB(cuGetErrorName, (CUresult, char const**))
TENSORACLE_STUB(cuGetErrorString, (CUresult, char const**))
