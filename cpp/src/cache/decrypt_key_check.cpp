// Whether an engine may be opened with the decrypt key given (decrypt_key_check.hpp).
#include "cache/decrypt_key_check.hpp"

#include "encryption/plan_encryption.hpp"
#include "tensoracle/errors.hpp"

#include <string>

namespace tensoracle {

void check_decrypt_key(EngineHeader const& header, encryption::DecryptKey const* key,
                       std::filesystem::path const& path, std::string_view noun,
                       std::string_view pass) {
    std::string const where = std::string(noun) + " '" + path.string() + "'";
    if (!header.encryption) {
        if (key != nullptr) {
            throw EngineKeyError(
                where + " is not encrypted, but a decrypt key is set (" + key->origin() +
                    "): an engine that should be encrypted was replaced by a plain one, or the "
                    "key is set for another engine; nothing was handed on",
                Refusal{.subject = path.string(),
                        .field = "encryption",
                        .observed = "missing (engine file format " +
                                    std::string(header.chunks ? "2" : "1") + ")",
                        .expected = "an engine encrypted for key " +
                                    key->recipient().id().substr(0, 16) + "…",
                        .remedy = "open plain engines without a decrypt key"});
        }
        return;
    }
    if (key == nullptr) {
        encryption::PlanEncryption const& sealing = *header.encryption;
        throw EngineKeyError(
            where + " is encrypted (for " + encryption::recipient_list(sealing) +
                "): pass the private key of one of its recipients (" + std::string(pass) + ")",
            Refusal{.subject = path.string(),
                    .field = "encryption.recipients",
                    .observed = "no decrypt key",
                    .expected = "the private key of one of " + encryption::recipient_list(sealing),
                    .remedy = std::string(pass)});
    }
}

} // namespace tensoracle
