// Writes a file so that it becomes visible only when complete: a temporary file in the target's
// directory, flushed to disk, then renamed over the target by commit(). Destroying an uncommitted
// AtomicFile removes the temporary file and leaves the target as it was.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string_view>

namespace tensoracle {

class AtomicFile {
public:
    // Temporary name: "<target file name>.tmp-<pid>-<random>" in the target's directory.
    explicit AtomicFile(std::filesystem::path target);
    AtomicFile(AtomicFile const&) = delete;
    AtomicFile& operator=(AtomicFile const&) = delete;
    ~AtomicFile();

    void write(std::span<std::byte const> bytes);
    void write(std::string_view text);
    // Appends the `length` bytes of the open file `from` at `offset` (named `source` in errors),
    // copied inside the kernel where it can (platform::copy_some), else read and written a piece
    // at a time. Throws FileError when `from` ends sooner or a read or write fails.
    void copy_from(int from, std::uint64_t offset, std::uint64_t length,
                   std::filesystem::path const& source);
    // Starts the disk writes of what was written so far without waiting for them (Linux's
    // sync_file_range; nothing elsewhere), so that a file written over a long time, a download
    // say, leaves commit()'s fsync little to wait for. A hint: errors are commit()'s to report.
    void start_writeback() noexcept;
    // fsync the file, rename it over the target, fsync the directory.
    void commit();

    std::filesystem::path const& temporary_path() const noexcept { return temporary_; }

private:
    std::filesystem::path target_;
    std::filesystem::path temporary_;
    int fd_ = -1;
    bool committed_ = false;
    std::uint64_t written_ = 0;        // bytes written so far
    std::uint64_t writeback_from_ = 0; // where the writes not yet started by start_writeback begin
};

// Recognizes the temporary names AtomicFile uses (for listing and pruning).
bool is_temporary_name(std::string_view file_name) noexcept;

// The id of the process that created the temporary file `file_name` (the <pid> of its name), or
// nullopt when it is not a temporary name or the id does not fit.
std::optional<long long> temporary_writer_pid(std::string_view file_name) noexcept;

// The target's file name of the temporary file `file_name` (what precedes ".tmp-"), or an empty
// view when it is not a temporary name.
std::string_view temporary_target_name(std::string_view file_name) noexcept;

} // namespace tensoracle
