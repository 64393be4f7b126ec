// The deployment manifest's reading in its steps, for the signed manifest's reader, which finds
// the manifest inside a verified envelope (signed_manifest.cpp). Private to the deploy library.
#pragma once

#include "tensoracle/deploy/manifest.hpp"
#include "text/json_members.hpp"

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

namespace tensoracle::deploy {

// The text of a manifest file, at most kMaxManifestFileBytes (InvalidArgument beyond, FileError
// when it cannot be read).
std::string manifest_text(std::filesystem::path const& path);

// The JSON of a manifest's text, within kMaxManifestFileBytes and kMaxManifestValues;
// InvalidArgument naming `name` when it is not JSON within them.
nlohmann::json manifest_json(std::string_view text, std::string const& name);

// Whether the document is a DSSE envelope (a signed manifest) rather than a plain manifest.
bool is_envelope(nlohmann::json const& document);

// The manifest a plain manifest's document holds (parse_manifest's checks).
Manifest manifest_of_document(nlohmann::json const& document, JsonPlace const& place);

// The manifest in the in-toto Statement `payload` of a signed manifest (verified, or read
// unverified), with its release, each entry checked to be a subject of the statement with the
// same SHA-256, and every subject an entry. Throws InvalidArgument naming `name` and the field
// for a malformed statement, UntrustedEngineError for an entry that is not its subject.
Manifest statement_manifest(std::span<std::byte const> payload, std::string const& name);

} // namespace tensoracle::deploy
