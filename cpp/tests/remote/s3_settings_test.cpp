// The S3 client's settings from the variables S3 tools read: the endpoint (http:// only when
// AWS_ALLOW_HTTP says so), the region and its fallback, tensoracle's own timeouts and size limit,
// each bad value refused naming the variable and the value.
#include "remote/s3_client.hpp"

#include <gtest/gtest.h>
#include <map>
#include <string>

namespace tensoracle::detail {
namespace {

Environment environment_of(std::map<std::string, std::string> variables) {
    return [variables = std::move(variables)](char const* name) -> std::optional<std::string> {
        auto const found = variables.find(name);
        if (found == variables.end()) {
            return std::nullopt;
        }
        return found->second;
    };
}

TEST(S3Settings, DefaultsAndTheVariablesThatChangeThem) {
    S3Settings const defaults = s3_settings(environment_of({}));
    EXPECT_EQ(defaults.endpoint, "");
    EXPECT_EQ(defaults.region, "us-east-1");
    EXPECT_EQ(defaults.connect_seconds, 5.0);
    EXPECT_EQ(defaults.timeout_seconds, 120.0);
    EXPECT_EQ(defaults.max_engine_bytes, std::uint64_t{64} << 30U);
    EXPECT_FALSE(defaults.credentials.has_value());

    S3Settings const set = s3_settings(environment_of({
        {"AWS_ENDPOINT_URL", "http://127.0.0.1:7480"},
        {"AWS_ALLOW_HTTP", "true"},
        {"AWS_DEFAULT_REGION", "eu-west-1"},
        {"AWS_ACCESS_KEY_ID", "AKIA"},
        {"AWS_SECRET_ACCESS_KEY", "secret"},
        {"TENSORACLE_REMOTE_CONNECT_SECONDS", "2"},
        {"TENSORACLE_REMOTE_TIMEOUT_SECONDS", "30.5"},
        {"TENSORACLE_REMOTE_MAX_ENGINE_BYTES", "1000"},
    }));
    EXPECT_EQ(set.endpoint, "http://127.0.0.1:7480");
    EXPECT_EQ(set.region, "eu-west-1");
    EXPECT_EQ(set.connect_seconds, 2.0);
    EXPECT_EQ(set.timeout_seconds, 30.5);
    EXPECT_EQ(set.max_engine_bytes, 1000U);
    ASSERT_TRUE(set.credentials.has_value());
    EXPECT_EQ(set.credentials->access_key_id, "AKIA");

    // AWS_REGION before AWS_DEFAULT_REGION; AWS_ENDPOINT when AWS_ENDPOINT_URL is not set.
    S3Settings const both = s3_settings(environment_of({{"AWS_REGION", "ap-south-1"},
                                                        {"AWS_DEFAULT_REGION", "eu-west-1"},
                                                        {"AWS_ENDPOINT", "https://s3.example"}}));
    EXPECT_EQ(both.region, "ap-south-1");
    EXPECT_EQ(both.endpoint, "https://s3.example");
}

void expect_refused(std::map<std::string, std::string> variables, std::string const& expected) {
    try {
        (void)s3_settings(environment_of(std::move(variables)));
        ADD_FAILURE() << "accepted, expected: " << expected;
    } catch (InvalidArgument const& error) {
        EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
    }
}

TEST(S3Settings, RefusesBadValuesNamingTheVariable) {
    expect_refused({{"AWS_ENDPOINT_URL", "http://127.0.0.1:7480"}},
                   "AWS_ENDPOINT_URL='http://127.0.0.1:7480' is plain HTTP: set "
                   "AWS_ALLOW_HTTP=true to allow it");
    expect_refused({{"AWS_ENDPOINT_URL", "file:///tmp"}},
                   "AWS_ENDPOINT_URL='file:///tmp' is not an http:// or https:// URL");
    for (char const* bad : {"0", "-1", "ten", "nan", "inf", "5s"}) {
        expect_refused({{"TENSORACLE_REMOTE_TIMEOUT_SECONDS", bad}},
                       std::string("TENSORACLE_REMOTE_TIMEOUT_SECONDS='") + bad +
                           "' is not a positive number of seconds");
    }
    expect_refused({{"TENSORACLE_REMOTE_MAX_ENGINE_BYTES", "-5"}},
                   "TENSORACLE_REMOTE_MAX_ENGINE_BYTES='-5' is not a nonnegative integer");
}

} // namespace
} // namespace tensoracle::detail
