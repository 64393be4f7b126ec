// Private to the core: where a remote engine cache's objects are, and the URLs that reach them.
// A remote cache is named "s3://BUCKET[/PREFIX]" (TENSORACLE_REMOTE, a manifest's "remote"); an
// object's key is the prefix, "/", and its key under the prefix ("engines/<file name>").
//
// Requests go path-style to the endpoint configured (AWS_ENDPOINT_URL: a Ceph RADOS Gateway,
// MinIO, ...): <endpoint>/<bucket>/<key>; without one, to AWS itself, virtual-hosted:
// https://<bucket>.s3.<region>.amazonaws.com/<key>. The key is percent-encoded byte by byte as
// AWS Signature Version 4 encodes an S3 path (every byte but A-Z a-z 0-9 - . _ ~ and '/', with
// upper-case hex digits), so the path sent is the canonical path signed, whatever the key holds:
// spaces, '+', '%', UTF-8, an empty segment.
#pragma once

#include <string>
#include <string_view>

namespace tensoracle::detail {

struct RemoteLocation {
    std::string url;    // as given
    std::string bucket; // not empty
    std::string prefix; // without leading or trailing '/'; may be empty
};

// The location `url` names. Throws InvalidArgument naming it when it is not
// s3://BUCKET[/PREFIX] (no query or fragment; the bucket without '/', '?' or '#').
RemoteLocation parse_remote_url(std::string_view url);

// The bucket's key of `key` under the location's prefix.
std::string full_key(RemoteLocation const& location, std::string_view key);

// "s3://<bucket>/<prefix>/<key>", the name messages give an object (as the Python package's).
std::string object_url(RemoteLocation const& location, std::string_view key);

// `key` percent-encoded for an S3 request path (see above); '/' kept.
std::string encode_key(std::string_view key);

// The https:// or http:// URL of the object `key` (the bucket's key, full_key) of `bucket`:
// path-style under `endpoint` when it is not empty (trailing '/' ignored), else AWS's
// virtual-hosted URL in `region`.
std::string request_url(std::string_view endpoint, std::string_view region, std::string_view bucket,
                        std::string_view key);

} // namespace tensoracle::detail
