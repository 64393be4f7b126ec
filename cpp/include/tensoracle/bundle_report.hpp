// Bundle inspection as one JSON string, for callers built as C++17 (the Python bindings): the
// same checks and errors as inspect_bundle() in bundle_inspect.hpp.
#pragma once

#include <optional>
#include <string>

namespace tensoracle::cubin {

// Runs inspect_bundle(directory, plugin) and returns its report, compact JSON. Throws the same
// BundleError subclasses.
std::string inspect_bundle_report(std::string const& directory,
                                  std::optional<std::string> const& plugin);

} // namespace tensoracle::cubin
