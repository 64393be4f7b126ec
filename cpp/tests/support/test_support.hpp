// Helpers shared by the store's GoogleTest files: a private temporary directory and file I/O.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace tensoracle::testing {

// A fresh directory under the system temporary directory, removed with its contents.
class TemporaryDirectory {
public:
    TemporaryDirectory() {
        std::random_device device;
        for (int attempt = 0; attempt < 16; ++attempt) {
            auto const candidate = std::filesystem::temp_directory_path() /
                                   ("tensoracle-test-" + std::to_string(device()));
            if (std::filesystem::create_directory(candidate)) {
                path_ = candidate;
                return;
            }
        }
        throw std::runtime_error("cannot create a temporary directory");
    }
    TemporaryDirectory(TemporaryDirectory const&) = delete;
    TemporaryDirectory& operator=(TemporaryDirectory const&) = delete;
    ~TemporaryDirectory() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    std::filesystem::path const& path() const noexcept { return path_; }

private:
    std::filesystem::path path_;
};

inline std::vector<std::byte> read_all(std::filesystem::path const& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> chars{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::vector<std::byte> bytes(chars.size());
    std::memcpy(bytes.data(), chars.data(), chars.size());
    return bytes;
}

inline void write_all(std::filesystem::path const& path, std::span<std::byte const> bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<char const*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) {
        throw std::runtime_error("cannot write " + path.string());
    }
}

// What another process can do to a file someone has read: overwrite its last bytes in place (the
// same file, not a replacement), then cut it to nothing. A mapping of it would see the write, and
// a touch of a mapped page past the new end would end the process with SIGBUS.
inline void scribble_then_truncate(std::filesystem::path const& path) {
    auto const size = std::filesystem::file_size(path);
    auto const count = static_cast<std::size_t>(std::min<std::uintmax_t>(size, 4096));
    {
        std::fstream out(path, std::ios::binary | std::ios::in | std::ios::out);
        out.seekp(static_cast<std::streamoff>(size - count));
        std::vector<char> const ones(count, '\xff');
        out.write(ones.data(), static_cast<std::streamsize>(ones.size()));
        if (!out) {
            throw std::runtime_error("cannot write into " + path.string());
        }
    }
    std::filesystem::resize_file(path, 0);
}

inline std::vector<std::byte> random_bytes(std::size_t size, std::uint32_t seed) {
    std::mt19937 generator(seed);
    std::vector<std::byte> bytes(size);
    for (auto& b : bytes) {
        b = static_cast<std::byte>(generator() & 0xFFU);
    }
    return bytes;
}

// The file names in `directory`, sorted (temporary files included).
inline std::vector<std::string> names_in(std::filesystem::path const& directory) {
    std::vector<std::string> names;
    for (auto const& item : std::filesystem::directory_iterator(directory)) {
        names.push_back(item.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

inline std::vector<std::byte> to_bytes(std::string_view text) {
    auto const view = std::as_bytes(std::span(text));
    return {view.begin(), view.end()};
}

} // namespace tensoracle::testing
