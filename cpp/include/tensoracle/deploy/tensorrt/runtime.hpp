// TensorRT's runtime with the logger it reports to, remembering the errors TensorRT logs.
//
// One piece of the TensorRT adapter, tensoracle/deploy/tensorrt.hpp (which applications
// include, and whose comment gives the whole path): header-only, compiled as C++17 against the
// application's TensorRT 11 headers.
#pragma once

#include "tensoracle/deploy/tensorrt/logger.hpp"
#include "tensoracle/errors.hpp"

#include <NvInferRuntime.h>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tensoracle::deploy::tensorrt {

// How a Runtime gets TensorRT's runtime: nvinfer1::createInferRuntime by default. An application
// that loads TensorRT itself (dlopen) passes a function that calls its own.
using RuntimeCreator = std::function<nvinfer1::IRuntime*(nvinfer1::ILogger&)>;

// What a Runtime remembers of the errors TensorRT logged since they were last taken: the first
// kRememberedErrors messages, each cut to kRememberedErrorBytes, and how many more there were,
// so that a long-running server that never takes them holds a few kilobytes.
inline constexpr std::size_t kRememberedErrors = 16;
inline constexpr std::size_t kRememberedErrorBytes = 2048;

// TensorRT's runtime together with what it depends on, shared by everything made from it. TensorRT
// requires its logger to outlive the runtime and every object the runtime creates, and the
// runtime to outlive its engines: a Runtime owns the logger (held by shared_ptr), and each engine
// deserialize(std::shared_ptr<Runtime>, ...) returns holds the Runtime, so that no order in which
// an application lets go of them is unsafe.
//
// createInferRuntime can return a runtime although it logged an error, such as a CUDA driver too
// old for the CUDA TensorRT was built with (cudaError 35) or no usable GPU, and deserializing with
// that runtime then crashes the process. Every message goes to the application's logger, and those
// logged as errors are remembered, so that create() fails instead (tensoracle::TensorRtError
// quoting them) and a refused deserialization names TensorRT's reason. (Seen with the TensorRT
// 11.4 lean runtime on a machine without a CUDA driver: the runtime it returned crashed in
// deserializeCudaEngine and in its destructor.)
class Runtime {
    struct Passkey {}; // only create() makes one

public:
    // TensorRT's runtime, reporting to `logger` (null: a StderrLogger), made by `creator` (null:
    // createInferRuntime). Throws TensorRtError quoting TensorRT when it returns none or logs an
    // error while creating it. Such a runtime is never destroyed (the one TensorRT 11.4 returns
    // after such an error crashes when deleted as well as when used) and neither is the logger it
    // reports to: both are left to the process, so that a later message from it reaches a live
    // logger.
    static std::shared_ptr<Runtime> create(std::shared_ptr<nvinfer1::ILogger> logger = nullptr,
                                           RuntimeCreator const& creator = nullptr) {
        if (!logger) {
            logger = std::make_shared<StderrLogger>();
        }
        auto made = std::make_shared<Runtime>(Passkey{}, std::move(logger));
        nvinfer1::IRuntime* const runtime =
            creator ? creator(*made->forwarder_) : nvinfer1::createInferRuntime(*made->forwarder_);
        std::string const errors = made->take_errors();
        if (runtime == nullptr || !errors.empty()) {
            if (runtime != nullptr) {
                // Kept with the runtime for the rest of the process: it may still log through it.
                auto kept = std::make_unique<std::shared_ptr<Forwarder>>(made->forwarder_);
                (void)kept.release(); // NOLINT(bugprone-unused-return-value): left on purpose
            }
            throw TensorRtError(
                "TensorRT could not create a usable runtime" +
                (errors.empty() ? std::string(" (it returned none)") : ": " + errors));
        }
        made->runtime_.reset(runtime);
        return made;
    }

    Runtime(Passkey /*only create()*/, std::shared_ptr<nvinfer1::ILogger> logger)
        : forwarder_(std::make_shared<Forwarder>(std::move(logger))) {}
    Runtime(Runtime const&) = delete;
    Runtime& operator=(Runtime const&) = delete;
    Runtime(Runtime&&) = delete;
    Runtime& operator=(Runtime&&) = delete;
    ~Runtime() = default; // the runtime first (declared last), then the logger

    nvinfer1::IRuntime& get() noexcept { return *runtime_; }
    std::shared_ptr<nvinfer1::ILogger> const& logger() const noexcept {
        return forwarder_->target();
    }

    // The errors TensorRT logged since the last call, joined by "; " (empty: none), with how many
    // more there were beyond the kRememberedErrors remembered.
    std::string take_errors() { return forwarder_->take(); }

private:
    class Forwarder final : public nvinfer1::ILogger {
    public:
        explicit Forwarder(std::shared_ptr<nvinfer1::ILogger> target)
            : target_(std::move(target)) {}
        void log(Severity severity, char const* message) noexcept override {
            target_->log(severity, message);
            if (severity > Severity::kERROR || message == nullptr) {
                return;
            }
            try {
                std::lock_guard<std::mutex> const hold(mutex_);
                if (errors_.size() < kRememberedErrors) {
                    std::string_view const text(message);
                    errors_.emplace_back(text.substr(0, kRememberedErrorBytes));
                    if (text.size() > kRememberedErrorBytes) {
                        errors_.back() += "...";
                    }
                } else {
                    ++more_;
                }
            } catch (...) { // NOLINT(bugprone-empty-catch): a message lost, never an exception
            }
        }
        std::string take() {
            std::lock_guard<std::mutex> const hold(mutex_);
            std::string joined;
            for (std::string const& error : errors_) {
                joined += (joined.empty() ? "" : "; ") + error;
            }
            if (more_ > 0) {
                joined += "; and " + std::to_string(more_) + " more";
            }
            errors_.clear();
            more_ = 0;
            return joined;
        }
        std::shared_ptr<nvinfer1::ILogger> const& target() const noexcept { return target_; }

    private:
        std::shared_ptr<nvinfer1::ILogger> target_;
        std::mutex mutex_;
        std::vector<std::string> errors_;
        std::size_t more_ = 0;
    };

    std::shared_ptr<Forwarder> forwarder_;
    std::unique_ptr<nvinfer1::IRuntime> runtime_;
};

} // namespace tensoracle::deploy::tensorrt
