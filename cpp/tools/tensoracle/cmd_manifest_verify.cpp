// `tensoracle manifest verify FILE (--key KEY... [--threshold M] | --trust-policy POLICY)
// [--minimum-version N] [--cache-dir DIR]`: whether an application with these keys would accept
// the signed manifest FILE, and why not, naming the field; with --cache-dir, also whether each
// entry's file there is byte for byte the one the manifest names, and whether the folder accepted
// a later version before. Nothing is written.
#include "commands.hpp"
#include "deploy/manifest_document.hpp"
#include "deploy/manifest_versions.hpp"
#include "io/hash.hpp"
#include "remote/key_file.hpp"
#include "tensoracle/deploy/signed_manifest.hpp"
#include "tensoracle/errors.hpp"
#include "text/message_text.hpp"
#include "text/size_text.hpp"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace tensoracle::cli {
namespace {

constexpr char const* kCommand = "tensoracle manifest verify";

struct VerifyOptions {
    std::string manifest;
    std::vector<std::string> keys;
    std::size_t threshold = 1;
    std::string trust_policy;
    std::uint64_t minimum_version = 0;
    std::string cache_dir;
};

deploy::TrustPolicy policy_of(VerifyOptions const& options) {
    if (options.trust_policy.empty() == options.keys.empty()) {
        throw InvalidArgument("give --key KEY (one or more) or --trust-policy POLICY");
    }
    deploy::TrustPolicy policy;
    if (!options.trust_policy.empty()) {
        policy = deploy::read_trust_policy(options.trust_policy);
    } else {
        for (std::string const& key : options.keys) {
            policy.keys.push_back(
                deploy::single_key_policy(detail::read_key_file(key), "key file '" + key + "'")
                    .keys.front());
        }
        policy.threshold = options.threshold;
        if (policy.threshold == 0 || policy.threshold > policy.keys.size()) {
            throw InvalidArgument("--threshold is " + std::to_string(policy.threshold) +
                                  ", expected 1 to the number of --key options, " +
                                  std::to_string(policy.keys.size()));
        }
    }
    policy.minimum_version = std::max(policy.minimum_version, options.minimum_version);
    return policy;
}

// Whether each entry's file in `folder` is the one the manifest names (its whole SHA-256).
int check_files(deploy::Manifest const& manifest, std::filesystem::path const& folder) {
    int status = kExitSuccess;
    for (deploy::ManifestEntry const& entry : manifest.entries) {
        std::filesystem::path const path = folder / entry.file_name;
        std::error_code missing;
        if (!std::filesystem::exists(path, missing)) {
            std::cout << "  " << entry.recipe << ": " << entry.file_name
                      << " is not in the cache folder (tensoracle cache pull --manifest)\n";
            continue;
        }
        std::string const digest = sha256_file_hex(path);
        if (digest != *entry.sha256) {
            std::cout << "  " << entry.recipe << ": " << entry.file_name << " has the SHA-256 "
                      << digest << ", the manifest names " << *entry.sha256 << "\n";
            status = kExitFailure;
        } else {
            std::cout << "  " << entry.recipe << ": " << entry.file_name << " is the file named\n";
        }
    }
    return status;
}

int verify(VerifyOptions const& options) {
    deploy::TrustPolicy const policy = policy_of(options);
    deploy::Manifest manifest;
    try {
        manifest = deploy::verify_signed_manifest(deploy::manifest_text(options.manifest),
                                                  options.manifest, policy, now_nanoseconds());
        if (!options.cache_dir.empty()) {
            deploy::check_manifest_version(resolve_cache_directory(options.cache_dir),
                                           manifest.spec, manifest.release->version,
                                           options.manifest);
        }
    } catch (Error const& error) { // the manifest, not the command line, is wrong
        std::cerr << kCommand << ": " << error.what() << "\n";
        return kExitFailure;
    }
    std::cout << options.manifest << ": verified: " << manifest.spec << " version "
              << manifest.release->version << ", expires " << manifest.release->expires
              << ", signed by " << manifest.signers.size() << " of " << policy.keys.size()
              << " trusted keys (" << joined(manifest.signers, ", ") << "; " << policy.threshold
              << " required), " << manifest.entries.size()
              << (manifest.entries.size() == 1 ? " entry, bound" : " entries, each bound")
              << " to its file's SHA-256\n";
    if (options.cache_dir.empty()) {
        return kExitSuccess;
    }
    return check_files(manifest, resolve_cache_directory(options.cache_dir));
}

} // namespace

void add_manifest_verify_command(CLI::App& manifest, Action& action) {
    auto options = std::make_shared<VerifyOptions>();
    CLI::App* command = manifest.add_subcommand(
        "verify", "Check a signed deployment manifest as an application would");
    command->footer("Check a signed deployment manifest as an application would: its signatures "
                    "by trusted keys, its expiry and version, and that its subjects are its "
                    "entries; with --cache-dir also each entry's file there. Exit status 0 "
                    "verified, 1 refused (the reason names the field), 2 invalid usage");
    command->add_option("FILE", options->manifest, "The signed manifest")->required();
    command
        ->add_option("--key", options->keys,
                     "A trusted Ed25519 verify key (PEM public key); repeat it for several")
        ->type_name("KEY");
    command
        ->add_option("--threshold", options->threshold,
                     "How many of the --key keys must have signed (default 1)")
        ->type_name("M");
    command
        ->add_option("--trust-policy", options->trust_policy,
                     "A trust policy file (keys, threshold, minimum version) instead of --key")
        ->type_name("POLICY");
    command
        ->add_option("--minimum-version", options->minimum_version,
                     "Refuse a manifest of a lower version")
        ->type_name("N");
    add_cache_dir_option(*command, options->cache_dir);
    command->callback([options, &action] {
        action = [options] {
            return run_reporting_errors(kCommand, [&] { return verify(*options); });
        };
    });
}

} // namespace tensoracle::cli
