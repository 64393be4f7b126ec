// The plugin libraries an engine needs, loaded from their verified copies into its runtime.
//
// One piece of the TensorRT adapter, tensoracle/deploy/tensorrt.hpp (which applications
// include, and whose comment gives the whole path): header-only, compiled as C++17 against the
// application's TensorRT 11 headers.
#pragma once

#include "tensoracle/deploy/plugin_library.hpp"
#include "tensoracle/deploy/tensorrt/runtime.hpp"
#include "tensoracle/errors.hpp"

#include <NvInferRuntime.h>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tensoracle::deploy::tensorrt {

// The plugin libraries an engine needs, loaded into its runtime's registry: deregistered, and
// their in-memory copies released, when the last engine holding them is destroyed.
class LoadedPlugins {
public:
    // Loads each library into `runtime`'s plugin registry (IPluginRegistry::loadLibrary of its
    // verified copy). TensorRtError naming the library when TensorRT refuses one; those loaded
    // before it are deregistered.
    LoadedPlugins(std::shared_ptr<Runtime> runtime, std::vector<VerifiedPluginLibrary> libraries)
        : runtime_(std::move(runtime)), libraries_(std::move(libraries)) {
        nvinfer1::IPluginRegistry& registry = runtime_->get().getPluginRegistry();
        (void)runtime_->take_errors();
        for (VerifiedPluginLibrary const& library : libraries_) {
            nvinfer1::IPluginRegistry::PluginLibraryHandle const handle =
                registry.loadLibrary(library.loader_path().c_str());
            if (handle == nullptr) {
                std::string const errors = runtime_->take_errors();
                release();
                throw TensorRtError("TensorRT could not load plugin library '" +
                                    library.path().string() + "' (SHA-256 " + library.sha256() +
                                    ", verified)" + (errors.empty() ? "" : ": " + errors));
            }
            handles_.push_back(handle);
        }
    }
    LoadedPlugins(LoadedPlugins const&) = delete;
    LoadedPlugins& operator=(LoadedPlugins const&) = delete;
    LoadedPlugins(LoadedPlugins&&) = delete;
    LoadedPlugins& operator=(LoadedPlugins&&) = delete;
    ~LoadedPlugins() { release(); }

    std::vector<VerifiedPluginLibrary> const& libraries() const noexcept { return libraries_; }

private:
    void release() noexcept {
        nvinfer1::IPluginRegistry& registry = runtime_->get().getPluginRegistry();
        while (!handles_.empty()) {
            registry.deregisterLibrary(handles_.back());
            handles_.pop_back();
        }
    }

    std::shared_ptr<Runtime> runtime_;
    std::vector<VerifiedPluginLibrary> libraries_;
    std::vector<nvinfer1::IPluginRegistry::PluginLibraryHandle> handles_;
};

} // namespace tensoracle::deploy::tensorrt
