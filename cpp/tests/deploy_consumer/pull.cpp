// A C++-only deployment: pulls the entries of a signed deployment manifest from the remote cache
// into a cache folder with tensoracle::deploy::pull_manifest, then opens each, verified, and prints
// "<file name> <plan bytes> <signer>" per entry and "<count> pulled". No Python is involved: the
// store, its credentials and the verify key come from the environment
// (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...; TENSORACLE_REMOTE_VERIFY_KEY).
// Usage: deploy_pull_consumer CACHE_DIR MANIFEST
#include <exception>
#include <iostream>
#include <tensoracle/deploy/deployed_engine.hpp>
#include <tensoracle/deploy/manifest_pull.hpp>
#include <tensoracle/deploy/signed_manifest.hpp>

namespace deploy = tensoracle::deploy;

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: deploy_pull_consumer CACHE_DIR MANIFEST\n";
        return 2;
    }
    try {
        deploy::OpenOptions options = deploy::options_from_environment();
        options.cache_directory = argv[1];
        deploy::PullReport const report = deploy::pull_manifest(argv[2], options);
        for (deploy::RefusedEntry const& refused : report.refused) {
            std::cerr << "refused " << refused.file_name << ": " << refused.reason << "\n";
        }
        if (!report.refused.empty()) {
            return 1;
        }
        deploy::Manifest const manifest = deploy::read_manifest(argv[2], options);
        for (deploy::ManifestEntry const& entry : manifest.entries) {
            deploy::DeployedEngine const engine = deploy::DeployedEngine::open(entry, options);
            std::cout << entry.file_name << " " << engine.plan_size() << " "
                      << engine.signer().value_or("-") << "\n";
        }
        std::cout << report.pulled.size() << " pulled\n";
    } catch (std::exception const& error) {
        std::cerr << error.what() << "\n";
        return 1;
    }
    return 0;
}
