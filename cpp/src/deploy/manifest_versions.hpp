// What a cache folder remembers of the signed manifests it accepted: the last version of each
// spec, so that an older signed manifest (a rollback to engines the publisher has since
// replaced) is refused there. Private to the deploy library (signed_manifest.hpp describes it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace tensoracle::deploy {

// Accepts `version` of the signed manifest `name` for `spec` in the cache folder `folder`:
// throws UntrustedEngineError naming both versions and the record's file when the folder
// accepted a higher version of `spec` before; otherwise records `version` (written atomically
// under the record's lock, the folder created if missing). A folder that cannot be written (read
// only) is checked against the record it holds and left as it is. Throws InvalidArgument naming
// the record's file when it is not a record (remove it to accept any version again).
void accept_manifest_version(std::filesystem::path const& folder, std::string const& spec,
                             std::uint64_t version, std::string const& name);

// The same check without recording anything (for `tensoracle manifest verify`).
void check_manifest_version(std::filesystem::path const& folder, std::string const& spec,
                            std::uint64_t version, std::string const& name);

} // namespace tensoracle::deploy
