// Bundle inspection and digests with strings in and out, for the Python bindings.
#pragma once

#include <optional>
#include <string>

namespace tensoracle::cubin {

// Runs inspect_bundle(directory, plugin) and returns its report, compact JSON. Throws the same
// errors.
std::string inspect_bundle_report(std::string const& directory,
                                  std::optional<std::string> const& plugin);

// bundle_sha256() of the manifest written as JSON text `manifest`. Throws BundleError when the
// text is not JSON within the manifest limits, not an object, or holds a value the canonical form
// refuses.
std::string bundle_sha256_of_text(std::string const& manifest);

} // namespace tensoracle::cubin
