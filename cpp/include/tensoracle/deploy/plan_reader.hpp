// Reading a deployed engine's verified plan piece by piece, for a consumer that asks for it in
// pieces (TensorRT's IStreamReaderV2: tensorrt.hpp adapts one to this).
//
// A DeployedEngine opened with OpenOptions::stream_plan holds its file open and the digests its
// verified header records for each 4 MiB chunk of the plan (SHA-256 when a verify key accepted
// the signature, which is over the header; XXH3-128 otherwise), not the plan. A PlanReader reads
// a chunk from that open file, computes its digest, and hands on none of its bytes unless it is
// the recorded one: another process that writes into the file, truncates or replaces it after
// the open changes nothing that is handed on (a changed chunk is refused, and the reader keeps
// refusing), and crashes nothing (the file is read, never mapped). Without a key it also
// computes the whole plan's XXH3-128 over the chunks in order, and hands on the last chunk only
// when it is the header's (the manifest's): a read that skips ahead has the chunks before it read
// and checked first. The memory it holds is one chunk (two while it reads skipped chunks),
// whatever the plan's size. For an engine opened whole (the default, and entries saved before
// chunk digests existed), it hands on pieces of the verified copy.
//
// This header compiles as C++17.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace tensoracle::deploy {

class DeployedEngine;

class PlanReader {
public:
    // A reader of `engine`'s plan; `engine` must outlive it. Several readers of one engine may
    // be used at once, each from one thread.
    explicit PlanReader(DeployedEngine const& engine);
    PlanReader(PlanReader&&) noexcept;
    PlanReader& operator=(PlanReader&&) noexcept;
    PlanReader(PlanReader const&) = delete;
    PlanReader& operator=(PlanReader const&) = delete;
    ~PlanReader();

    // The plan's size in bytes.
    std::uint64_t size() const noexcept;

    // Copies the plan's bytes from `offset` on into `destination` (host memory of `bytes`
    // bytes), each chunk they lie in checked first; returns how many were copied (fewer only at
    // the plan's end, 0 past it). A chunk the request covers whole is read into `destination`
    // and checked there before the call returns; when it is refused, those bytes of
    // `destination` are zeroed. Throws CorruptEngineError naming the file, the chunk and both
    // digests when a chunk is not the verified one, or the file is shorter than it was.
    std::size_t read(std::uint64_t offset, std::byte* destination, std::size_t bytes);

    // The checked bytes from `offset` to the end of the chunk that holds it, for a consumer that
    // copies them itself (such as into device memory): valid until the next call on this reader.
    // nullptr with `available` 0 at or past the end. Throws as read().
    std::byte const* checked_at(std::uint64_t offset, std::size_t& available);

    // The host memory this reader holds for its chunk (0 for an engine opened whole).
    std::size_t buffer_bytes() const noexcept;

private:
    struct State;
    std::unique_ptr<State> state_;
};

} // namespace tensoracle::deploy
