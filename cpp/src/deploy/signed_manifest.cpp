// Verifying a signed deployment manifest (signed_manifest.hpp): the envelope's signatures over
// DSSE's pre-authentication encoding first, counted once per trusted key; only then is the
// payload read, as an in-toto Statement whose predicate is the manifest and whose subjects are
// its files.
#include "tensoracle/deploy/signed_manifest.hpp"

#include "cache/store.hpp"
#include "deploy/json_fields.hpp"
#include "deploy/manifest_document.hpp"
#include "deploy/manifest_envelope.hpp"
#include "deploy/manifest_versions.hpp"
#include "deploy/verify_key_option.hpp"
#include "io/hash.hpp"
#include "remote/signature.hpp"
#include "tensoracle/errors.hpp"
#include "text/base64.hpp"
#include "text/message_text.hpp"
#include "text/size_text.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace tensoracle::deploy {
namespace {

// The key ids of `policy` that signed `envelope`, each key once: a key the policy lists twice
// (under two ids, or given twice as --key) counts once towards the threshold.
std::vector<std::string> accepting_keys(Envelope const& envelope, TrustPolicy const& policy) {
    std::string const encoded =
        pre_authentication_encoding(envelope.payload_type, envelope.payload);
    auto const message = std::as_bytes(std::span(encoded));
    std::vector<std::string> accepted;
    std::set<std::string> counted; // the fingerprints of the keys counted
    for (TrustedKey const& trusted : policy.keys) {
        VerifyKey const key = VerifyKey::from_pem(trusted.public_key_pem, "key " + trusted.keyid);
        if (!counted.insert(key.fingerprint()).second) {
            continue;
        }
        bool const signed_by_key = std::any_of(
            envelope.signatures.begin(), envelope.signatures.end(),
            [&](EnvelopeSignature const& signature) { return key.verify(message, signature.sig); });
        if (signed_by_key) {
            accepted.push_back(trusted.keyid);
        }
    }
    return accepted;
}

std::string listed(std::vector<std::string> const& names) {
    return names.empty() ? std::string("none") : joined(names, ", ");
}

} // namespace

Manifest statement_manifest(std::span<std::byte const> payload, std::string const& name) {
    std::string const where = name + " (the signed payload)";
    Json const statement = manifest_json(
        std::string_view(reinterpret_cast<char const*>(payload.data()), payload.size()), where);
    Fields const fields(statement, where);
    if (std::string const type = fields.text("_type"); type != kStatementType) {
        fields.refuse("_type", type, (std::string("\"") + kStatementType + "\"").c_str());
    }
    if (std::string const type = fields.text("predicateType"); type != kManifestPredicateType) {
        fields.refuse("predicateType", type,
                      (std::string("\"") + kManifestPredicateType + "\"").c_str());
    }
    Json const& predicate = fields.any("predicate");
    Manifest manifest = manifest_of_document(predicate, fields.place("predicate"));
    Fields const release(predicate, fields.place("predicate"));
    manifest.release = ManifestRelease{release.count("version"), release.text("expires")};
    (void)parse_utc_time(manifest.release->expires, release.at("expires"));
    // Subjects: each entry's file, by name, with the SHA-256 of the whole file.
    Json const& subjects = fields.any("subject");
    if (!subjects.is_array()) {
        fields.refuse("subject", subjects, "an array");
    }
    std::map<std::string, std::string> subject_digests;
    for (std::size_t i = 0; i < subjects.size(); ++i) {
        Fields const subject(subjects[i], fields.place("subject").index(i));
        Fields const digest(subject.any("digest"), subject.place("digest"));
        std::string const sha256 = digest.text("sha256");
        if (!is_sha256_hex(sha256)) {
            digest.refuse("sha256", sha256, "64 lowercase hex digits");
        }
        subject_digests[subject.text("name")] = sha256;
    }
    std::set<std::string> named;
    for (std::size_t i = 0; i < manifest.entries.size(); ++i) {
        ManifestEntry const& entry = manifest.entries[i];
        std::string field = "predicate.entries[";
        field += std::to_string(i);
        field += ']';
        std::string at = where;
        at += ": ";
        at += field;
        if (!entry.sha256 || !entry.header_sha256) {
            char const* const digest = entry.sha256 ? "header_sha256" : "sha256";
            throw InvalidArgument(
                at + " records no " + digest + ": a signed manifest binds every entry's file",
                Refusal{.subject = name,
                        .field = field + '.' + digest,
                        .observed = "none",
                        .expected = "the digest of the entry's file (a signed manifest binds "
                                    "every entry's file)"});
        }
        auto const subject = subject_digests.find(entry.file_name);
        if (subject == subject_digests.end() || subject->second != *entry.sha256) {
            throw UntrustedEngineError(
                at + " (" + entry.file_name + ", sha256 " + *entry.sha256 + ") is not a subject " +
                    (subject == subject_digests.end()
                         ? std::string("of the statement")
                         : "(its subject's sha256 is " + subject->second + ")"),
                Refusal{.subject = name,
                        .field = field + ".sha256",
                        .observed = *entry.sha256,
                        .expected = subject == subject_digests.end()
                                        ? "a subject of the statement named " + entry.file_name
                                        : subject->second + " (its subject's sha256)"});
        }
        named.insert(entry.file_name);
    }
    if (named.size() != subject_digests.size()) {
        for (auto const& [file_name, digest] : subject_digests) {
            if (named.count(file_name) == 0) {
                std::string message = where;
                message += ": subject ";
                message += file_name;
                message += " is no entry of the manifest";
                throw UntrustedEngineError(message,
                                           Refusal{.subject = name,
                                                   .field = "subject",
                                                   .observed = file_name,
                                                   .expected = "an entry of the manifest"});
            }
        }
    }
    return manifest;
}

namespace {

// verify_signed_manifest of the envelope's document, parsed once by the caller.
Manifest verified_manifest(Json const& document, std::string const& name, TrustPolicy const& policy,
                           std::int64_t now) {
    if (policy.keys.empty() || policy.threshold == 0 || policy.threshold > policy.keys.size()) {
        throw InvalidArgument("the trust policy has " + std::to_string(policy.keys.size()) +
                              " keys and threshold " + std::to_string(policy.threshold) +
                              ": it needs 1 to the number of keys");
    }
    Envelope const envelope = read_envelope(document, name);
    std::vector<std::string> const signers = accepting_keys(envelope, policy);
    if (signers.size() < policy.threshold) {
        std::vector<std::string> claimed;
        for (EnvelopeSignature const& signature : envelope.signatures) {
            claimed.push_back(signature.keyid.empty() ? std::string("(no key id)")
                                                      : signature.keyid);
        }
        throw UntrustedEngineError(
            name + ": " + std::to_string(signers.size()) + " of the trust policy's keys (" +
                listed(signers) + ") signed the manifest, and it requires " +
                std::to_string(policy.threshold) + " of " + std::to_string(policy.keys.size()) +
                "; the envelope has " + std::to_string(envelope.signatures.size()) +
                " signatures, by key ids " + listed(claimed),
            Refusal{.subject = name,
                    .field = "signatures",
                    .observed = std::to_string(signers.size()) + " of the trust policy's keys (" +
                                listed(signers) + ")",
                    .expected = std::to_string(policy.threshold) + " of " +
                                std::to_string(policy.keys.size())});
    }
    Manifest manifest = statement_manifest(envelope.payload, name);
    std::int64_t const expires = parse_utc_time(manifest.release->expires, "expires");
    if (now >= expires) {
        throw UntrustedEngineError(
            name + ": the signed manifest expired at " + manifest.release->expires +
                " (it is now " + format_utc_time(now) + "): ask its publisher for a current one",
            Refusal{.subject = name,
                    .field = "predicate.expires",
                    .observed = manifest.release->expires,
                    .expected = "a time after " + format_utc_time(now),
                    .remedy = "ask its publisher for a current one"});
    }
    if (manifest.release->version < policy.minimum_version) {
        throw UntrustedEngineError(
            name + ": version " + std::to_string(manifest.release->version) +
                " is lower than the minimum version " + std::to_string(policy.minimum_version) +
                " required",
            Refusal{.subject = name,
                    .field = "predicate.version",
                    .observed = std::to_string(manifest.release->version),
                    .expected = "at least " + std::to_string(policy.minimum_version)});
    }
    manifest.signers = signers;
    for (ManifestEntry& entry : manifest.entries) {
        entry.manifest_signers = signers;
    }
    return manifest;
}

} // namespace

Manifest verify_signed_manifest(std::string_view text, std::string const& name,
                                TrustPolicy const& policy, std::int64_t now) {
    return verified_manifest(manifest_json(text, name), name, policy, now);
}

TrustPolicy policy_of(OpenOptions const& options) {
    TrustPolicy policy;
    bool const key = !options.verify_key.empty() || !options.verify_key_pem.empty();
    if (!options.trust_policy.empty() && key) {
        throw InvalidArgument("OpenOptions: trust_policy and a verify key are both set; set one "
                              "(a policy lists every key it trusts)");
    }
    std::optional<VerifyKeyText> const key_text =
        verify_key_text(options.verify_key, options.verify_key_pem, "OpenOptions");
    if (!options.trust_policy.empty()) {
        policy = read_trust_policy(options.trust_policy);
    } else if (key_text) {
        policy = single_key_policy(key_text->pem, key_text->origin);
    }
    policy.minimum_version = std::max(policy.minimum_version, options.minimum_version);
    return policy;
}

Manifest read_manifest(std::filesystem::path const& path, OpenOptions const& options) {
    std::string const name = path.string();
    TrustPolicy const policy = policy_of(options);
    Json const document = manifest_json(manifest_text(path), name);
    if (!is_envelope(document)) {
        if (!policy.keys.empty() || options.minimum_version > 0) {
            throw UntrustedEngineError(
                name + " is not signed, and " +
                    (policy.keys.empty() ? std::string("a minimum version")
                                         : std::string("a verify key or trust policy")) +
                    " is set: only a signed manifest (tensoracle manifest sign, or tensoracle "
                    "build --manifest --sign-key) is accepted",
                Refusal{.subject = name,
                        .observed = "a manifest that is not signed",
                        .expected = "a signed manifest",
                        .remedy = "sign it (tensoracle manifest sign, or tensoracle build "
                                  "--manifest --sign-key)"});
        }
        return manifest_of_document(document, name);
    }
    if (policy.keys.empty()) {
        if (!options.skip_signature_verification) {
            throw UntrustedEngineError(
                name +
                    " is a signed manifest, but no verify key or trust policy is set, so it "
                    "would be read unverified: pass the key (OpenOptions::verify_key, " +
                    std::string(kVerifyKeyVariable) +
                    ", open_deployed(verify_key=...)) or a trust policy (OpenOptions::"
                    "trust_policy, open_deployed(trust_policy=...)), or skip the check "
                    "explicitly (skip_signature_verification)",
                Refusal{.subject = name,
                        .observed = "a signed manifest",
                        .expected = "a verify key or trust policy to verify it with",
                        .remedy = "pass the key (OpenOptions::verify_key, " +
                                  std::string(kVerifyKeyVariable) +
                                  ", open_deployed(verify_key=...)) or a trust policy, or skip "
                                  "the check explicitly (skip_signature_verification)"});
        }
        return statement_manifest(read_envelope(document, name).payload, name);
    }
    Manifest manifest = verified_manifest(document, name, policy, now_nanoseconds());
    std::filesystem::path const folder =
        options.cache_directory.empty() ? default_cache_directory() : options.cache_directory;
    accept_manifest_version(folder, manifest.spec, manifest.release->version, name);
    return manifest;
}

} // namespace tensoracle::deploy
