// Reading a trust policy (trust_policy.hpp): every key read as an Ed25519 public key, named by
// its own fingerprint, so that one key can never count twice towards the threshold.
#include "tensoracle/deploy/trust_policy.hpp"

#include "deploy/json_fields.hpp"
#include "io/file_bytes.hpp"
#include "remote/signature.hpp"
#include "tensoracle/errors.hpp"
#include "text/bounded_json.hpp"

#include <string>

namespace tensoracle::deploy {
namespace {

// A policy lists a few keys; 1 MiB holds thousands.
constexpr std::uint64_t kMaxTrustPolicyBytes = std::uint64_t{1} << 20U;

} // namespace

TrustPolicy parse_trust_policy(std::string_view text, std::string const& name) {
    Json document;
    try {
        document = parse_bounded_json(text, {.max_bytes = kMaxTrustPolicyBytes});
    } catch (JsonLimitError const& error) {
        throw InvalidArgument(name + " is not a trust policy: " + error.what());
    }
    Fields const fields(document, name);
    fields.schema_version(kTrustPolicySchemaVersion);
    TrustPolicy policy;
    Json const& keys = fields.any("keys");
    if (!keys.is_object() || keys.empty()) {
        fields.refuse("keys", keys, "an object of one or more key ids and their PEM public keys");
    }
    for (auto const& [keyid, pem] : keys.items()) {
        JsonPlace const place = fields.place("keys").key(keyid);
        std::string const where = place.text();
        if (!pem.is_string()) {
            refuse_json<InvalidArgument>(place, pem, "a PEM public key");
        }
        VerifyKey const key = VerifyKey::from_pem(pem.get<std::string>(), where);
        if (key.fingerprint() != keyid) {
            throw InvalidArgument(
                where + ": the key id is not this key's fingerprint, " + key.fingerprint(),
                Refusal{.subject = name,
                        .field = "keys[\"" + keyid + "\"]",
                        .observed = keyid,
                        .expected = key.fingerprint() + " (the key's fingerprint)"});
        }
        policy.keys.push_back({keyid, pem.get<std::string>()});
    }
    policy.threshold = fields.count("threshold");
    if (policy.threshold == 0 || policy.threshold > policy.keys.size()) {
        throw InvalidArgument(
            fields.at("threshold") + " is " + std::to_string(policy.threshold) +
                ", expected 1 to the number of keys, " + std::to_string(policy.keys.size()),
            Refusal{.subject = name,
                    .field = "threshold",
                    .observed = std::to_string(policy.threshold),
                    .expected = "1 to the number of keys, " + std::to_string(policy.keys.size())});
    }
    if (Json const* minimum = fields.find("minimum_version"); minimum != nullptr) {
        policy.minimum_version = fields.count("minimum_version");
    }
    return policy;
}

TrustPolicy read_trust_policy(std::filesystem::path const& path) {
    auto const bytes = read_file_bytes(path, kMaxTrustPolicyBytes);
    if (!bytes) {
        throw InvalidArgument("trust policy '" + path.string() + "' is larger than the limit of " +
                              std::to_string(kMaxTrustPolicyBytes) + " bytes");
    }
    return parse_trust_policy(std::string_view(bytes->data(), bytes->size()),
                              "trust policy '" + path.string() + "'");
}

TrustPolicy single_key_policy(std::string const& public_key_pem, std::string const& origin) {
    VerifyKey const key = VerifyKey::from_pem(public_key_pem, origin);
    return {{{key.fingerprint(), public_key_pem}}, 1, 0};
}

} // namespace tensoracle::deploy
