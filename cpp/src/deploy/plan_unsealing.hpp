// Private to the deploy library: what an open does with the decrypt key (OpenOptions::decrypt_key,
// EngineFileOptions::decrypt_key) once the engine's file is verified: an encrypted engine's data
// key is unwrapped and its plan opened (whole, or chunk by chunk through a PlanReader when
// streamed); a plain engine with a key set, or an encrypted one without, is refused.
#pragma once

#include "cache/engine_file.hpp"
#include "deploy/deployed_engine_state.hpp"
#include "encryption/recipient_key.hpp"

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tensoracle::deploy {

// The decrypt key `file` (a key file, read as verify keys are) or `pem` (its text) sets, or
// nothing when both are empty. Throws InvalidArgument naming `where` (the options) when both are
// set, or the key is no X25519 private key, and FileError when the file cannot be read.
std::optional<encryption::DecryptKey>
decrypt_key_of(std::filesystem::path const& file, std::string const& pem, std::string_view where);

// What the open of an engine verified against `header`, named `path`, hands on: for an encrypted
// engine the data key `key` unwraps and, when `body` holds the verified copy of its stored body
// (an open of the whole plan; empty when streamed), the plan decrypted from it. Throws
// EngineKeyError naming the file when the engine is encrypted and `key` is absent or no
// recipient, or `key` is set and the engine is not encrypted (`pass` says how a key is passed);
// CorruptEngineError when a chunk does not authenticate.
Unsealed unseal_plan(std::filesystem::path const& path, EngineHeader const& header,
                     std::optional<encryption::DecryptKey> const& key, std::string_view pass,
                     std::optional<std::span<std::byte const>> body);

} // namespace tensoracle::deploy
