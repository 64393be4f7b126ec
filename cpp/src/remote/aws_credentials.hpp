// Private to the core: the credentials an S3 request is signed with, found where the AWS CLI
// looks for them:
//   1. the environment: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (both set and not empty),
//      with AWS_SESSION_TOKEN for temporary credentials;
//   2. the shared credentials file, AWS_SHARED_CREDENTIALS_FILE or else ~/.aws/credentials, its
//      profile AWS_PROFILE or else "default": aws_access_key_id, aws_secret_access_key and
//      aws_session_token.
// The file is INI as the AWS CLI reads it (Python's configparser): "[profile]" lines open a
// section; "name = value" or "name: value" lines (names without regard to case, values without
// surrounding blanks); whole-line comments starting with '#' or ';'; an indented line continues
// the value above it. No inline comments: a ';' or '#' after a value is part of it. Read by this
// small reader rather than an INI library because session tokens run to well over a thousand
// characters, beyond the fixed line length of the C INI readers at hand.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace tensoracle::detail {

// Far above any credentials file (a profile with a session token is about 2 KiB).
inline constexpr std::uint64_t kMaxCredentialsFileBytes = std::uint64_t{1} << 20U;

struct AwsCredentials {
    std::string access_key_id;
    std::string secret_access_key;
    std::string session_token; // empty: long-term credentials
    std::string origin;        // "the environment" or "<file> [profile]", for messages
};

// The credentials of `profile` in the text `text` of the credentials file `origin`; none when
// the file has no such section. Throws InvalidArgument naming `origin`, the line and the profile
// when the section is given twice, a name within it twice, a line is neither a section, a
// "name = value" pair, a comment nor blank, or the section has one of the two keys without the
// other.
std::optional<AwsCredentials>
parse_credentials_file(std::string_view text, std::string_view profile, std::string const& origin);

// What getenv returns, for tests: a variable's value, or none when it is not set.
using Environment = std::function<std::optional<std::string>(char const* name)>;
// The process's environment.
Environment process_environment();

// The credentials found as the AWS CLI finds them (see above), or none. Throws FileError when the
// credentials file exists but cannot be read (or is not a regular file), InvalidArgument as
// parse_credentials_file.
std::optional<AwsCredentials> find_credentials(Environment const& environment);

} // namespace tensoracle::detail
