// The credentials an S3 request is signed with, found as the AWS CLI finds them: the environment
// first, else the profile of the shared credentials file, read as Python's configparser reads it
// (whole-line comments, "=" or ":", names without regard to case, no inline comments, indented
// continuation lines, values of any length), and every malformed file refused naming its line.
#include "remote/aws_credentials.hpp"
#include "tensoracle/errors.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <string>

namespace tensoracle::detail {
namespace {

constexpr char const* kFile = R"(# written by aws configure
[default]
aws_access_key_id = AKIADEFAULT
aws_secret_access_key = secret/with+slash=
; a comment between
[ci]
AWS_Access_Key_ID: AKIACI
aws_secret_access_key:secret-ci ; not a comment
aws_session_token =
    FwoGZXIvYXdzE
region = eu-west-1
[empty]
)";

TEST(AwsCredentials, ReadsAProfileOfTheSharedFile) {
    auto const fallback = parse_credentials_file(kFile, "default", "/home/u/.aws/credentials");
    ASSERT_TRUE(fallback.has_value());
    EXPECT_EQ(fallback->access_key_id, "AKIADEFAULT");
    EXPECT_EQ(fallback->secret_access_key, "secret/with+slash=");
    EXPECT_EQ(fallback->session_token, "");
    EXPECT_EQ(fallback->origin, "/home/u/.aws/credentials [default]");

    auto const ci = parse_credentials_file(kFile, "ci", "creds");
    ASSERT_TRUE(ci.has_value());
    EXPECT_EQ(ci->access_key_id, "AKIACI");                        // the name in any case, ':'
    EXPECT_EQ(ci->secret_access_key, "secret-ci ; not a comment"); // no inline comment
    EXPECT_EQ(ci->session_token, "FwoGZXIvYXdzE");                 // continued on the next line

    EXPECT_FALSE(parse_credentials_file(kFile, "empty", "creds").has_value());
    EXPECT_FALSE(parse_credentials_file(kFile, "absent", "creds").has_value());
}

TEST(AwsCredentials, TakesASessionTokenOfAnyLength) {
    std::string const token(3000, 'T');
    std::string const text = "[default]\naws_access_key_id=A\naws_secret_access_key=S\r\n"
                             "aws_session_token=" +
                             token + "\r\n";
    auto const found = parse_credentials_file(text, "default", "creds");
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->secret_access_key, "S"); // the \r of a Windows line end is not kept
    EXPECT_EQ(found->session_token, token);
}

void expect_refused(std::string const& text, std::string const& expected) {
    try {
        (void)parse_credentials_file(text, "default", "creds");
        ADD_FAILURE() << "accepted: " << text;
    } catch (InvalidArgument const& error) {
        EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
    }
}

TEST(AwsCredentials, RefusesAMalformedFileNamingTheLine) {
    expect_refused("[default]\naws_access_key_id = A\njust words\n",
                   "creds: line 3: expected [PROFILE], NAME = VALUE or a comment");
    expect_refused("[default\n", "creds: line 1: a section line must end with ']'");
    expect_refused("[default]\naws_access_key_id=A\n[default]\n",
                   "creds: line 3: the profile [default] is given a second time");
    expect_refused("[default]\naws_access_key_id=A\naws_access_key_id=B\n",
                   "creds: line 3: aws_access_key_id is given twice in the profile [default]");
    expect_refused("  indented=1\n", "creds: line 1: an indented line that continues no value");
    expect_refused("[default]\naws_access_key_id=A\n",
                   "the profile [default] has aws_access_key_id without aws_secret_access_key");
}

Environment environment_of(std::map<std::string, std::string> variables) {
    return [variables = std::move(variables)](char const* name) -> std::optional<std::string> {
        auto const found = variables.find(name);
        if (found == variables.end()) {
            return std::nullopt;
        }
        return found->second;
    };
}

class CredentialsFile : public ::testing::Test {
protected:
    void SetUp() override {
        directory_ = std::filesystem::temp_directory_path() /
                     ("aws-credentials-test-" +
                      std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(directory_ / ".aws");
        std::ofstream(directory_ / ".aws" / "credentials") << kFile;
    }
    void TearDown() override { std::filesystem::remove_all(directory_); }
    std::filesystem::path directory_;
};

TEST_F(CredentialsFile, TheEnvironmentComesFirstThenTheFileAndItsProfile) {
    std::string const home = directory_.string();
    auto const from_environment = find_credentials(environment_of({{"HOME", home},
                                                                   {"AWS_ACCESS_KEY_ID", "AKIAENV"},
                                                                   {"AWS_SECRET_ACCESS_KEY", "env"},
                                                                   {"AWS_SESSION_TOKEN", "token"},
                                                                   {"AWS_PROFILE", "ci"}}));
    ASSERT_TRUE(from_environment.has_value());
    EXPECT_EQ(from_environment->access_key_id, "AKIAENV");
    EXPECT_EQ(from_environment->session_token, "token");
    EXPECT_EQ(from_environment->origin, "the environment");

    // One of the two variables alone is not credentials: the file's default profile is used.
    auto const fallback =
        find_credentials(environment_of({{"HOME", home}, {"AWS_ACCESS_KEY_ID", "AKIAENV"}}));
    ASSERT_TRUE(fallback.has_value());
    EXPECT_EQ(fallback->access_key_id, "AKIADEFAULT");

    auto const profile = find_credentials(environment_of({{"HOME", home}, {"AWS_PROFILE", "ci"}}));
    ASSERT_TRUE(profile.has_value());
    EXPECT_EQ(profile->access_key_id, "AKIACI");

    std::filesystem::path const other = directory_ / "other";
    std::ofstream(other) << "[default]\naws_access_key_id=AKIAOTHER\naws_secret_access_key=o\n";
    auto const named = find_credentials(
        environment_of({{"HOME", home}, {"AWS_SHARED_CREDENTIALS_FILE", other.string()}}));
    ASSERT_TRUE(named.has_value());
    EXPECT_EQ(named->access_key_id, "AKIAOTHER");
    EXPECT_EQ(named->origin, other.string() + " [default]");

    EXPECT_FALSE(
        find_credentials(environment_of({{"HOME", (directory_ / "nobody").string()}})).has_value());
    EXPECT_FALSE(find_credentials(environment_of({})).has_value());
}

} // namespace
} // namespace tensoracle::detail
