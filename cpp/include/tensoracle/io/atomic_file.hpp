// Writes a file so that it becomes visible only when complete: a temporary file in the target's
// directory, flushed to disk, then renamed over the target by commit(). Destroying an uncommitted
// AtomicFile removes the temporary file and leaves the target as it was.
#pragma once

#include <cstddef>
#include <filesystem>
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
    // fsync the file, rename it over the target, fsync the directory.
    void commit();

    std::filesystem::path const& temporary_path() const noexcept { return temporary_; }

private:
    std::filesystem::path target_;
    std::filesystem::path temporary_;
    int fd_ = -1;
    bool committed_ = false;
};

// Recognizes the temporary names AtomicFile uses (for listing and pruning).
bool is_temporary_name(std::string_view file_name) noexcept;

} // namespace tensoracle
