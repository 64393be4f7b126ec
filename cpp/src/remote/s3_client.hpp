// Private to the core: GET of one object from S3-compatible storage, streamed to a sink as it
// arrives. The one place that speaks HTTP: libcurl (loaded when the first request is made, so
// that nothing links it: the `tensoracle` command of the Python wheel stays a self-contained
// executable), each request signed with AWS Signature Version 4 by libcurl itself
// (CURLOPT_AWS_SIGV4, "aws:amz:<region>:s3", the payload unsigned) with the credentials of
// aws_credentials.hpp, path-style to the endpoint configured (s3_location.hpp). On Windows the
// client is not built: every request throws RemoteUnavailable saying so.
//
// Configured from the variables S3 tools read (s3_settings):
//   AWS_ENDPOINT_URL (or AWS_ENDPOINT)   the store, http(s)://HOST[:PORT]; default AWS itself
//   AWS_REGION (or AWS_DEFAULT_REGION)   the region signed for; default us-east-1
//   AWS_ALLOW_HTTP=true                  allow a plain http:// endpoint (a local test store)
//   TENSORACLE_REMOTE_CONNECT_SECONDS    connecting, default 5
//   TENSORACLE_REMOTE_TIMEOUT_SECONDS    the longest a request waits for a byte, default 120
//   TENSORACLE_REMOTE_MAX_ENGINE_BYTES   the largest object taken as an engine, default 64 GiB
#pragma once

#include "remote/aws_credentials.hpp"
#include "tensoracle/errors.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tensoracle::detail {

// The store did not answer, or refused the request (credentials, bucket, server error).
class RemoteUnavailable : public Error {
public:
    using Error::Error;
};

struct S3Settings {
    std::string endpoint; // empty: AWS, virtual-hosted in `region`
    std::string region = "us-east-1";
    double connect_seconds = 5.0;
    double timeout_seconds = 120.0;
    std::uint64_t max_engine_bytes = std::uint64_t{64} << 30U;
    std::optional<AwsCredentials> credentials; // none: requests are sent unsigned
};

// The settings the environment gives (see above). Throws InvalidArgument naming the variable and
// its value when a number is not one, or the endpoint is not an http(s):// URL (http:// only with
// AWS_ALLOW_HTTP); InvalidArgument or FileError from find_credentials.
S3Settings s3_settings(Environment const& environment);

// Where a GET's body goes.
class ObjectSink {
public:
    ObjectSink() = default;
    ObjectSink(ObjectSink const&) = delete;
    ObjectSink& operator=(ObjectSink const&) = delete;
    ObjectSink(ObjectSink&&) = delete;
    ObjectSink& operator=(ObjectSink&&) = delete;
    virtual ~ObjectSink() = default;
    // The object exists and holds `size` bytes: called once, before any of its bytes.
    virtual void start(std::uint64_t size) = 0;
    // Its next bytes, in order.
    virtual void feed(std::span<std::byte const> bytes) = 0;
};

class S3Client {
public:
    explicit S3Client(S3Settings settings) : settings_(std::move(settings)) {}

    S3Settings const& settings() const noexcept { return settings_; }

    // GETs the object `key` (the bucket's key) of `bucket`, handing its size and then its bytes
    // to `sink`; `shown` names it in messages (its s3:// URL). Returns false when there is no such
    // object. An exception thrown by the sink stops the transfer at once and is rethrown as it
    // is; a failed, refused or cut-off request throws RemoteUnavailable naming `shown`.
    bool get(std::string_view bucket, std::string_view key, std::string const& shown,
             ObjectSink& sink) const;

private:
    S3Settings settings_;
};

} // namespace tensoracle::detail
