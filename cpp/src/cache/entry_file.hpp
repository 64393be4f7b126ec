// Private to the core: opening an entry's file of the cache folder for reading, the one way the
// store, a deployed engine's open and a pull's check of a saved entry open it: without following a
// symbolic link (cache/file.hpp), and classified before anything is read, so that a link, a
// directory or a FIFO at an entry's name is refused by what it is, and a missing file is told
// apart from one that cannot be opened.
#pragma once

#include "io/platform.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace tensoracle {

// What is at an entry's name.
enum class EntryFinding {
    regular,     // a regular file, opened
    missing,     // nothing (ENOENT)
    link,        // a symbolic link, not followed
    directory,   // a directory (on Windows the open fails; the name's status says so)
    not_regular, // a FIFO, socket or device (opened without blocking, then fstat)
};

// The entry's file: `file` is open and `status` is its fstat when `finding` is regular.
struct EntryFile {
    EntryFinding finding = EntryFinding::missing;
    platform::Descriptor file{-1};
    platform::FileStatus status;
};

// Opens `path` (open_cache_file, O_RDONLY) and classifies what is there. Other failures throw
// FileError "cannot open <noun> '<path>': <reason>" ("cannot stat <noun> ..." when fstat fails).
EntryFile open_entry_file(std::filesystem::path const& path, std::string_view noun);

// How open_regular_entry names the file in its messages.
struct EntryNaming {
    std::string_view noun;   // "saved engine": "cannot open saved engine '<path>': <reason>"
    std::string_view prefix; // "saved engine ": before link_refusal and not_regular_refusal
};

// The regular file at `path`, opened, with its fstat; std::nullopt when nothing is there. Throws
// CorruptEngineError "<prefix><link_refusal>" for a link and "<prefix><not_regular_refusal>" for
// a directory or another file that is not regular, and FileError as open_entry_file.
std::optional<EntryFile> open_regular_entry(std::filesystem::path const& path,
                                            EntryNaming const& naming);

// The preamble and header of the open engine file `fd` of `size` bytes (the preamble alone when
// its header length is unusable: decoding reports why), read into this process's memory; fewer
// bytes where the file ends sooner. Throws FileError naming `path` when a read fails.
std::vector<std::byte> read_engine_prefix(int fd, std::uint64_t size,
                                          std::filesystem::path const& path);

} // namespace tensoracle
