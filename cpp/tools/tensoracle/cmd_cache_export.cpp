// `tensoracle cache export ENTRY --plan FILE` (or `--manifest M --recipe R [--gpu SM]`): the plan
// of one saved engine, written to FILE only once every byte of it was checked as an open checks
// it; a refused entry leaves FILE as it was.
#include "cache/entry_details.hpp"
#include "commands.hpp"
#include "io/atomic_file.hpp"
#include "io/platform.hpp"
#include "remote/object.hpp"
#include "remote/signature.hpp"
#include "tensoracle/deploy/deployed_engine.hpp"
#include "tensoracle/deploy/plan_reader.hpp"
#include "tensoracle/deploy/selection.hpp"
#include "tensoracle/deploy/signed_manifest.hpp"
#include "tensoracle/errors.hpp"
#include "text/message_text.hpp"

#include <array>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tensoracle::cli {
namespace {

constexpr char const* kCommand = "tensoracle cache export";

struct ExportOptions {
    std::string entry;
    std::string plan;
    std::string cache_dir;
    std::string verify_key;
    std::string manifest;
    std::string recipe;
    std::string gpu;
    std::string trust_policy;
    std::string decrypt_key;
};

// The entry of `recipe` the manifest holds, among those that run on a GPU of the compute
// capability --gpu names when it is given; refused, naming the candidates, unless there is one.
deploy::ManifestEntry const& manifest_entry(deploy::Manifest const& manifest,
                                            ExportOptions const& options) {
    std::optional<std::string> capability;
    if (!options.gpu.empty()) {
        capability = deploy::compute_capability_named(options.gpu);
        if (!capability) {
            throw InvalidArgument("--gpu is '" + options.gpu +
                                  "', expected a compute capability such as "
                                  "sm89 or 8.9");
        }
    }
    std::vector<deploy::ManifestEntry const*> found;
    std::vector<std::string> names;
    for (deploy::ManifestEntry const& entry : manifest.entries) {
        if (entry.recipe != options.recipe) {
            continue;
        }
        names.push_back(entry.file_name);
        if (capability) {
            // The GPU the entry records (for an engine built for exactly one GPU) with the
            // compute capability asked for: the rule of cannot_run judges the capability alone.
            deploy::DeviceDescription device =
                entry.runs_on.gpu.value_or(deploy::DeviceDescription{});
            device.properties["compute_capability"] = *capability;
            if (deploy::cannot_run(entry.runs_on, device)) {
                continue;
            }
        }
        found.push_back(&entry);
    }
    if (names.empty()) {
        throw InvalidArgument("the manifest " + options.manifest + " has no entry of the recipe '" +
                              options.recipe + "'");
    }
    if (found.size() == 1) {
        return *found.front();
    }
    if (found.empty()) {
        throw InvalidArgument("no entry of the recipe '" + options.recipe + "' in " +
                              options.manifest + " runs on " + options.gpu +
                              "; its entries: " + joined(names, ", "));
    }
    std::vector<std::string> candidates;
    candidates.reserve(found.size());
    for (deploy::ManifestEntry const* entry : found) {
        candidates.push_back(entry->file_name);
    }
    throw InvalidArgument("the recipe '" + options.recipe + "' has " +
                          std::to_string(found.size()) + " entries in " + options.manifest +
                          (capability ? " that run on " + options.gpu : std::string()) + ": " +
                          joined(candidates, ", ") + "; choose one with --gpu or by its file name");
}

// Whether `path` is a file of the folder `directory` (the cache folder), however either is named.
bool in_directory(std::filesystem::path const& path, std::filesystem::path const& directory) {
    std::error_code error;
    return std::filesystem::equivalent(path.parent_path(), directory, error) && !error;
}

// Whether the file at `path` ends in a signature trailer; false when it cannot be read.
bool ends_in_signature(std::filesystem::path const& path) {
    std::ifstream file(path, std::ios::binary | std::ios::ate);
    std::streamoff const size = file ? static_cast<std::streamoff>(file.tellg()) : -1;
    if (size < static_cast<std::streamoff>(kSignatureTrailerBytes)) {
        return false;
    }
    std::array<std::byte, kSignatureTrailerBytes> tail{};
    file.seekg(size - static_cast<std::streamoff>(tail.size()));
    file.read(reinterpret_cast<char*>(tail.data()), static_cast<std::streamsize>(tail.size()));
    return file.good() && has_signature_trailer(static_cast<std::uint64_t>(size), tail);
}

deploy::DeployedEngine open_checked(ExportOptions const& options) {
    std::filesystem::path const directory = resolve_cache_directory(options.cache_dir);
    // CLI11 refuses ENTRY with --manifest, --manifest without --recipe and --recipe, --gpu or
    // --trust-policy without --manifest (add_cache_export_command).
    if (!options.manifest.empty()) {
        deploy::OpenOptions open;
        open.cache_directory = directory;
        open.verify_key = options.verify_key;
        open.trust_policy = options.trust_policy;
        open.decrypt_key = options.decrypt_key;
        open.stream_plan = true; // one chunk in memory at a time, each checked as it is read
        deploy::Manifest const manifest = deploy::read_manifest(options.manifest, open);
        return deploy::DeployedEngine::open(manifest_entry(manifest, options), open);
    }
    if (options.entry.empty()) {
        throw InvalidArgument("give ENTRY, or --manifest with --recipe");
    }
    deploy::EngineFileOptions open;
    open.verify_key = options.verify_key;
    open.decrypt_key = options.decrypt_key;
    std::filesystem::path const path = resolve_entry(directory, options.entry);
    try {
        return deploy::DeployedEngine::open_file(path, open);
    } catch (UntrustedEngineError const&) {
        if (options.verify_key.empty() || !in_directory(path, directory) ||
            ends_in_signature(path)) {
            throw;
        }
        throw UntrustedEngineError(
            "cache entry '" + path.string() +
                "' has no signature for --verify-key to check: entries in the cache folder are "
                "stored without their signature trailer: export from a signed manifest "
                "(--manifest with --verify-key/--trust-policy) to verify a publisher's signature",
            path);
    }
}

// Refuses an output that is a symbolic link or not a regular file: the plan only ever replaces a
// file.
void check_output(std::filesystem::path const& plan) {
    auto const status = platform::status(plan, platform::Follow::no_links);
    if (!status) {
        if (errno == ENOENT) {
            return;
        }
        throw_file_error("cannot read the metadata of the output", plan, errno);
    }
    if (status->kind == platform::FileKind::link) {
        throw FileError("the output " + plan.string() +
                            " is a symbolic link: give the file to write itself",
                        plan);
    }
    if (status->kind != platform::FileKind::regular) {
        throw FileError("the output " + plan.string() + " is not a regular file", plan);
    }
}

int export_plan(ExportOptions const& options) {
    if (options.plan.empty()) {
        throw InvalidArgument("--plan FILE is empty");
    }
    std::filesystem::path const plan{options.plan};
    check_output(plan);
    deploy::DeployedEngine const engine = open_checked(options);
    deploy::PlanReader reader(engine);
    AtomicFile output(plan); // removed unless committed: a refused chunk leaves FILE as it was
    std::uint64_t offset = 0;
    while (offset < reader.size()) {
        std::size_t available = 0;
        std::byte const* const checked = reader.checked_at(offset, available);
        output.write(std::span(checked, available));
        output.start_writeback();
        offset += available;
    }
    reader.check_rest();
    if (!reader.checked_whole()) { // check_rest throws first: a guard, never reached
        throw CorruptEngineError("the plan of " + engine.path().string() +
                                     " was not checked whole; nothing was written",
                                 engine.path());
    }
    check_output(plan); // a link planted meanwhile is refused, not replaced
    output.commit();
    std::cout << plan.string() << ": the plan of " << engine.entry().file_name << ", "
              << reader.size() << " bytes, checked"
              << (engine.signer() ? ", signed by " + *engine.signer() : std::string()) << "\n";
    return kExitSuccess;
}

} // namespace

void add_cache_export_command(CLI::App& cache, Action& action) {
    auto options = std::make_shared<ExportOptions>();
    CLI::App* command =
        cache.add_subcommand("export", "Write the verified plan of one saved engine to a file");
    command->footer(
        "Write the plan of one saved engine (the bytes TensorRT deserializes) to a file, "
        "after checking every byte of it as opening it would: header, plan checksum, "
        "chunk digests and, with --verify-key, the signature. Nothing is written when "
        "a check fails. Exit status 0 written, 1 refused or missing, 2 invalid usage");
    CLI::Option* entry =
        command->add_option("ENTRY", options->entry,
                            "File name in the cache directory, a unique prefix of it, the name of "
                            "its recipe, or a path");
    command->add_option("--plan", options->plan, "The file to write the plan to")
        ->type_name("FILE")
        ->required();
    add_cache_dir_option(*command, options->cache_dir);
    command
        ->add_option("--verify-key", options->verify_key,
                     "An Ed25519 verify key (PEM public key): with --manifest, the key that "
                     "signed the manifest; with ENTRY, the key of the file's signature trailer "
                     "(entries the cache saves have none)")
        ->type_name("KEY");
    CLI::Option* manifest =
        command
            ->add_option("--manifest", options->manifest,
                         "Choose the entry from this deployment manifest instead of ENTRY")
            ->type_name("M")
            ->excludes(entry);
    CLI::Option* recipe =
        command->add_option("--recipe", options->recipe, "With --manifest: the recipe's entry")
            ->type_name("R")
            ->needs(manifest);
    manifest->needs(recipe);
    command
        ->add_option("--gpu", options->gpu,
                     "With --manifest: the entry that runs on this compute capability (sm89, 8.9)")
        ->type_name("SM")
        ->needs(manifest);
    command
        ->add_option("--trust-policy", options->trust_policy,
                     "With --manifest: a trust policy file the signed manifest must satisfy")
        ->type_name("POLICY")
        ->needs(manifest);
    command
        ->add_option("--decrypt-key", options->decrypt_key,
                     "For an encrypted engine: the private key (X25519, PEM) of one of its "
                     "recipients; the plan is written decrypted, each chunk authenticated first")
        ->type_name("KEY");
    command->callback([options, &action] {
        action = [options] {
            return run_reporting_errors(kCommand, [&] { return export_plan(*options); });
        };
    });
}

} // namespace tensoracle::cli
