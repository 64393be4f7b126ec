// The S3 client is not built for Windows (see s3_client.hpp).
#include "remote/s3_client.hpp"

namespace tensoracle::detail {

bool S3Client::get(std::string_view /*bucket*/, std::string_view /*key*/, std::string const& shown,
                   ObjectSink& /*sink*/) const {
    throw RemoteUnavailable("GET " + shown +
                            ": this build of tensoracle for Windows has no S3 client; pull with "
                            "the Python package (pip install 'tensoracle[remote]')");
}

} // namespace tensoracle::detail
