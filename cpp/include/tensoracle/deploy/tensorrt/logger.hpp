// The logger of a Runtime made without one: TensorRT's messages on stderr.
//
// One piece of the TensorRT adapter, tensoracle/deploy/tensorrt.hpp (which applications
// include, and whose comment gives the whole path): header-only, compiled as C++17 against the
// application's TensorRT 11 headers.
#pragma once

#include <NvInferRuntime.h>
#include <cstdio>
#include <string>

namespace tensoracle::deploy::tensorrt {

// TensorRT's messages of `reported` severity or worse (warnings and errors by default) on stderr,
// each on a line of its own after "TensorRT: ": the logger of a Runtime made without one.
class StderrLogger final : public nvinfer1::ILogger {
public:
    explicit StderrLogger(Severity reported = Severity::kWARNING) noexcept : reported_(reported) {}
    void log(Severity severity, char const* message) noexcept override {
        if (severity <= reported_ && message != nullptr) {
            std::string line = "TensorRT: ";
            try {
                line += message;
                line += '\n';
            } catch (...) { // NOLINT(bugprone-empty-catch): a message lost, never an exception
                return;
            }
            (void)std::fwrite(line.data(), 1, line.size(), stderr);
        }
    }

private:
    Severity reported_;
};

} // namespace tensoracle::deploy::tensorrt
