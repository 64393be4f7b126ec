// Writing a signed manifest (manifest_signing.hpp): the in-toto Statement of the plain manifest,
// then a DSSE envelope over it, one Ed25519 signature per key.
#include "deploy/manifest_signing.hpp"

#include "deploy/json_fields.hpp"
#include "deploy/manifest_document.hpp"
#include "deploy/manifest_envelope.hpp"
#include "tensoracle/deploy/signed_manifest.hpp"
#include "tensoracle/errors.hpp"
#include "text/size_text.hpp"

#include <algorithm>
#include <set>

namespace tensoracle::deploy {
namespace {

// The statement of the plain manifest `document` (checked as `manifest`) released as `release`.
Json statement_of(Json document, Manifest const& manifest, ManifestRelease const& release,
                  std::string const& name) {
    (void)parse_utc_time(release.expires, "expires");
    Json subjects = Json::array();
    std::set<std::string> named;
    for (std::size_t i = 0; i < manifest.entries.size(); ++i) {
        ManifestEntry const& entry = manifest.entries[i];
        if (!entry.sha256 || !entry.header_sha256) {
            throw InvalidArgument(
                name + ": entries[" + std::to_string(i) + "] (" + entry.file_name +
                ") records no " + (entry.sha256 ? "header_sha256" : "sha256") +
                ": write the manifest again with this version's tensoracle build --manifest, "
                "which records each file's digests");
        }
        if (named.insert(entry.file_name).second) {
            subjects.push_back(
                {{"name", entry.file_name}, {"digest", {{"sha256", *entry.sha256}}}});
        }
    }
    document["version"] = release.version;
    document["expires"] = release.expires;
    return {{"_type", kStatementType},
            {"subject", subjects},
            {"predicateType", kManifestPredicateType},
            {"predicate", std::move(document)}};
}

} // namespace

std::string key_id(SigningKey const& key) {
    return VerifyKey::from_pem(key.public_key_pem(), "the signing key").fingerprint();
}

std::string sign_manifest(std::string_view text, std::string const& name,
                          std::optional<ManifestRelease> const& release,
                          std::vector<SigningKey> const& keys) {
    if (keys.empty()) {
        throw InvalidArgument(name + ": no signing key given");
    }
    Json const document = manifest_json(text, name);
    Envelope envelope;
    if (is_envelope(document)) {
        if (release) {
            throw InvalidArgument(name + " is signed already: its version and expiry are in its "
                                         "signed payload (sign its plain manifest again to change "
                                         "them)");
        }
        envelope = read_envelope(document, name);
        (void)statement_manifest(envelope.payload, name); // what is co-signed is a manifest
    } else {
        if (!release) {
            throw InvalidArgument(name + ": a version and an expiry time are needed to sign it");
        }
        Manifest const manifest = manifest_of_document(document, name);
        std::string const payload = statement_of(document, manifest, *release, name).dump();
        envelope.payload_type = kEnvelopePayloadType;
        auto const bytes = std::as_bytes(std::span(payload));
        envelope.payload.assign(bytes.begin(), bytes.end());
    }
    std::string const encoded =
        pre_authentication_encoding(envelope.payload_type, envelope.payload);
    for (SigningKey const& key : keys) {
        std::string const id = key_id(key);
        std::erase_if(envelope.signatures,
                      [&id](EnvelopeSignature const& signature) { return signature.keyid == id; });
        envelope.signatures.push_back({id, key.sign(std::as_bytes(std::span(encoded)))});
    }
    if (envelope.signatures.size() > kMaxEnvelopeSignatures) {
        throw InvalidArgument(name + ": " + std::to_string(envelope.signatures.size()) +
                              " signatures, more than the " +
                              std::to_string(kMaxEnvelopeSignatures) + " a reader accepts");
    }
    return envelope_text(envelope);
}

} // namespace tensoracle::deploy
