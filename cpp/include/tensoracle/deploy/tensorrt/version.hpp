// The TensorRT version: the headers' the application was compiled with, and the library's it
// runs engines with, as the backend selection compares with a manifest entry's.
//
// One piece of the TensorRT adapter, tensoracle/deploy/tensorrt.hpp (which applications
// include, and whose comment gives the whole path): header-only, compiled as C++17 against the
// application's TensorRT 11 headers.
#pragma once

#include "tensoracle/deploy/selection.hpp"
#include "tensoracle/errors.hpp"

#include <NvInferRuntime.h>
#include <cstdint>
#include <string>

namespace tensoracle::deploy::tensorrt {

// What getInferLibVersion() returns for the headers compiled against: MAJOR * 10000 + MINOR * 100
// + PATCH (NvInferRuntimeBase.h), without the build number.
constexpr std::int32_t header_library_version() noexcept {
    return NV_TENSORRT_MAJOR * 10000 + NV_TENSORRT_MINOR * 100 + NV_TENSORRT_PATCH;
}

// The headers' version as manifests record it, such as "11.1.0.106".
inline std::string header_version_text() {
    return std::to_string(NV_TENSORRT_MAJOR) + "." + std::to_string(NV_TENSORRT_MINOR) + "." +
           std::to_string(NV_TENSORRT_PATCH) + "." + std::to_string(NV_TENSORRT_BUILD);
}

// The backend for select_entry from the version of the TensorRT library loaded (as
// getInferLibMajorVersion() and its siblings report it): "tensorrt" and "MAJOR.MINOR.PATCH.BUILD",
// as manifests record the version that built an entry, such as "11.4.0.106". An engine runs only
// on the version that built it, so that version is the library's, not the headers'. TensorRT
// keeps its ABI within a major version: a library of another major version than the headers the
// application was compiled with is refused (tensoracle::Error naming both).
inline RuntimeBackend backend_for_library(std::int32_t major, std::int32_t minor,
                                          std::int32_t patch, std::int32_t build) {
    std::string const library = std::to_string(major) + "." + std::to_string(minor) + "." +
                                std::to_string(patch) + "." + std::to_string(build);
    if (major != NV_TENSORRT_MAJOR) {
        throw Error("the TensorRT library loaded is version " + library +
                    ", but the application was compiled with the headers of TensorRT " +
                    header_version_text() + ": run it with a TensorRT " +
                    std::to_string(NV_TENSORRT_MAJOR) + " library");
    }
    return RuntimeBackend{kTensorRt, library};
}

// The TensorRT this application runs engines with: the version of the library loaded.
inline RuntimeBackend runtime_backend() {
    return backend_for_library(getInferLibMajorVersion(), getInferLibMinorVersion(),
                               getInferLibPatchVersion(), getInferLibBuildVersion());
}

} // namespace tensoracle::deploy::tensorrt
