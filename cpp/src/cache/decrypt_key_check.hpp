// Private to the core: whether an engine may be opened with the decrypt key given, or without one
// — the one judgement of a deployed open (deploy/plan_unsealing.hpp) and of a saved entry's open
// from Python (`open_engine(..., decrypt_key=...)`).
#pragma once

#include "cache/engine_file.hpp"
#include "encryption/recipient_key.hpp"

#include <filesystem>
#include <string_view>

namespace tensoracle {

// Throws EngineKeyError naming `path` (`noun` names the engine: "deployed engine") when `header`
// is encrypted and `key` is null (`pass` says how a key is passed), or when `key` is set and the
// engine is plain: a plain file put where an encrypted one was expected (a downgrade).
void check_decrypt_key(EngineHeader const& header, encryption::DecryptKey const* key,
                       std::filesystem::path const& path, std::string_view noun,
                       std::string_view pass);

} // namespace tensoracle
