// Ed25519 keys from PEM text, signatures, and refusal of wrong keys and changed messages.
#include "support/signing_keys.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"
#include "tensoracle/remote/signature.hpp"

#include <gtest/gtest.h>

namespace tensoracle {
namespace {

std::span<std::byte const> bytes_of(std::string const& text) {
    return std::as_bytes(std::span(text));
}

TEST(Signature, SignedMessageVerifiesWithTheMatchingKeyOnly) {
    SigningKey const key = SigningKey::from_pem(testing::new_private_key_pem(), "test key");
    VerifyKey const trusted = VerifyKey::from_pem(key.public_key_pem(), "test key");
    VerifyKey const other = VerifyKey::from_pem(
        SigningKey::from_pem(testing::new_private_key_pem(), "other").public_key_pem(), "other");
    std::string const message = "tensoracle remote engine v1\nentry.engine\nabc";
    Signature const signature = key.sign(bytes_of(message));

    EXPECT_TRUE(trusted.verify(bytes_of(message), signature));
    EXPECT_FALSE(other.verify(bytes_of(message), signature));
    EXPECT_FALSE(trusted.verify(bytes_of(message + "d"), signature));
    Signature flipped = signature;
    flipped[10] ^= std::byte{1};
    EXPECT_FALSE(trusted.verify(bytes_of(message), flipped));
    EXPECT_EQ(trusted.fingerprint().size(), 16U);
    EXPECT_NE(trusted.fingerprint(), other.fingerprint());
}

TEST(Signature, KeyFilesAreReadAndBadOnesNamed) {
    testing::TemporaryDirectory directory;
    std::string const pem = testing::new_private_key_pem();
    auto const private_path = directory.path() / "signing-key.pem";
    auto const public_path = directory.path() / "verify-key.pem";
    testing::write_all(private_path, bytes_of(pem));
    SigningKey const key = SigningKey::from_pem_file(private_path);
    testing::write_all(public_path, bytes_of(key.public_key_pem()));
    VerifyKey const trusted = VerifyKey::from_pem_file(public_path);
    EXPECT_TRUE(trusted.verify(bytes_of("m"), key.sign(bytes_of("m"))));

    // A public key where a private key belongs, and the reverse, are refused with the file name.
    try {
        (void)SigningKey::from_pem_file(public_path);
        FAIL() << "a public key was accepted as a signing key";
    } catch (InvalidArgument const& error) {
        EXPECT_NE(std::string(error.what()).find("verify-key.pem"), std::string::npos);
        EXPECT_NE(std::string(error.what()).find("genpkey"), std::string::npos);
    }
    EXPECT_THROW((void)VerifyKey::from_pem_file(private_path), InvalidArgument);
    EXPECT_THROW((void)VerifyKey::from_pem("not a key", "text"), InvalidArgument);
    EXPECT_THROW((void)SigningKey::from_pem_file(directory.path() / "absent.pem"), FileError);
}

TEST(Signature, KeysOfOtherAlgorithmsAreRefusedByName) {
    try {
        (void)SigningKey::from_pem(testing::new_rsa_private_key_pem(), "rsa.pem");
        FAIL() << "an RSA key was accepted";
    } catch (InvalidArgument const& error) {
        EXPECT_NE(std::string(error.what()).find("RSA"), std::string::npos) << error.what();
    }
}

} // namespace
} // namespace tensoracle
