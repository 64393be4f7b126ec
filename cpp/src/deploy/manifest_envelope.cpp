// Reading and writing the DSSE envelope of a signed manifest (manifest_envelope.hpp).
#include "deploy/manifest_envelope.hpp"

#include "deploy/json_fields.hpp"
#include "tensoracle/deploy/signed_manifest.hpp"
#include "tensoracle/errors.hpp"
#include "text/base64.hpp"

#include <algorithm>

namespace tensoracle::deploy {

std::string pre_authentication_encoding(std::string_view payload_type,
                                        std::span<std::byte const> payload) {
    // Appended piece by piece (GCC 12 reports a false -Wrestrict for a prepending operator+).
    std::string encoded = "DSSEv1 ";
    encoded.append(std::to_string(payload_type.size()));
    encoded.append(" ");
    encoded.append(payload_type);
    encoded.append(" ");
    encoded.append(std::to_string(payload.size()));
    encoded.append(" ");
    encoded.append(reinterpret_cast<char const*>(payload.data()), payload.size());
    return encoded;
}

Envelope read_envelope(nlohmann::json const& document, std::string const& name) {
    Fields const fields(document, name);
    Envelope envelope;
    envelope.payload_type = fields.text("payloadType");
    if (envelope.payload_type != kEnvelopePayloadType) {
        fields.refuse("payloadType", envelope.payload_type,
                      (std::string("\"") + kEnvelopePayloadType + "\"").c_str());
    }
    std::string const payload = fields.text("payload");
    auto decoded = base64_decode(payload);
    if (!decoded) {
        fields.refuse("payload", payload, "base64 (standard alphabet, padded)");
    }
    envelope.payload = std::move(*decoded);
    Json const& signatures = fields.any("signatures");
    if (!signatures.is_array() || signatures.empty() ||
        signatures.size() > kMaxEnvelopeSignatures) {
        fields.refuse(
            "signatures", signatures,
            ("an array of 1 to " + std::to_string(kMaxEnvelopeSignatures) + " signatures").c_str());
    }
    for (std::size_t i = 0; i < signatures.size(); ++i) {
        Fields const signature(signatures[i], fields.place("signatures").index(i));
        EnvelopeSignature read;
        if (Json const* keyid = signature.find("keyid"); keyid != nullptr) {
            read.keyid = signature.text("keyid");
        }
        std::string const sig = signature.text("sig");
        auto const bytes = base64_decode(sig);
        if (!bytes || bytes->size() != read.sig.size()) {
            signature.refuse("sig", sig, "an Ed25519 signature: 64 bytes in base64");
        }
        std::copy(bytes->begin(), bytes->end(), read.sig.begin());
        envelope.signatures.push_back(std::move(read));
    }
    return envelope;
}

std::string envelope_text(Envelope const& envelope) {
    Json signatures = Json::array();
    for (EnvelopeSignature const& signature : envelope.signatures) {
        signatures.push_back({{"keyid", signature.keyid},
                              {"sig", base64_encode(std::as_bytes(std::span(signature.sig)))}});
    }
    Json const document = {{"payloadType", envelope.payload_type},
                           {"payload", base64_encode(envelope.payload)},
                           {"signatures", signatures}};
    return document.dump(2) + "\n";
}

} // namespace tensoracle::deploy
