// `tensoracle manifest` (sign and verify: cmd_manifest_sign.cpp, cmd_manifest_verify.cpp), and
// `tensoracle manifest merge PART... -o FILE`: the manifests of a sharded build's parts
// (`tensoracle build --shard I/N --manifest PART`) joined into the manifest the unsharded build
// writes (tensoracle/deploy/manifest_merge.hpp), written atomically.
#include "commands.hpp"
#include "io/atomic_file.hpp"
#include "io/file_bytes.hpp"
#include "tensoracle/deploy/manifest.hpp"
#include "tensoracle/deploy/manifest_merge.hpp"
#include "tensoracle/errors.hpp"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace tensoracle::cli {
namespace {

constexpr char const* kCommand = "tensoracle manifest merge";

struct MergeOptions {
    std::vector<std::string> parts;
    std::string output;
};

int merge(MergeOptions const& options) {
    std::vector<deploy::ManifestPart> parts;
    parts.reserve(options.parts.size());
    for (std::string const& name : options.parts) {
        auto const bytes = read_file_bytes(name, deploy::kMaxManifestFileBytes);
        if (!bytes) {
            std::cerr << kCommand << ": " << name << " is larger than the limit of "
                      << deploy::kMaxManifestFileBytes << " bytes of a manifest\n";
            return kExitFailure;
        }
        parts.push_back({name, std::string(bytes->data(), bytes->size())});
    }
    std::string merged;
    try {
        merged = deploy::merge_manifests(parts);
    } catch (InvalidArgument const& error) { // the parts, not the command line, are wrong
        std::cerr << kCommand << ": " << error.what() << "\n";
        return kExitFailure;
    }
    AtomicFile file(options.output);
    file.write(merged);
    file.commit();
    std::cerr << kCommand << ": wrote the manifest of " << options.parts.size() << " parts to "
              << options.output << "\n";
    return kExitSuccess;
}

} // namespace

void add_manifest_command(CLI::App& app, Action& action) {
    CLI::App* manifest = app.add_subcommand("manifest", "Work with deployment manifests");
    manifest->require_subcommand(1);
    auto options = std::make_shared<MergeOptions>();
    CLI::App* command =
        manifest->add_subcommand("merge", "Join the manifests of a sharded build's parts into one");
    command->footer(
        "Join the manifests of every part of a sharded build (tensoracle build --shard "
        "I/N --manifest PART) into the manifest the unsharded build writes. Exit status "
        "0 success, 1 parts that are missing, of different builds or conflicting, 2 "
        "invalid usage");
    command->add_option("PART", options->parts, "The manifest of a part")->required();
    command->add_option("-o,--output", options->output, "Where to write the merged manifest")
        ->required();
    command->callback([options, &action] {
        action = [options] {
            return run_reporting_errors(kCommand, [&] { return merge(*options); });
        };
    });
    add_manifest_sign_command(*manifest, action);
    add_manifest_verify_command(*manifest, action);
}

} // namespace tensoracle::cli
