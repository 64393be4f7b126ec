// The verified plan of a deployed engine as TensorRT's stream reader, each chunk checked as
// TensorRT reads it.
//
// One piece of the TensorRT adapter, tensoracle/deploy/tensorrt.hpp (which applications
// include, and whose comment gives the whole path): header-only, compiled as C++17 against the
// application's TensorRT 11 headers.
#pragma once

#include "tensoracle/deploy/deployed_engine.hpp"
#include "tensoracle/deploy/memory_kind.hpp"
#include "tensoracle/deploy/plan_reader.hpp"
#include "tensoracle/errors.hpp"

#include <NvInferRuntime.h>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <string>

namespace tensoracle::deploy::tensorrt {

// TensorRT's stream reader (IStreamReaderV2, which deserializeCudaEngine reads a plan from) over
// a deployed engine's verified plan: every read hands TensorRT bytes only once the chunk they lie
// in was checked against the verified header (PlanReader): into host memory directly, into
// device memory (as the CUDA driver tells: memory_kind) with cudaMemcpyAsync on TensorRT's stream
// from the reader's chunk, the stream synchronized after each copy, before the chunk is refilled
// (or zeroed) for the next. A refused chunk, or a failed copy, ends the read
// with -1 (TensorRT's unrecoverable error), and failure() holds why. For an engine opened whole
// it reads from the verified copy. `deployed` must outlive the stream; use it from one thread.
class VerifiedPlanStream final : public nvinfer1::IStreamReaderV2 {
public:
    explicit VerifiedPlanStream(DeployedEngine const& deployed)
        : reader_(deployed), path_(deployed.path()) {}

    std::int64_t read(void* destination, std::int64_t nbBytes,
                      cudaStream_t stream) noexcept override {
        if (nbBytes < 0 || (destination == nullptr && nbBytes > 0)) {
            return -1;
        }
        try {
            auto* const into = static_cast<std::byte*>(destination);
            auto const wanted = static_cast<std::size_t>(nbBytes);
            std::size_t copied = 0;
            if (is_device_memory(destination, path_)) {
                while (copied < wanted) {
                    std::size_t available = 0;
                    std::byte const* const from = reader_.checked_at(position_ + copied, available);
                    if (available == 0) {
                        break;
                    }
                    std::size_t const take = std::min(available, wanted - copied);
                    cudaError_t const copy =
                        cudaMemcpyAsync(into + copied, from, take, cudaMemcpyDefault, stream);
                    if (copy != cudaSuccess) {
                        throw TensorRtError(
                            std::string("copying the verified plan of '") + path_.string() +
                            "' to device memory failed: " + cudaGetErrorString(copy));
                    }
                    // The reader's chunk is refilled (or zeroed, if the next chunk is
                    // refused) by the next checked_at: the copy out of it ends first
                    // (cudaMemcpyAsync from pageable memory has usually taken the bytes when it
                    // returns, but not on every system).
                    cudaError_t const done = cudaStreamSynchronize(stream);
                    if (done != cudaSuccess) {
                        throw TensorRtError(
                            std::string("copying the verified plan of '") + path_.string() +
                            "' to device memory failed: " + cudaGetErrorString(done));
                    }
                    copied += take;
                }
            } else {
                copied = reader_.read(position_, into, wanted);
            }
            position_ += copied;
            return static_cast<std::int64_t>(copied);
        } catch (...) {
            failure_ = std::current_exception();
            return -1;
        }
    }

    bool seek(std::int64_t offset, nvinfer1::SeekPosition where) noexcept override {
        SeekFrom from = SeekFrom::start;
        if (where == nvinfer1::SeekPosition::kCUR) {
            from = SeekFrom::current;
        } else if (where == nvinfer1::SeekPosition::kEND) {
            from = SeekFrom::end;
        } else if (where != nvinfer1::SeekPosition::kSET) {
            return false;
        }
        std::optional<std::uint64_t> const target =
            seek_target(position_, reader_.size(), from, offset);
        if (!target) {
            return false;
        }
        position_ = *target;
        return true;
    }

    // Where the next read starts, counted from the plan's first byte.
    std::uint64_t position() const noexcept { return position_; }
    // Why the last failed read failed (CorruptEngineError for a refused chunk); null if none did.
    std::exception_ptr failure() const noexcept { return failure_; }
    PlanReader const& reader() const noexcept { return reader_; }
    // Reads and checks the chunks TensorRT did not read (PlanReader::check_rest): TensorRT may
    // stop before the plan's end, and an engine is only trusted once its plan was checked whole.
    void check_rest() { reader_.check_rest(); }

private:
    // Device memory needs a CUDA copy; host memory (pageable, pinned or managed) the reader
    // fills itself. The driver tells which (memory_kind), and an address it cannot place is
    // thrown as TensorRtError rather than guessed.
    static bool is_device_memory(void const* address, std::filesystem::path const& path) {
        try {
            return memory_kind(address) == MemoryKind::device;
        } catch (Error const& error) {
            throw TensorRtError("cannot hand TensorRT the plan of '" + path.string() +
                                "': " + error.what());
        }
    }

    PlanReader reader_;
    std::filesystem::path path_;
    std::uint64_t position_ = 0;
    std::exception_ptr failure_;
};

} // namespace tensoracle::deploy::tensorrt
