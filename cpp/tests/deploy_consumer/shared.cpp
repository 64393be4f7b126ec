// A shared library linking tensoracle::deploy: the link fails unless the package's archives
// (the deploy library's and the core's) were compiled position-independent.
#include <string>
#include <tensoracle/deploy/deployed_engine.hpp>
#include <tensoracle/deploy/manifest.hpp>

std::string deploy_consumer_recipes(std::string const& manifest_text);

std::string deploy_consumer_recipes(std::string const& manifest_text) {
    std::string recipes;
    for (auto const& entry :
         tensoracle::deploy::parse_manifest(manifest_text, "deploy.json").entries) {
        recipes += entry.recipe + '\n';
        static_cast<void>(tensoracle::deploy::DeployedEngine::open(
            entry, tensoracle::deploy::options_from_environment()));
    }
    return recipes;
}
