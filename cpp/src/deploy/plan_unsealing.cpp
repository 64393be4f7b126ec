// Opening the plan of an encrypted deployed engine (plan_unsealing.hpp).
#include "deploy/plan_unsealing.hpp"

#include "cache/decrypt_key_check.hpp"
#include "encryption/plan_encryption.hpp"
#include "encryption/plan_sealing.hpp"
#include "tensoracle/errors.hpp"

namespace tensoracle::deploy {

std::optional<encryption::DecryptKey>
decrypt_key_of(std::filesystem::path const& file, std::string const& pem, std::string_view where) {
    if (!file.empty() && !pem.empty()) {
        throw InvalidArgument(std::string(where) +
                              ": set decrypt_key (a key file) or decrypt_key_pem (its text), "
                              "not both");
    }
    if (!file.empty()) {
        return encryption::DecryptKey::from_pem_file(file);
    }
    if (!pem.empty()) {
        return encryption::DecryptKey::from_pem(pem, std::string(where) + "::decrypt_key_pem");
    }
    return std::nullopt;
}

Unsealed unseal_plan(std::filesystem::path const& path, EngineHeader const& header,
                     std::optional<encryption::DecryptKey> const& key, std::string_view pass,
                     std::optional<std::span<std::byte const>> body) {
    check_decrypt_key(header, key ? &*key : nullptr, path, "deployed engine", pass);
    if (!header.encryption) {
        return {};
    }
    encryption::PlanEncryption const& sealing = *header.encryption;
    Unsealed unsealed;
    unsealed.data_key = encryption::open_data_key(sealing, *key, path);
    unsealed.plan_size = sealing.plan_size;
    if (body) { // held whole; streamed, a PlanReader opens each chunk as it hands it on
        unsealed.plan = encryption::open_plan(*unsealed.data_key, sealing.plan_size, *body, path);
    }
    return unsealed;
}

} // namespace tensoracle::deploy
