// Ed25519 keys from PEM text, signatures, and refusal of wrong keys and changed messages.
#include "remote/signature.hpp"
#include "support/signing_keys.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <utility>
#ifndef _WIN32
#include <sys/stat.h>
#endif

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

TEST(Signature, AKeyFileLargerThanAnyKeyIsRefusedUnreadNamingIt) {
    testing::TemporaryDirectory directory;
    auto const path = directory.path() / "huge.pem";
    testing::write_all(path, testing::random_bytes(64 * 1024 + 1, 4));
    try {
        (void)VerifyKey::from_pem_file(path);
        FAIL() << "a 64 KiB + 1 key file was read";
    } catch (InvalidArgument const& error) {
        EXPECT_NE(std::string(error.what())
                      .find("key file '" + path.string() + "' holds more than 65536 bytes"),
                  std::string::npos)
            << error.what();
    }
}

#ifndef _WIN32
// A FIFO would block an open for reading until a writer comes, and /dev/zero never ends: each
// is refused at once, naming the file, and so is a symbolic link (even to a good key).
TEST(Signature, AFifoADeviceAndALinkAreRefusedAsKeyFilesAtOnce) {
    testing::TemporaryDirectory directory;
    auto const fifo = directory.path() / "key.fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    auto const good = directory.path() / "verify-key.pem";
    testing::write_all(
        good, bytes_of(SigningKey::from_pem(testing::new_private_key_pem(), "k").public_key_pem()));
    auto const link = directory.path() / "link.pem";
    std::filesystem::create_symlink(good, link);
    for (auto const& [path, expected] :
         {std::pair{fifo, std::string("is not a regular file")},
          std::pair{std::filesystem::path("/dev/zero"), std::string("is not a regular file")},
          std::pair{link, std::string("is a symbolic link; name the key file itself")}}) {
        try {
            (void)VerifyKey::from_pem_file(path);
            FAIL() << path << " was read as a key";
        } catch (FileError const& error) {
            EXPECT_EQ(error.path(), path);
            EXPECT_NE(std::string(error.what()).find(path.string()), std::string::npos)
                << error.what();
            EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
        }
    }
}
#endif

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
