// Remote cache URLs, object keys and the request URLs they become: the prefix joined as the
// Python package joins it, and every key byte outside A-Z a-z 0-9 - . _ ~ / percent-encoded
// (upper-case hex), as AWS Signature Version 4 signs an S3 path, so that odd keys (spaces, '+',
// '%', UTF-8, control characters, empty segments) reach the object they name.
#include "remote/s3_location.hpp"
#include "tensoracle/errors.hpp"

#include <gtest/gtest.h>
#include <string>

namespace tensoracle::detail {
namespace {

TEST(S3Location, ParsesBucketAndPrefixWithoutTheirSlashes) {
    RemoteLocation const nested = parse_remote_url("s3://engines/fleet-a/prod/");
    EXPECT_EQ(nested.url, "s3://engines/fleet-a/prod/");
    EXPECT_EQ(nested.bucket, "engines");
    EXPECT_EQ(nested.prefix, "fleet-a/prod");
    EXPECT_EQ(full_key(nested, "engines/x.engine"), "fleet-a/prod/engines/x.engine");
    EXPECT_EQ(object_url(nested, "engines/x.engine"), "s3://engines/fleet-a/prod/engines/x.engine");

    RemoteLocation const bare = parse_remote_url("s3://engines");
    EXPECT_EQ(bare.prefix, "");
    EXPECT_EQ(full_key(bare, "engines/x.engine"), "engines/x.engine");
    EXPECT_EQ(object_url(bare, "engines/x.engine"), "s3://engines/engines/x.engine");
}

TEST(S3Location, RefusesWhatIsNotAnS3Url) {
    for (char const* url : {"", "engines/fleet", "s3://", "s3:///prefix", "https://engines/x",
                            "s3://engines/x?versionId=1", "s3://engines/x#part"}) {
        try {
            (void)parse_remote_url(url);
            ADD_FAILURE() << url << " was accepted";
        } catch (InvalidArgument const& error) {
            EXPECT_NE(std::string(error.what()).find(std::string("'") + url + "'"),
                      std::string::npos)
                << error.what();
            EXPECT_NE(std::string(error.what()).find("s3://BUCKET[/PREFIX]"), std::string::npos);
        }
    }
}

TEST(S3Location, EncodesEveryByteButTheUnreservedAndSlash) {
    EXPECT_EQ(encode_key("engines/enc-0123abcDEF_.~.engine"), "engines/enc-0123abcDEF_.~.engine");
    EXPECT_EQ(encode_key("a b+c%d"), "a%20b%2Bc%25d");
    EXPECT_EQ(encode_key("=&;$,@:!*'()?#[]"), "%3D%26%3B%24%2C%40%3A%21%2A%27%28%29%3F%23%5B%5D");
    EXPECT_EQ(encode_key("caf\xc3\xa9/\xe6\x97\xa5"), "caf%C3%A9/%E6%97%A5"); // é, 日
    EXPECT_EQ(encode_key("ctl\x01name/del\x7f"), "ctl%01name/del%7F");
    EXPECT_EQ(encode_key("sub//x.engine"), "sub//x.engine"); // an empty segment stays one
    EXPECT_EQ(encode_key(std::string("nul\0byte", 8)), "nul%00byte");
}

TEST(S3Location, RequestUrlsArePathStyleToAnEndpointElseAwsVirtualHosted) {
    EXPECT_EQ(request_url("http://127.0.0.1:9000", "us-east-1", "engines", "p/engines/a b.engine"),
              "http://127.0.0.1:9000/engines/p/engines/a%20b.engine");
    EXPECT_EQ(request_url("https://s3.example.com/", "eu-west-1", "engines", "x+y"),
              "https://s3.example.com/engines/x%2By");
    EXPECT_EQ(request_url("", "eu-west-1", "engines", "p/x.engine"),
              "https://engines.s3.eu-west-1.amazonaws.com/p/x.engine");
}

} // namespace
} // namespace tensoracle::detail
