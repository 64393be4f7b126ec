// Base64 in its standard alphabet with padding (RFC 4648, section 4), as DSSE envelopes carry
// their payload and signatures: OpenSSL's codec on Linux, libsodium's on Windows.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tensoracle {

std::string base64_encode(std::span<std::byte const> bytes);

// The bytes `text` encodes, or nullopt unless it is canonical base64: only the standard
// alphabet, a length that is a multiple of 4, and '=' padding only at the end (at most two).
// Nothing else is accepted (no spaces, line breaks or URL-safe letters), so that one text has
// one meaning to every reader.
std::optional<std::vector<std::byte>> base64_decode(std::string_view text);

} // namespace tensoracle
