// Remote cache locations and object URLs (see s3_location.hpp).
#include "remote/s3_location.hpp"

#include "tensoracle/errors.hpp"

#include <array>

namespace tensoracle::detail {

namespace {

std::string_view trimmed_slashes(std::string_view text) {
    while (!text.empty() && text.front() == '/') {
        text.remove_prefix(1);
    }
    while (!text.empty() && text.back() == '/') {
        text.remove_suffix(1);
    }
    return text;
}

bool unreserved(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

} // namespace

RemoteLocation parse_remote_url(std::string_view url) {
    constexpr std::string_view scheme = "s3://";
    std::string_view const rest = url.starts_with(scheme) ? url.substr(scheme.size()) : "";
    std::size_t const slash = rest.find('/');
    std::string_view const bucket = rest.substr(0, slash);
    if (bucket.empty() || url.find_first_of("?#") != std::string_view::npos) {
        throw InvalidArgument("the remote cache '" + std::string(url) +
                              "' is not an s3://BUCKET[/PREFIX] URL (set TENSORACLE_REMOTE or "
                              "--remote to one, for example s3://engines/fleet-a)");
    }
    std::string_view const prefix =
        slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
    return {std::string(url), std::string(bucket), std::string(trimmed_slashes(prefix))};
}

std::string full_key(RemoteLocation const& location, std::string_view key) {
    if (location.prefix.empty()) {
        return std::string(key);
    }
    std::string result = location.prefix;
    result += '/';
    result += key;
    return result;
}

std::string object_url(RemoteLocation const& location, std::string_view key) {
    return "s3://" + location.bucket + "/" + full_key(location, key);
}

std::string encode_key(std::string_view key) {
    constexpr std::array<char, 16> digits = {'0', '1', '2', '3', '4', '5', '6', '7',
                                             '8', '9', 'A', 'B', 'C', 'D', 'E', 'F'};
    std::string encoded;
    encoded.reserve(key.size());
    for (char const c : key) {
        auto const byte = static_cast<unsigned char>(c);
        if (unreserved(byte) || byte == '/') {
            encoded.push_back(c);
        } else {
            encoded.push_back('%');
            encoded.push_back(digits[byte >> 4U]);
            encoded.push_back(digits[byte & 0x0FU]);
        }
    }
    return encoded;
}

std::string request_url(std::string_view endpoint, std::string_view region, std::string_view bucket,
                        std::string_view key) {
    if (endpoint.empty()) {
        return "https://" + std::string(bucket) + ".s3." + std::string(region) + ".amazonaws.com/" +
               encode_key(key);
    }
    while (endpoint.ends_with('/')) {
        endpoint.remove_suffix(1);
    }
    return std::string(endpoint) + "/" + encode_key(bucket) + "/" + encode_key(key);
}

} // namespace tensoracle::detail
