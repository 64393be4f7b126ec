// Encrypting and decrypting saved entries in place (entry_encryption.hpp).
#include "cache/entry_encryption.hpp"

#include "cache/engine_file.hpp"
#include "cache/engine_writing.hpp"
#include "cache/entry_file.hpp"
#include "cache/store.hpp"
#include "encryption/plan_encryption.hpp"
#include "io/atomic_file.hpp"
#include "io/file_contents.hpp"
#include "io/platform.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <cerrno>

namespace tensoracle {
namespace {

// The entry read whole and checked: its header and where its body lies.
struct ReadEntry {
    FileContents contents;
    DecodedHeader decoded;
    std::span<std::byte const> body() const {
        return contents.bytes().subspan(static_cast<std::size_t>(decoded.plan_offset));
    }
};

ReadEntry read_entry(std::filesystem::path const& path) {
    auto entry = open_regular_entry(path, {"saved engine", "saved engine "});
    if (!entry) {
        throw_file_error("cannot open saved engine", path, ENOENT);
    }
    FileContents contents(entry->file.get(), path);
    DecodedHeader decoded = decode_engine_header(contents.bytes(), contents.bytes().size(), path);
    auto const body = contents.bytes().subspan(static_cast<std::size_t>(decoded.plan_offset));
    if (auto const damage = plan_damage(body, decoded.header)) {
        throw CorruptEngineError("saved engine '" + path.string() + "' is unusable: " + *damage,
                                 path);
    }
    return {std::move(contents), std::move(decoded)};
}

// The key id that `name` (a whole id or a prefix of at least 8 digits) names among `listed`.
std::string listed_id(std::string const& name, encryption::PlanEncryption const& encryption) {
    std::vector<std::string> found;
    for (auto const& wrapped : encryption.recipients) {
        if (name.size() >= 8 && wrapped.recipient.starts_with(name)) {
            found.push_back(wrapped.recipient);
        }
    }
    if (found.size() != 1) {
        throw InvalidArgument(
            "the recipient to remove '" + name + "' " +
                (found.empty() ? "is none of the entry's" : "names several of the entry's") +
                " recipients (" + encryption::recipient_list(encryption) +
                "): give its key id, or a unique prefix of at least 8 hex digits",
            Refusal{.subject = name,
                    .field = "encryption.recipients",
                    .observed = name,
                    .expected = "one of " + encryption::recipient_list(encryption)});
    }
    return found.front();
}

// An encrypted entry's recipients changed: its header rewritten, its body copied as it is.
EntryEncryption rewrap_entry(std::filesystem::path const& path, EntryFile& opened,
                             DecodedHeader const& decoded, RecipientChange const& change,
                             encryption::DecryptKey const* key) {
    EngineHeader const& header = decoded.header;
    if (key == nullptr) {
        throw EngineKeyError("saved engine '" + path.string() + "' is encrypted already (for " +
                                 encryption::recipient_list(*header.encryption) +
                                 "): give the private key of one of its recipients to change them",
                             Refusal{.subject = path.string(),
                                     .field = "encryption.recipients",
                                     .observed = "no key given",
                                     .expected = "the private key of one of " +
                                                 encryption::recipient_list(*header.encryption),
                                     .remedy = "pass --key"});
    }
    encryption::Key const data_key = encryption::open_data_key(*header.encryption, *key, path);
    encryption::PlanEncryption changed = *header.encryption;
    for (std::string const& name : change.remove) {
        std::string const id = listed_id(name, *header.encryption);
        std::erase_if(changed.recipients, [&](encryption::WrappedKey const& wrapped) {
            return wrapped.recipient == id;
        });
    }
    encryption::PlanEncryption const added =
        change.add.empty() ? encryption::PlanEncryption{}
                           : encryption::encryption_for(data_key, changed.plan_size, change.add);
    for (auto const& wrapped : added.recipients) {
        std::erase_if(changed.recipients, [&](encryption::WrappedKey const& listed) {
            return listed.recipient == wrapped.recipient;
        });
        changed.recipients.push_back(wrapped);
    }
    if (changed.recipients.empty()) {
        throw InvalidArgument("saved engine '" + path.string() +
                              "' would have no recipient left: decrypt it instead "
                              "(tensoracle cache decrypt)");
    }
    std::sort(changed.recipients.begin(), changed.recipients.end(),
              [](auto const& a, auto const& b) { return a.recipient < b.recipient; });
    EngineHeader rewrapped = header;
    rewrapped.encryption = changed;
    // The body as it was, copied (inside the kernel where it can): only the header changes, and
    // nothing of the plan is read into this process, checked or sealed again; the header's chunk
    // digests still describe it, and an open checks them.
    AtomicFile file(path);
    file.write(encode_engine_prefix(rewrapped));
    file.copy_from(opened.file.get(), decoded.plan_offset, header.plan_size, path);
    {
        // Closed before the rename: Windows renames nothing over a file that is open.
        platform::Descriptor const closing = std::move(opened.file);
    }
    file.commit();
    return {true, encryption::recipient_ids(changed)};
}

// A plain entry sealed under a fresh data key for `recipients`.
EntryEncryption seal_entry(std::filesystem::path const& path,
                           std::span<encryption::RecipientKey const> recipients) {
    ReadEntry const entry = read_entry(path);
    EngineHeader const& header = entry.decoded.header;
    AtomicFile file(path);
    EngineHeader const sealed =
        write_engine(file, header.conditions, header.references, entry.body(), recipients);
    file.commit();
    return {false, encryption::recipient_ids(*sealed.encryption)};
}

} // namespace

EntryEncryption encrypt_entry(std::filesystem::path const& path, RecipientChange const& change,
                              encryption::DecryptKey const* key) {
    if (change.add.empty() && change.remove.empty()) {
        throw InvalidArgument("nothing to change: give the recipients to add (their public keys) "
                              "or to remove");
    }
    // The header first: an encrypted entry's recipients change without its body being read.
    auto opened = open_regular_entry(path, {"saved engine", "saved engine "});
    if (!opened) {
        throw_file_error("cannot open saved engine", path, ENOENT);
    }
    DecodedHeader const decoded =
        decode_engine_header(read_engine_prefix(opened->file.get(), opened->status.size, path),
                             opened->status.size, path);
    if (decoded.header.encryption) {
        return rewrap_entry(path, *opened, decoded, change, key);
    }
    if (!change.remove.empty()) {
        throw InvalidArgument("saved engine '" + path.string() +
                              "' is not encrypted: it has no recipients to remove");
    }
    opened.reset(); // read again whole, and closed before the rename (Windows)
    return seal_entry(path, change.add);
}

void decrypt_entry(std::filesystem::path const& path, encryption::DecryptKey const& key) {
    ReadEntry const entry = read_entry(path);
    EngineHeader const& header = entry.decoded.header;
    if (!header.encryption) {
        throw InvalidArgument("saved engine '" + path.string() + "' is not encrypted");
    }
    std::vector<std::byte> plan =
        encryption::opened_plan(*header.encryption, key, entry.body(), path);
    AtomicFile file(path);
    write_engine(file, header.conditions, header.references, plan);
    file.commit();
    encryption::wipe(plan);
}

} // namespace tensoracle
