// Identity of a saved engine: the digest of its canonical conditions, and the file name it gives.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace tensoracle {

struct EngineIdentity {
    nlohmann::json conditions; // object with at least a non-empty string member "name"
    std::string digest;        // SHA-256 of canonical_json(conditions), 64 hex digits
    std::string file_name;     // "<safe name>-<digest>.engine"
};

// The identity of the conditions of a build. A member "targets" is a set of compute capabilities:
// an array of distinct strings "sm" + digits ("sm86", "sm120"), recorded sorted by capability
// (sm86, sm89, sm120), so the same targets in any order give the same identity and file name.
// Throws InvalidArgument when `conditions` is not an object, lacks a non-empty string "name",
// has targets that are not such a set (naming the value), or holds a value canonical_json
// rejects. Different conditions never give the same file name; equal conditions (in any key
// order, targets in any order) always do.
EngineIdentity make_identity(nlohmann::json conditions);

// The identity of conditions exactly as a saved header records them (targets neither sorted nor
// checked), for judging whether a saved file's name is its header's: an entry saved before
// targets were sorted keeps the name it was saved under. Same errors as make_identity otherwise.
EngineIdentity recorded_identity(nlohmann::json conditions);

// recorded_identity(conditions).file_name, without a copy of the conditions; the second form
// hashes `canonical_conditions`, which must be canonical_json(conditions) (a header's own text of
// them, DecodedHeader::conditions_json), instead of writing that text again.
std::string recorded_file_name(nlohmann::json const& conditions);
std::string recorded_file_name(nlohmann::json const& conditions,
                               std::string_view canonical_conditions);

} // namespace tensoracle
