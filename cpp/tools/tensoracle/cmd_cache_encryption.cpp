// `tensoracle cache encrypt ENTRY --to KEY.pub ...` and `tensoracle cache decrypt ENTRY --key KEY`:
// a saved entry re-saved sealed for recipients, its recipients changed, or its plan unsealed
// (cache/entry_encryption.hpp), under the entry's exclusive lock.
#include "cache/entry_details.hpp"
#include "cache/entry_encryption.hpp"
#include "cache/store.hpp"
#include "commands.hpp"
#include "encryption/recipient_key.hpp"
#include "io/file_lock.hpp"
#include "tensoracle/errors.hpp"
#include "text/message_text.hpp"

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tensoracle::cli {
namespace {

struct EncryptionOptions {
    std::string entry;
    std::string cache_dir;
    std::vector<std::string> to;
    std::vector<std::string> remove;
    std::string key;
};

// The entry's path and its exclusive lock, held until the result goes.
struct LockedEntry {
    std::filesystem::path path;
    FileLock lock;
};

LockedEntry lock_entry(EncryptionOptions const& options) {
    std::filesystem::path const directory = resolve_cache_directory(options.cache_dir);
    std::filesystem::path path = resolve_entry(directory, options.entry);
    Store const store(directory);
    FileLock lock = FileLock::acquire(store.lock_path_for(path), LockMode::exclusive);
    return {std::move(path), std::move(lock)};
}

std::string shortened(std::vector<std::string> const& ids) {
    std::vector<std::string> shown;
    shown.reserve(ids.size());
    for (std::string const& id : ids) {
        shown.push_back(id.substr(0, 16));
    }
    return joined(shown, ", ");
}

int encrypt(EncryptionOptions const& options) {
    std::vector<encryption::RecipientKey> recipients;
    recipients.reserve(options.to.size());
    for (std::string const& file : options.to) {
        recipients.push_back(encryption::RecipientKey::from_pem_file(file));
    }
    std::optional<encryption::DecryptKey> key;
    if (!options.key.empty()) {
        key = encryption::DecryptKey::from_pem_file(options.key);
    }
    LockedEntry const entry = lock_entry(options);
    EntryEncryption const done =
        encrypt_entry(entry.path, {recipients, options.remove}, key ? &*key : nullptr);
    std::cout << entry.path.filename().string() << ": "
              << (done.was_encrypted ? "recipients changed (the plan's encryption is unchanged)"
                                     : "encrypted")
              << "; recipients " << shortened(done.recipients) << "\n";
    return kExitSuccess;
}

int decrypt(EncryptionOptions const& options) {
    encryption::DecryptKey const key = encryption::DecryptKey::from_pem_file(options.key);
    LockedEntry const entry = lock_entry(options);
    decrypt_entry(entry.path, key);
    std::cout << entry.path.filename().string() << ": decrypted\n";
    return kExitSuccess;
}

CLI::Option* add_entry_option(CLI::App& command, EncryptionOptions& options) {
    return command
        .add_option("ENTRY", options.entry,
                    "File name in the cache directory, a unique prefix of it, the name of its "
                    "recipe, or a path")
        ->required();
}

} // namespace

void add_cache_encryption_commands(CLI::App& cache, Action& action) {
    auto encrypt_options = std::make_shared<EncryptionOptions>();
    CLI::App* encrypt_command = cache.add_subcommand(
        "encrypt", "Encrypt a saved engine for its recipients, or change its recipients");
    encrypt_command->footer(
        "A plain entry is sealed with a fresh data key (AES-256-GCM), wrapped for each --to "
        "key (X25519). For an encrypted entry, --key (the private key of one of its recipients) "
        "unwraps its data key, which is wrapped for each --to key; --remove drops a recipient. "
        "The entry is checked first and replaced atomically. Exit status 0 done, 1 refused, 2 "
        "invalid usage");
    add_entry_option(*encrypt_command, *encrypt_options);
    add_cache_dir_option(*encrypt_command, encrypt_options->cache_dir);
    encrypt_command
        ->add_option("--to", encrypt_options->to,
                     "A recipient's X25519 public key (PEM, `openssl pkey -in KEY -pubout`); "
                     "repeat for several")
        ->type_name("PUB");
    encrypt_command
        ->add_option("--remove", encrypt_options->remove,
                     "A recipient to remove: its key id, or a unique prefix of at least 8 digits")
        ->type_name("KEYID");
    encrypt_command
        ->add_option("--key", encrypt_options->key,
                     "For an encrypted entry: the private key of one of its recipients")
        ->type_name("KEY");
    encrypt_command->callback([encrypt_options, &action] {
        action = [encrypt_options] {
            return run_reporting_errors("tensoracle cache encrypt",
                                        [&] { return encrypt(*encrypt_options); });
        };
    });

    auto decrypt_options = std::make_shared<EncryptionOptions>();
    CLI::App* decrypt_command =
        cache.add_subcommand("decrypt", "Replace an encrypted saved engine by its plain plan");
    decrypt_command->footer("Every chunk is authenticated first; the entry is replaced "
                            "atomically. Exit status 0 done, 1 refused, 2 invalid usage");
    add_entry_option(*decrypt_command, *decrypt_options);
    add_cache_dir_option(*decrypt_command, decrypt_options->cache_dir);
    decrypt_command
        ->add_option("--key", decrypt_options->key,
                     "The private key of one of its recipients (PEM, `openssl genpkey "
                     "-algorithm x25519`)")
        ->type_name("KEY")
        ->required();
    decrypt_command->callback([decrypt_options, &action] {
        action = [decrypt_options] {
            return run_reporting_errors("tensoracle cache decrypt",
                                        [&] { return decrypt(*decrypt_options); });
        };
    });
}

} // namespace tensoracle::cli
