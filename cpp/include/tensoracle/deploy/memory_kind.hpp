// Whether memory is the host's or a CUDA device's, as the CUDA driver itself tells: for a reader
// that hands bytes to TensorRT, which may ask for them in either (IStreamReaderV2::read).
//
// This header compiles as C++17.
#pragma once

namespace tensoracle::deploy {

enum class MemoryKind {
    host,   // pageable, pinned or managed host memory: the CPU may write it
    device, // a CUDA device's memory: only a CUDA copy reaches it
};

// The kind of the memory at `address`, by the driver's cuPointerGetAttribute (the driver loaded
// at run time, as the rest of tensoracle loads it; nothing links libcuda): device memory is
// device; memory the driver does not know (CUDA_ERROR_INVALID_VALUE: plain host memory) is host,
// and so is every address when no CUDA driver can be loaded, since no device memory can exist
// then. Asking the driver rather than CUDA's runtime keeps the answer right when the application's
// libcudart is another version than the one TensorRT uses. Throws tensoracle::Error naming the
// driver's error when it cannot tell.
MemoryKind memory_kind(void const* address);

} // namespace tensoracle::deploy
