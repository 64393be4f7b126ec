// The S3 client's settings from the environment (see s3_client.hpp).
#include "remote/s3_client.hpp"

#include <charconv>
#include <cmath>

namespace tensoracle::detail {

namespace {

std::string variable(Environment const& environment, char const* name) {
    return environment(name).value_or(std::string());
}

// A positive number of seconds; InvalidArgument naming the variable otherwise.
double seconds(std::string const& name, std::string const& value) {
    double number = NAN;
    auto const [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (error != std::errc() || end != value.data() + value.size() || !std::isfinite(number) ||
        number <= 0) {
        throw InvalidArgument(name + "='" + value + "' is not a positive number of seconds");
    }
    return number;
}

std::uint64_t count(std::string const& name, std::string const& value) {
    std::uint64_t number = 0;
    auto const [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (error != std::errc() || end != value.data() + value.size() || value.empty()) {
        throw InvalidArgument(name + "='" + value + "' is not a nonnegative integer");
    }
    return number;
}

bool yes(std::string const& value) {
    return value == "1" || value == "true" || value == "TRUE" || value == "True" ||
           value == "yes" || value == "YES" || value == "Yes";
}

} // namespace

S3Settings s3_settings(Environment const& environment) {
    S3Settings settings;
    settings.endpoint = variable(environment, "AWS_ENDPOINT_URL");
    char const* endpoint_variable = "AWS_ENDPOINT_URL";
    if (settings.endpoint.empty()) {
        settings.endpoint = variable(environment, "AWS_ENDPOINT");
        endpoint_variable = "AWS_ENDPOINT";
    }
    if (!settings.endpoint.empty()) {
        bool const http = settings.endpoint.starts_with("http://");
        if (!http && !settings.endpoint.starts_with("https://")) {
            throw InvalidArgument(std::string(endpoint_variable) + "='" + settings.endpoint +
                                  "' is not an http:// or https:// URL");
        }
        if (http && !yes(variable(environment, "AWS_ALLOW_HTTP"))) {
            throw InvalidArgument(std::string(endpoint_variable) + "='" + settings.endpoint +
                                  "' is plain HTTP: set AWS_ALLOW_HTTP=true to allow it");
        }
    }
    for (char const* name : {"AWS_REGION", "AWS_DEFAULT_REGION"}) {
        if (std::string const region = variable(environment, name); !region.empty()) {
            settings.region = region;
            break;
        }
    }
    if (std::string const value = variable(environment, "TENSORACLE_REMOTE_CONNECT_SECONDS");
        !value.empty()) {
        settings.connect_seconds = seconds("TENSORACLE_REMOTE_CONNECT_SECONDS", value);
    }
    if (std::string const value = variable(environment, "TENSORACLE_REMOTE_TIMEOUT_SECONDS");
        !value.empty()) {
        settings.timeout_seconds = seconds("TENSORACLE_REMOTE_TIMEOUT_SECONDS", value);
    }
    if (std::string const value = variable(environment, "TENSORACLE_REMOTE_MAX_ENGINE_BYTES");
        !value.empty()) {
        settings.max_engine_bytes = count("TENSORACLE_REMOTE_MAX_ENGINE_BYTES", value);
    }
    settings.credentials = find_credentials(environment);
    return settings;
}

} // namespace tensoracle::detail
