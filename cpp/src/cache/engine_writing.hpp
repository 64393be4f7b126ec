// Private to the core: writing a saved engine's bytes, the header made from the plan it precedes:
// its size, checksum and chunk digests, and, for recipients, the plan sealed for them (engine file
// format 3: the header describes the sealed body). The one writer of a plan for Store::save and
// for `cache encrypt` and `cache decrypt` (entry_encryption.hpp).
#pragma once

#include "cache/engine_file.hpp"
#include "encryption/recipient_key.hpp"
#include "io/atomic_file.hpp"

#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>

namespace tensoracle {

// Writes into `file` the engine of `plan` with `conditions` and `references`: plain without
// `encrypt_to`; with it, sealed under a fresh data key for those recipients, one chunk at a time
// and twice (for the header's digests, then to write), so that the plan itself is never written
// and no more than a chunk is held besides it. Returns the header written.
EngineHeader write_engine(AtomicFile& file, nlohmann::json conditions, nlohmann::json references,
                          std::span<std::byte const> plan,
                          std::span<encryption::RecipientKey const> encrypt_to = {});

} // namespace tensoracle
