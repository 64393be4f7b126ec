// Private to the core: the full check of one cache file that `cache verify` makes
// (cache/verification.hpp), with the pieces its read takes shown to a caller: the tests watch
// them, and cut the file between two of them, to see that the file is read a piece at a time
// into one buffer, never held whole nor mapped.
#pragma once

#include "cache/verification.hpp"
#include "io/file_contents.hpp"

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace tensoracle::detail {

// The size of the pieces the check reads (the last may be shorter): a copy's (FileContents), so
// that a file is read in the same reads as when the check copied it whole.
inline constexpr std::size_t kCheckPieceBytes = FileContents::kPieceBytes;

struct EngineFileFinding {
    VerifyStatus status = VerifyStatus::intact;
    std::string reason; // why it is damaged or unrecognized; empty when intact
};

// Opens `path` without following a link or blocking on a FIFO, reads a regular file from its
// start in pieces of kCheckPieceBytes into one buffer (each over the last), up to the size
// measured at the open, and judges it as Store::read does: header, plan length, the plan's
// XXH3-128 and each chunk's (PlanDamageCheck, hashed as the pieces pass). What it holds is the
// buffer, the preamble and header, and the digests: never the plan. `observe` sees each piece
// as it is read, valid only during the call (the next is read over it), then an empty piece
// when the read is complete or abandoned. With `file_name`, an engine whose header names
// another file is unrecognized, and its plan not hashed (no open reads it anyway). Never throws
// for what the file holds or for a failed read: those are the finding's reason.
EngineFileFinding check_engine_file(std::filesystem::path const& path, std::string_view file_name,
                                    PieceObserver const& observe);

} // namespace tensoracle::detail
