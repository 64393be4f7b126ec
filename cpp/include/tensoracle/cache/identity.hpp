// Identity of a saved engine: the digest of its canonical conditions, and the file name it gives.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tensoracle {

struct EngineIdentity {
    nlohmann::json conditions; // object with at least a non-empty string member "name"
    std::string digest;        // SHA-256 of canonical_json(conditions), 64 hex digits
    std::string file_name;     // "<safe name>-<digest>.engine"
};

// Throws InvalidArgument when `conditions` is not an object, lacks a non-empty string "name",
// or holds a value canonical_json rejects. Different conditions never give the same file name;
// equal conditions (in any key order) always do.
EngineIdentity make_identity(nlohmann::json conditions);

} // namespace tensoracle
