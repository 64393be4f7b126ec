// Selecting a manifest's entry for a GPU, then opening it (see deployed_engine.hpp): the one
// sequence the C++ adapter's open_engine_for and the Python binding's open_deployed share.
#include "tensoracle/deploy/deployed_engine.hpp"

#include <utility>

namespace tensoracle::deploy {

SelectedEngine open_selected(Manifest const& manifest, std::string_view recipe,
                             DeviceDescription const& device, RuntimeBackend const& backend,
                             OpenOptions const& options) {
    // One selection: its entry, or select_for_device's refusal, and why it was chosen.
    RecipeSelection found = select_recipe(manifest, recipe, device, backend);
    ManifestEntry const& entry = selected_entry(manifest, recipe, found);
    return SelectedEngine{DeployedEngine::open(entry, options), &entry,
                          std::move(found.selection.why)};
}

} // namespace tensoracle::deploy
