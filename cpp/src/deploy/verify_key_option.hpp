// Private to the deploy library: the verify key an open's options name, a key file or a key's
// text (at most one of them), and the refusal of a signed engine opened without one. One place
// for DeployedEngine::open, open_file and open_bytes, and the manifest's trust (policy_of).
#pragma once

#include "remote/signature.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace tensoracle::deploy {

// A verify key's PEM text and the name messages give it: "key file '<path>'", or
// "verify_key_pem" for a key given as text.
struct VerifyKeyText {
    std::string pem;
    std::string origin;
};

// The key `file` (a key file, read) or `pem` (a key's text) sets, or nothing when both are empty.
// Throws InvalidArgument naming `where` (the options: "OpenOptions") when both are set, and
// read_key_file's errors.
std::optional<VerifyKeyText> verify_key_text(std::filesystem::path const& file,
                                             std::string const& pem, std::string_view where);

// The same key, parsed; InvalidArgument naming its origin when it is no Ed25519 public key.
std::optional<VerifyKey> verify_key_of(std::filesystem::path const& file, std::string const& pem,
                                       std::string_view where);

// Throws UntrustedEngineError naming `path`: "<signed> but no verify key is set, so it would be
// opened unverified: pass the key (<pass>), or skip the check explicitly (<skip>)". `signed_what`
// says what is signed ("engine file 'x' ends in a signature"); `pass` and `skip` name the options.
[[noreturn]] void refuse_unverified(std::string const& signed_what, std::string_view pass,
                                    std::string_view skip, std::filesystem::path const& path);

} // namespace tensoracle::deploy
