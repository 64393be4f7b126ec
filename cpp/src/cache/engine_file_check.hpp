// Private to the core: the full check of one cache file that `cache verify` makes
// (cache_verification.hpp), with what its copy of the file reads shown to a caller: the tests
// watch the pieces, and cut the file between two of them, to see that the file is read into
// memory and never mapped.
#pragma once

#include "tensoracle/cache/cache_verification.hpp"
#include "tensoracle/io/file_contents.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace tensoracle::detail {

struct EngineFileFinding {
    VerifyStatus status = VerifyStatus::intact;
    std::string reason; // why it is damaged or unrecognized; empty when intact
};

// Opens `path` without following a link or blocking on a FIFO, copies a regular file into this
// process's memory (`observe` sees each piece as FileContents reads it), and judges it as
// Store::read does: header, plan length, the plan's XXH3-128 and each chunk's (plan_damage). With
// `file_name`, an engine whose header names another file is unrecognized, checked before its plan
// is hashed (no open reads it anyway). Never throws for what the file holds or for a failed read:
// those are the finding's reason.
EngineFileFinding check_engine_file(std::filesystem::path const& path, std::string_view file_name,
                                    PieceObserver const& observe);

} // namespace tensoracle::detail
