// The DSSE envelope a signed manifest is written in (https://github.com/secure-systems-lab/dsse):
// {"payloadType", "payload" (base64), "signatures": [{"keyid", "sig" (base64)}]}, each
// signature over the pre-authentication encoding of the payload type and the payload. Private to
// the deploy library.
#pragma once

#include "remote/signature.hpp"

#include <cstddef>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tensoracle::deploy {

struct EnvelopeSignature {
    std::string keyid; // a hint (may be empty): every trusted key is tried
    Signature sig{};
};

struct Envelope {
    std::string payload_type;
    std::vector<std::byte> payload;
    std::vector<EnvelopeSignature> signatures;
};

// "DSSEv1 <len(type)> <type> <len(payload)> <payload>", lengths in decimal bytes.
std::string pre_authentication_encoding(std::string_view payload_type,
                                        std::span<std::byte const> payload);

// The envelope `document` holds. Throws InvalidArgument naming `name`, the field and the value
// when it is not one: the payload type is not kEnvelopePayloadType, the payload or a signature is
// not canonical base64, a signature is not 64 bytes, or there are none or more than
// kMaxEnvelopeSignatures.
Envelope read_envelope(nlohmann::json const& document, std::string const& name);

// The envelope as its file holds it: JSON, two-space indented, one line per member, and a final
// line break.
std::string envelope_text(Envelope const& envelope);

} // namespace tensoracle::deploy
