// The AWS credentials of a request (see aws_credentials.hpp).
#include "remote/aws_credentials.hpp"

#include "io/file_bytes.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <vector>

namespace tensoracle::detail {

namespace {

constexpr std::string_view kBlanks = " \t\r";

std::string_view trimmed(std::string_view text) {
    std::size_t const start = text.find_first_not_of(kBlanks);
    if (start == std::string_view::npos) {
        return {};
    }
    return text.substr(start, text.find_last_not_of(kBlanks) - start + 1);
}

std::string lower(std::string_view text) {
    std::string result(text);
    std::transform(result.begin(), result.end(), result.begin(), [](char c) {
        return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    });
    return result;
}

[[noreturn]] void malformed(std::string const& origin, std::size_t line, std::string_view what) {
    throw InvalidArgument(origin + ": line " + std::to_string(line) + ": " + std::string(what));
}

} // namespace

std::optional<AwsCredentials>
parse_credentials_file(std::string_view text, std::string_view profile, std::string const& origin) {
    bool in_profile = false; // the current section is `profile`
    bool seen = false;
    std::map<std::string, std::string> values;
    std::string last_name; // of the pair the next indented line continues, in `profile`
    bool after_pair = false;
    std::size_t number = 0;
    while (!text.empty()) {
        std::size_t const end = text.find('\n');
        std::string_view const raw = text.substr(0, end);
        text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
        ++number;
        std::string_view const line = trimmed(raw);
        if (line.empty() || line.front() == '#' || line.front() == ';') {
            continue;
        }
        if (raw.front() == ' ' || raw.front() == '\t') { // continues the value above
            if (!after_pair) {
                malformed(origin, number, "an indented line that continues no value");
            }
            if (in_profile) {
                std::string& value = values[last_name];
                value += '\n';
                value += line;
            }
            continue;
        }
        if (line.front() == '[') {
            if (line.back() != ']') {
                malformed(origin, number, "a section line must end with ']'");
            }
            std::string_view const name = trimmed(line.substr(1, line.size() - 2));
            in_profile = name == profile;
            if (in_profile && seen) {
                malformed(origin, number,
                          "the profile [" + std::string(profile) + "] is given a second time");
            }
            seen = seen || in_profile;
            after_pair = false;
            continue;
        }
        std::size_t const separator = line.find_first_of("=:");
        if (separator == std::string_view::npos || separator == 0) {
            malformed(origin, number, "expected [PROFILE], NAME = VALUE or a comment");
        }
        after_pair = true;
        if (!in_profile) {
            continue;
        }
        last_name = lower(trimmed(line.substr(0, separator)));
        if (values.contains(last_name)) {
            malformed(origin, number,
                      last_name + " is given twice in the profile [" + std::string(profile) + "]");
        }
        values[last_name] = std::string(trimmed(line.substr(separator + 1)));
    }
    if (!seen) {
        return std::nullopt;
    }
    auto const value = [&values](char const* name) {
        auto const found = values.find(name);
        if (found == values.end()) {
            return std::string();
        }
        // A value given on the lines below its name starts with the line break.
        std::string_view held = found->second;
        while (held.starts_with('\n')) {
            held.remove_prefix(1);
        }
        return std::string(held);
    };
    AwsCredentials credentials{value("aws_access_key_id"), value("aws_secret_access_key"),
                               value("aws_session_token"),
                               origin + " [" + std::string(profile) + "]"};
    if (credentials.access_key_id.empty() != credentials.secret_access_key.empty()) {
        throw InvalidArgument(
            origin + ": the profile [" + std::string(profile) + "] has " +
            (credentials.access_key_id.empty() ? "aws_secret_access_key" : "aws_access_key_id") +
            " without " +
            (credentials.access_key_id.empty() ? "aws_access_key_id" : "aws_secret_access_key"));
    }
    if (credentials.access_key_id.empty()) {
        return std::nullopt;
    }
    return credentials;
}

Environment process_environment() {
    return [](char const* name) -> std::optional<std::string> {
        char const* value = std::getenv(name); // NOLINT(concurrency-mt-unsafe): read-only use
        if (value == nullptr) {
            return std::nullopt;
        }
        return std::string(value);
    };
}

std::optional<AwsCredentials> find_credentials(Environment const& environment) {
    auto const variable = [&environment](char const* name) {
        return environment(name).value_or(std::string());
    };
    std::string const access = variable("AWS_ACCESS_KEY_ID");
    std::string const secret = variable("AWS_SECRET_ACCESS_KEY");
    if (!access.empty() && !secret.empty()) {
        return AwsCredentials{access, secret, variable("AWS_SESSION_TOKEN"), "the environment"};
    }
    std::filesystem::path file = variable("AWS_SHARED_CREDENTIALS_FILE");
    if (file.empty()) {
        std::string const home = variable("HOME");
        if (home.empty()) {
            return std::nullopt;
        }
        file = std::filesystem::path(home) / ".aws" / "credentials";
    }
    std::string profile = variable("AWS_PROFILE");
    if (profile.empty()) {
        profile = "default";
    }
    std::error_code error;
    if (!std::filesystem::exists(std::filesystem::symlink_status(file, error))) {
        return std::nullopt;
    }
    // A link is followed, as the AWS CLI follows it (dotfile managers link the file).
    std::optional<std::vector<char>> const bytes =
        read_file_bytes(file, kMaxCredentialsFileBytes, Links::follow);
    if (!bytes) {
        throw InvalidArgument("the AWS credentials file '" + file.string() + "' holds more than " +
                              std::to_string(kMaxCredentialsFileBytes) + " bytes");
    }
    return parse_credentials_file(std::string_view(bytes->data(), bytes->size()), profile,
                                  file.string());
}

} // namespace tensoracle::detail
