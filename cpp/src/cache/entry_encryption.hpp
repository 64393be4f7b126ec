// Private to the core: encrypting, re-wrapping and decrypting a saved entry in place (`tensoracle
// cache encrypt` and `cache decrypt`). Each reads the entry whole and checks it as Store::read
// does (header, body checksum and chunk digests), then replaces it atomically (AtomicFile): a
// refusal, a crash or a kill leaves the entry as it was. The caller holds the entry's exclusive
// lock. The plan is held in this process's memory while it is sealed or opened (about twice its
// size), never written anywhere but the entry, and only in the form asked for.
#pragma once

#include "encryption/recipient_key.hpp"

#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace tensoracle {

// What an encryption of an entry changes: the recipients it adds and the key ids (or unique
// prefixes of them, at least 8 digits) it removes.
struct RecipientChange {
    std::span<encryption::RecipientKey const> add;
    std::span<std::string const> remove;
};

// What the entry became.
struct EntryEncryption {
    bool was_encrypted = false;
    std::vector<std::string> recipients; // the key ids, sorted
};

// A plain entry is sealed under a fresh data key for `change.add` (removals are refused: it has
// no recipients). An encrypted entry gets its recipients changed without its body being touched:
// `key`, the private key of one of its recipients, unwraps the data key, which is wrapped for
// each key added; removed recipients' copies are dropped. Throws InvalidArgument when the
// change is empty, removes every recipient or names a key the entry does not list, EngineKeyError
// when an encrypted entry's change comes without a key that opens it, and the errors of a read
// (CorruptEngineError, FileError).
EntryEncryption encrypt_entry(std::filesystem::path const& path, RecipientChange const& change,
                              encryption::DecryptKey const* key);

// The encrypted entry at `path` replaced by its plan, unsealed (engine file format 2). Throws
// EngineKeyError when `key` does not open it, InvalidArgument when it is not encrypted,
// CorruptEngineError when a chunk does not authenticate.
void decrypt_entry(std::filesystem::path const& path, encryption::DecryptKey const& key);

} // namespace tensoracle
