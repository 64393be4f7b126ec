// Private to the core: the "encryption" member of an encrypted engine's header (format 3,
// cache/engine_file.hpp), which says how the stored body seals the plan and for whom:
//   {"cipher": "aes-256-gcm",
//    "key_commitment": 64 hex digits (data_key.hpp),
//    "plan_size": the plan's size in bytes (the body holds it sealed: plan_sealing.hpp),
//    "recipients": [{"ephemeral": 64 hex digits, "key": 64 hex digits (RecipientKey::id),
//                    "wrapped_key": 96 hex digits}, ...]}
// with at least one recipient, sorted by "key", none twice. It is part of the header, so a
// signature over the header covers it: who may read the plan and how it is sealed are signed.
#pragma once

#include "encryption/data_key.hpp"
#include "encryption/recipient_key.hpp"

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tensoracle::encryption {

inline constexpr std::string_view kCipherName = "aes-256-gcm";

struct PlanEncryption {
    std::uint64_t plan_size = 0;
    std::string key_commitment;
    std::vector<WrappedKey> recipients; // sorted by recipient, none twice
};

// The encryption of a plan of `plan_size` bytes under `data_key` for `recipients` (at least one;
// a key named twice is wrapped once). Throws InvalidArgument when there is none.
PlanEncryption encryption_for(Key const& data_key, std::uint64_t plan_size,
                              std::span<RecipientKey const> recipients);

// The header member's JSON.
nlohmann::json encryption_json(PlanEncryption const& encryption);

// The header member read from `value`; CorruptEngineError naming `path` and the field
// ("encryption.recipients[1].key") for anything but the form above.
PlanEncryption plan_encryption_from_json(nlohmann::json const& value,
                                         std::filesystem::path const& path);

// The recipients' key ids, in order (RecipientKey::id, whole).
std::vector<std::string> recipient_ids(PlanEncryption const& encryption);

// The recipients' key ids, in order: "a1b2…, c3d4…" (each shortened to 16 digits).
std::string recipient_list(PlanEncryption const& encryption);

// The data key that `key` unwraps from `encryption`, checked against its commitment. Throws
// EngineKeyError naming `path` when `key` is none of the recipients (the message names the
// recipients and the key given), when its copy does not authenticate, or when what it unwraps is
// not the committed key.
Key open_data_key(PlanEncryption const& encryption, DecryptKey const& key,
                  std::filesystem::path const& path);

// The plan the sealed `body` holds, opened with the data key `key` unwraps: open_data_key's
// refusals, then open_plan's (plan_sealing.hpp).
std::vector<std::byte> opened_plan(PlanEncryption const& encryption, DecryptKey const& key,
                                   std::span<std::byte const> body,
                                   std::filesystem::path const& path);

} // namespace tensoracle::encryption
