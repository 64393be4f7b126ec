// Signing a deployment manifest (signed_manifest.hpp describes what is signed): for `tensoracle
// manifest sign`, `tensoracle build --manifest --sign-key` and the Python package. Private to the
// deploy library, its command and its bindings: signing keys never reach an application.
#pragma once

#include "remote/signature.hpp"
#include "tensoracle/deploy/manifest.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tensoracle::deploy {

// The signed manifest (the DSSE envelope's text) of `text`, signed by each of `keys`:
// - a plain manifest is signed with `release` (required): every entry must record its file's
//   sha256 and header_sha256 (tensoracle build --manifest records them);
// - a signed manifest gets the keys' signatures added to its own (a key that signed it already
//   is signed again, once), its payload unchanged: `release` must then be absent, since the
//   signed payload already states it.
// Throws InvalidArgument naming `name`, the field and the value when the manifest is invalid, an
// entry lacks its digests, `keys` is empty, or `release` is missing or not allowed.
std::string sign_manifest(std::string_view text, std::string const& name,
                          std::optional<ManifestRelease> const& release,
                          std::vector<SigningKey> const& keys);

// The key id a signature by `key` is listed under: the fingerprint of its public key.
std::string key_id(SigningKey const& key);

} // namespace tensoracle::deploy
