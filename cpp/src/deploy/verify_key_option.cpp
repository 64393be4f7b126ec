// The verify key of an open's options (see verify_key_option.hpp).
#include "deploy/verify_key_option.hpp"

#include "remote/key_file.hpp"
#include "tensoracle/errors.hpp"

namespace tensoracle::deploy {

std::optional<VerifyKeyText> verify_key_text(std::filesystem::path const& file,
                                             std::string const& pem, std::string_view where) {
    if (!file.empty() && !pem.empty()) {
        throw InvalidArgument(std::string(where) +
                              ": verify_key (a key file) and verify_key_pem (a key's text) are "
                              "both set; set one");
    }
    if (!file.empty()) {
        return VerifyKeyText{detail::read_key_file(file), "key file '" + file.string() + "'"};
    }
    if (!pem.empty()) {
        return VerifyKeyText{pem, "verify_key_pem"};
    }
    return std::nullopt;
}

std::optional<VerifyKey> verify_key_of(std::filesystem::path const& file, std::string const& pem,
                                       std::string_view where) {
    std::optional<VerifyKeyText> const text = verify_key_text(file, pem, where);
    if (!text) {
        return std::nullopt;
    }
    return VerifyKey::from_pem(text->pem, text->origin);
}

void refuse_unverified(std::string const& signed_what, std::string_view pass, std::string_view skip,
                       std::filesystem::path const& path) {
    throw UntrustedEngineError(signed_what +
                                   " but no verify key is set, so it would be opened unverified: "
                                   "pass the key (" +
                                   std::string(pass) + "), or skip the check explicitly (" +
                                   std::string(skip) + ")",
                               path);
}

} // namespace tensoracle::deploy
