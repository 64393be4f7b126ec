// Reading a deployed engine's verified plan piece by piece, for a consumer that asks for it in
// pieces (TensorRT's IStreamReaderV2: tensorrt.hpp adapts one to this).
//
// A DeployedEngine opened with OpenOptions::stream_plan holds its file open and the digests its
// verified header records for each chunk of the plan (kPlanChunkBytes), not the plan. The header
// itself was bound to the manifest before it was decoded: by the SHA-256 of the preamble and header
// that the manifest records (header_sha256), by the signed manifest that records it, or by the
// entry's own signature under a verify key. The chunk digests checked are the SHA-256 when a
// signature binds the header, the XXH3-128 otherwise. A PlanReader reads a chunk from that open
// file, computes its digest, and hands on none of its bytes unless it is the recorded one:
// another process that writes into the file, truncates or replaces it after the open changes
// nothing that is handed on (a changed chunk is refused, and the reader keeps refusing), and
// crashes nothing (the file is read, never mapped). The memory it holds is one chunk, whatever
// the plan's size. For an engine opened whole (the default, entries saved before chunk digests
// existed, and entries whose manifest records no header digest when no key is set), it hands on
// pieces of the verified copy.
//
// This header compiles as C++17.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
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

    // Reads and checks every chunk no call of this reader checked yet, handing none of it on
    // (into the reader's own buffer: a pointer checked_at gave is no longer valid). A consumer
    // that may stop before the plan's end (TensorRT's deserializer) calls it before it trusts
    // what it made of the plan: nothing made from a plan that was not checked whole is used.
    // Throws as read().
    void check_rest();
    // Whether every chunk of the plan was checked by this reader (always, for an engine opened
    // whole); false once a chunk was refused.
    bool checked_whole() const noexcept;

    // The host memory this reader holds for its chunk (0 for an engine opened whole).
    std::size_t buffer_bytes() const noexcept;

private:
    struct State;
    std::unique_ptr<State> state_;
};

// Where a seek is counted from: the plan's start, the position read up to, or the plan's end
// (TensorRT's SeekPosition kSET, kCUR and kEND).
enum class SeekFrom { start, current, end };

// Where a seek of `offset` bytes from `from` lands in a plan of `size` bytes read up to
// `position`: nothing when that is outside the plan and not its end (the magnitudes compared
// unsigned, so that no offset, INT64_MIN included, overflows). A stream over a PlanReader
// (tensorrt.hpp's VerifiedPlanStream, the Python package's) seeks by it.
std::optional<std::uint64_t> seek_target(std::uint64_t position, std::uint64_t size, SeekFrom from,
                                         std::int64_t offset) noexcept;

} // namespace tensoracle::deploy
