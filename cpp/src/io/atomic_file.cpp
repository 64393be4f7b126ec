// Atomic file replacement: write a private temporary file, fsync, rename, fsync the directory.
#include "io/atomic_file.hpp"

#include "io/platform.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <fcntl.h>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tensoracle {
namespace {

constexpr std::string_view kTemporaryMarker = ".tmp-";

// 64 random bits make the name unguessable and distinct across threads of one process
// (std::random_device reads the OS's generator: getrandom on Linux, rand_s on Windows).
std::string random_hex() {
    std::array<unsigned char, 8> bytes{};
    std::random_device device;
    for (auto& b : bytes) {
        b = static_cast<unsigned char>(device() & 0xFFU);
    }
    constexpr std::string_view kDigits = "0123456789abcdef";
    std::string hex;
    for (unsigned char const b : bytes) {
        hex.push_back(kDigits[b >> 4U]);
        hex.push_back(kDigits[b & 0x0FU]);
    }
    return hex;
}

void fsync_or_throw(int fd, std::filesystem::path const& path) {
    if (platform::flush_file(fd) != 0) {
        throw_file_error("cannot flush", path, errno);
    }
}

} // namespace

AtomicFile::AtomicFile(std::filesystem::path target) : target_(std::move(target)) {
    std::string const name = target_.filename().string();
    if (name.empty()) {
        throw InvalidArgument("AtomicFile needs a file path, got '" + target_.string() + "'");
    }
    std::string const suffix =
        std::string(kTemporaryMarker) + std::to_string(platform::process_id()) + "-";
    for (int attempt = 0;; ++attempt) {
        temporary_ = target_;
        temporary_.replace_filename(name + suffix + random_hex());
        fd_ = platform::open_file(temporary_, O_WRONLY | O_CREAT | O_EXCL, 0600,
                                  platform::Follow::links);
        if (fd_ >= 0) {
            return;
        }
        if (errno != EEXIST || attempt == 8) {
            throw_file_error("cannot create temporary file", temporary_, errno);
        }
    }
}

AtomicFile::~AtomicFile() {
    if (fd_ >= 0) {
        (void)platform::close_file(fd_);
    }
    if (!committed_) {
        (void)platform::remove_file(temporary_);
    }
}

void AtomicFile::write(std::span<std::byte const> bytes) {
    if (fd_ < 0) {
        throw std::logic_error("AtomicFile::write after commit");
    }
    while (!bytes.empty()) {
        long long const count = platform::write_some(fd_, bytes.data(), bytes.size());
        if (count < 0) {
            throw_file_error("cannot write", temporary_, errno);
        }
        bytes = bytes.subspan(static_cast<std::size_t>(count)); // short writes continue
        written_ += static_cast<std::uint64_t>(count);
    }
}

void AtomicFile::copy_from(int from, std::uint64_t offset, std::uint64_t length,
                           std::filesystem::path const& source) {
    if (fd_ < 0) {
        throw std::logic_error("AtomicFile::copy_from after commit");
    }
    constexpr std::size_t kPieceBytes = std::size_t{1} << 20U;
    bool kernel = true;
    std::vector<std::byte> buffer;
    std::uint64_t done = 0;
    while (done < length) {
        std::size_t const piece =
            static_cast<std::size_t>(std::min<std::uint64_t>(length - done, kPieceBytes * 64));
        long long count = -1;
        if (kernel) {
            count = platform::copy_some(from, offset + done, fd_, piece);
            if (count < 0 &&
                (errno == ENOSYS || errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP)) {
                kernel = false;
                continue;
            }
            if (count < 0) {
                throw_file_error("cannot copy into", temporary_, errno);
            }
        } else {
            buffer.resize(kPieceBytes);
            count =
                platform::read_at(from, buffer.data(), std::min(piece, kPieceBytes), offset + done);
            if (count < 0) {
                throw_file_error("cannot read", source, errno);
            }
            write(std::span(buffer).first(static_cast<std::size_t>(count)));
            written_ -= static_cast<std::uint64_t>(count); // counted once, below
        }
        if (count == 0) {
            throw FileError("'" + source.string() + "' ended " + std::to_string(length - done) +
                                " bytes early while it was copied",
                            source);
        }
        done += static_cast<std::uint64_t>(count);
        written_ += static_cast<std::uint64_t>(count);
    }
}

void AtomicFile::start_writeback() noexcept {
    if (fd_ >= 0 && written_ > writeback_from_) {
        platform::start_writeback(fd_, writeback_from_, written_ - writeback_from_);
        writeback_from_ = written_;
    }
}

void AtomicFile::write(std::string_view text) {
    write(std::as_bytes(std::span(text)));
}

void AtomicFile::commit() {
    if (fd_ < 0) {
        throw std::logic_error("AtomicFile::commit called twice");
    }
    // The data must be durable before the name points at it, or a power cut could leave the
    // target renamed onto an empty or partial file.
    fsync_or_throw(fd_, temporary_);
    int const fd = std::exchange(fd_, -1);
    if (platform::close_file(fd) != 0 && errno != EINTR) {
        throw_file_error("cannot close", temporary_, errno);
    }
    if (platform::replace_file(temporary_, target_) != 0) {
        throw_file_error("cannot rename '" + temporary_.string() + "' to", target_, errno);
    }
    committed_ = true;
    // The rename itself is durable only once the directory entry is flushed.
    auto directory = target_.parent_path();
    if (directory.empty()) {
        directory = ".";
    }
    if (platform::flush_directory(directory) != 0) {
        throw_file_error("cannot flush directory", directory, errno);
    }
}

bool is_temporary_name(std::string_view file_name) noexcept {
    auto const marker = file_name.rfind(kTemporaryMarker);
    if (marker == std::string_view::npos || marker == 0) {
        return false;
    }
    auto rest = file_name.substr(marker + kTemporaryMarker.size());
    auto const dash = rest.find('-');
    if (dash == 0 || dash == std::string_view::npos) {
        return false;
    }
    for (char const c : rest.substr(0, dash)) {
        if (c < '0' || c > '9') {
            return false;
        }
    }
    auto const random = rest.substr(dash + 1);
    if (random.empty()) {
        return false;
    }
    for (char const c : random) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            return false;
        }
    }
    return true;
}

std::optional<long long> temporary_writer_pid(std::string_view file_name) noexcept {
    if (!is_temporary_name(file_name)) {
        return std::nullopt;
    }
    auto const digits =
        file_name.substr(file_name.rfind(kTemporaryMarker) + kTemporaryMarker.size());
    long long pid = 0;
    for (char const c : digits.substr(0, digits.find('-'))) {
        if (pid > (std::numeric_limits<long long>::max() - 9) / 10) {
            return std::nullopt;
        }
        pid = pid * 10 + (c - '0');
    }
    return pid;
}

std::string_view temporary_target_name(std::string_view file_name) noexcept {
    if (!is_temporary_name(file_name)) {
        return {};
    }
    return file_name.substr(0, file_name.rfind(kTemporaryMarker));
}

} // namespace tensoracle
