// `tensoracle manifest sign FILE --key KEY [--key KEY...] [-o OUT] [--version N]
// [--expires-in DAYS]`: the deployment manifest FILE written as a signed manifest (a DSSE envelope
// over an in-toto Statement, tensoracle/deploy/signed_manifest.hpp), atomically; or, when FILE is
// signed already, the keys' signatures added to it.
#include "commands.hpp"
#include "deploy/manifest_document.hpp"
#include "deploy/manifest_signing.hpp"
#include "io/atomic_file.hpp"
#include "io/file_bytes.hpp"
#include "remote/signature.hpp"
#include "tensoracle/deploy/manifest.hpp"
#include "tensoracle/errors.hpp"
#include "text/message_text.hpp"
#include "text/size_text.hpp"

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tensoracle::cli {
namespace {

constexpr char const* kCommand = "tensoracle manifest sign";
constexpr double kDefaultExpiryDays = 365;

struct SignOptions {
    std::string manifest;
    std::vector<std::string> keys;
    std::string output;
    std::optional<std::uint64_t> version;
    std::string expires_in;
};

int sign(SignOptions const& options) {
    auto const bytes = read_file_bytes(options.manifest, deploy::kMaxManifestFileBytes);
    if (!bytes) {
        std::cerr << kCommand << ": " << options.manifest << " is larger than the limit of "
                  << deploy::kMaxManifestFileBytes << " bytes of a manifest\n";
        return kExitFailure;
    }
    std::vector<SigningKey> keys;
    for (std::string const& key : options.keys) {
        keys.push_back(SigningKey::from_pem_file(key));
    }
    std::string const text(bytes->data(), bytes->size());
    bool signed_already = false;
    try {
        signed_already = deploy::is_envelope(deploy::manifest_json(text, options.manifest));
    } catch (InvalidArgument const& error) {
        std::cerr << kCommand << ": " << error.what() << "\n";
        return kExitFailure;
    }
    std::optional<deploy::ManifestRelease> release;
    std::int64_t const now = now_nanoseconds();
    if (!signed_already || options.version || !options.expires_in.empty()) {
        std::int64_t const lasting =
            options.expires_in.empty()
                ? static_cast<std::int64_t>(kDefaultExpiryDays) * kNanosecondsPerDay
                : parse_days_nanoseconds(options.expires_in, "--expires-in");
        // By default the signing time in seconds since 1970: it rises with every release.
        std::uint64_t const version =
            options.version.value_or(static_cast<std::uint64_t>(now / 1'000'000'000));
        release = deploy::ManifestRelease{
            version, format_utc_time(lasting > INT64_MAX - now ? INT64_MAX : now + lasting)};
    }
    std::string signed_text;
    try {
        signed_text = deploy::sign_manifest(text, options.manifest, release, keys);
    } catch (InvalidArgument const& error) { // the manifest, not the command line, is wrong
        std::cerr << kCommand << ": " << error.what() << "\n";
        return kExitFailure;
    }
    std::string const output = options.output.empty() ? options.manifest : options.output;
    AtomicFile file(output);
    file.write(signed_text);
    file.commit();
    std::vector<std::string> ids;
    ids.reserve(keys.size());
    for (SigningKey const& key : keys) {
        ids.push_back(deploy::key_id(key));
    }
    std::cerr << kCommand << ": "
              << (signed_already ? "added the signatures of key ids " : "signed by key ids ")
              << joined(ids, ", ");
    if (release) {
        std::cerr << ", version " << release->version << ", expires " << release->expires;
    }
    std::cerr << ": wrote " << output << "\n";
    return kExitSuccess;
}

} // namespace

void add_manifest_sign_command(CLI::App& manifest, Action& action) {
    auto options = std::make_shared<SignOptions>();
    CLI::App* command = manifest.add_subcommand(
        "sign", "Sign a deployment manifest, or add signatures to a signed one");
    command->footer(
        "Sign a deployment manifest (a DSSE envelope over an in-toto Statement whose "
        "subjects are the engine files): applications given the verify key or a trust "
        "policy then open only the engines it names. A manifest signed already gets "
        "these keys' signatures added. Exit status 0 success, 1 a manifest that cannot be "
        "signed, 2 invalid usage");
    command->add_option("FILE", options->manifest, "The manifest (tensoracle build --manifest)")
        ->required();
    command
        ->add_option("--key", options->keys,
                     "An Ed25519 signing key (PEM, 'openssl genpkey -algorithm ed25519'); repeat "
                     "it for several signatures")
        ->required()
        ->type_name("KEY");
    command->add_option("-o,--output", options->output,
                        "Where to write the signed manifest (default: FILE itself)");
    command
        ->add_option("--version", options->version,
                     "The release's version, raised with every release (default: the time in "
                     "seconds since 1970); an application refuses a lower version than one it "
                     "accepted before")
        ->type_name("N");
    command
        ->add_option("--expires-in", options->expires_in,
                     "Days until applications refuse the manifest (default 365): republish "
                     "before then")
        ->type_name("DAYS");
    command->callback([options, &action] {
        action = [options] {
            return run_reporting_errors(kCommand, [&] { return sign(*options); });
        };
    });
}

} // namespace tensoracle::cli
