// The whole contents of a file as read, held so that nothing done to the file afterwards reaches
// them, and so that the file stays free to be replaced or removed by anyone while they are in use.
//
// By default the contents are copied into the process's own memory, on every system: what was
// read, and checked, is what stays held, whatever another process then writes into the file or
// cuts from it (a shared mapping would show such writes, and touching a page past a truncation
// would end the process with SIGBUS). Everything that hands bytes on (the store's and the
// deployment library's plans for TensorRT) holds them so.
//
// A read-only mapping (Holding::mapped) is for reads that only judge a file and hand nothing on
// (a remote pull's received file, which no one else writes): zero-copy, with the file's later
// changes showing through. `cache verify` neither maps nor copies: the files it reads are anyone's
// to cut short, and of any size; it reads them a piece at a time (read_piece_by_piece). On
// Windows a mapped view keeps the file from being replaced or removed until it is unmapped.
#pragma once

#include "io/mapped_file.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>

namespace tensoracle {

enum class Holding {
    copied, // private memory, read front to back: the bytes as read, whatever the file becomes
    mapped, // a read-only mapping (zero-copy): the file's later changes show through
};

// Called with each piece of a copy right after it is read, in order, while it is still in the
// CPU's cache: hashing there makes the read and the hash one pass. Then called once with an empty
// piece when the copy is complete, or abandoned (a read failed: the pieces are released right
// after): an observer that handed pieces to another thread waits for it there, so that no piece
// is used after the constructor returns or throws.
using PieceObserver = std::function<void(std::span<std::byte const> piece)>;

class FileContents {
public:
    // The size of the pieces a copy is read in (the last may be shorter).
    static constexpr std::size_t kPieceBytes = std::size_t{1} << 20U;

    // The whole regular file open as `fd` (owned by the caller, which may close it after);
    // `path` only names the file in errors. Throws FileError naming the path. An empty file
    // gives an empty span. A file that shrinks while it is copied holds fewer bytes (the
    // caller's checks see them); one that grows is read up to the size it had when measured.
    FileContents(int fd, std::filesystem::path const& path, Holding holding = Holding::copied);
    // A copy, with `observe` called on every piece as it is read. With `at_most`, no more than
    // at_most + 1 bytes are allocated and read, whatever size the file has or takes meanwhile: a
    // copy longer than `at_most` tells the caller the file is longer than it may be.
    FileContents(int fd, std::filesystem::path const& path, PieceObserver const& observe,
                 std::optional<std::uint64_t> at_most = std::nullopt);

    std::span<std::byte const> bytes() const noexcept;
    Holding holding() const noexcept { return holding_; }

    // A read-once-in-order hint for a mapping (MappedFile::advise_sequential); a copy was read in
    // order already, and this does nothing.
    void advise_sequential() const noexcept;

private:
    void copy_in(int fd, std::filesystem::path const& path, PieceObserver const& observe,
                 std::optional<std::uint64_t> at_most);

    // Private memory for the copy, released by the destructor; moves leave the source empty.
    class PrivateMemory {
    public:
        PrivateMemory() noexcept = default;
        explicit PrivateMemory(std::size_t size, std::filesystem::path const& path);
        PrivateMemory(PrivateMemory&& other) noexcept;
        PrivateMemory& operator=(PrivateMemory&& other) noexcept;
        PrivateMemory(PrivateMemory const&) = delete;
        PrivateMemory& operator=(PrivateMemory const&) = delete;
        ~PrivateMemory();
        std::byte* data() const noexcept { return static_cast<std::byte*>(address_); }

    private:
        void* address_ = nullptr;
        std::size_t size_ = 0;
    };

    Holding holding_;
    MappedFile mapping_;
    PrivateMemory copy_;
    std::size_t copy_size_ = 0;
};

} // namespace tensoracle
