// Opening an entry's file of the cache folder, classified (see entry_file.hpp).
#include "cache/entry_file.hpp"

#include "cache/engine_file.hpp"
#include "cache/file.hpp"
#include "io/full_read.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <string>

namespace tensoracle {
namespace {

std::string failure(char const* verb, std::string_view noun) {
    std::string text = verb;
    if (!noun.empty()) {
        text += ' ';
        text += noun;
    }
    return text;
}

} // namespace

EntryFile open_entry_file(std::filesystem::path const& path, std::string_view noun) {
    EntryFile entry;
    platform::Descriptor file{open_cache_file(path, O_RDONLY)};
    if (!file.valid()) {
        int const error = errno;
        if (error == ENOENT) {
            entry.finding = EntryFinding::missing;
            return entry;
        }
        if (error == ELOOP) {
            entry.finding = EntryFinding::link;
            return entry;
        }
        // Windows does not open a directory as a file: what is there says why.
        if (auto const found = platform::status(path, platform::Follow::no_links);
            found && found->kind == platform::FileKind::directory) {
            entry.finding = EntryFinding::directory;
            entry.status = *found;
            return entry;
        }
        throw_file_error(failure("cannot open", noun), path, error);
    }
    auto const status = platform::status(file.get());
    if (!status) {
        throw_file_error(failure("cannot stat", noun), path, errno);
    }
    entry.status = *status;
    switch (status->kind) {
    case platform::FileKind::regular:
        entry.finding = EntryFinding::regular;
        return {entry.finding, std::move(file), entry.status};
    case platform::FileKind::directory:
        entry.finding = EntryFinding::directory;
        return entry;
    default:
        entry.finding = EntryFinding::not_regular;
        return entry;
    }
}

std::optional<EntryFile> open_regular_entry(std::filesystem::path const& path,
                                            EntryNaming const& naming) {
    EntryFile entry = open_entry_file(path, naming.noun);
    switch (entry.finding) {
    case EntryFinding::regular:
        return entry;
    case EntryFinding::missing:
        return std::nullopt;
    case EntryFinding::link:
        // Saving again (force_rebuild) replaces the link itself, never its target.
        throw CorruptEngineError(std::string(naming.prefix) + link_refusal(path), path);
    case EntryFinding::directory:
    case EntryFinding::not_regular:
        // A save cannot replace what is not a regular file at the entry's name: remove it.
        throw CorruptEngineError(
            std::string(naming.prefix) +
                not_regular_refusal(path, entry.finding == EntryFinding::directory),
            path);
    }
    return std::nullopt; // not reached: every finding is handled above
}

std::vector<std::byte> read_engine_prefix(int fd, std::uint64_t size,
                                          std::filesystem::path const& path) {
    std::vector<std::byte> prefix(
        static_cast<std::size_t>(std::min<std::uint64_t>(kEnginePreambleBytes, size)));
    prefix.resize(read_full(fd, prefix, 0, path));
    std::uint64_t const wanted = std::min(engine_prefix_bytes(prefix), size);
    if (wanted > prefix.size()) {
        prefix.resize(static_cast<std::size_t>(wanted));
        prefix.resize(read_full(fd, prefix, 0, path));
    }
    return prefix;
}

} // namespace tensoracle
