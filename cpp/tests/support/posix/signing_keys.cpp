// Test keys made with OpenSSL, as `openssl genpkey` makes them (see signing_keys.hpp).
#include "support/signing_keys.hpp"

#include <memory>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdexcept>

namespace tensoracle::testing {
namespace {

std::string private_key_pem(EVP_PKEY* key) {
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> owned(key, EVP_PKEY_free);
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
    if (!owned || !bio ||
        PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
        throw std::runtime_error("OpenSSL could not make a test key");
    }
    char* data = nullptr;
    long const size = BIO_get_mem_data(bio.get(), &data);
    return {data, static_cast<std::size_t>(size)};
}

} // namespace

std::string new_private_key_pem() {
    return private_key_pem(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
}

std::string new_rsa_private_key_pem() {
    return private_key_pem(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", std::size_t{2048}));
}

} // namespace tensoracle::testing
