// Base64 as DSSE envelopes carry payloads and signatures: a round trip, and only the canonical
// padded form of the standard alphabet accepted.
#include "text/base64.hpp"

#include <gtest/gtest.h>
#include <string>
#include <string_view>

namespace tensoracle {
namespace {

TEST(Base64, RoundTripsAndRefusesAnyOtherForm) {
    for (std::string const text : {"", "f", "fo", "foo", "foob", "fooba", "foobar"}) {
        std::string const encoded = base64_encode(std::as_bytes(std::span(text)));
        auto const decoded = base64_decode(encoded);
        ASSERT_TRUE(decoded.has_value()) << encoded;
        EXPECT_EQ(std::string(reinterpret_cast<char const*>(decoded->data()), decoded->size()),
                  text);
    }
    EXPECT_EQ(base64_encode(std::as_bytes(std::span(std::string_view("foobar")))), "Zm9vYmFy");
    for (char const* bad : {"Zm9", "Zm9v YmFy", "Zm9v\nYmFy", "Zm=v", "Zm9vYmF-", "Z===", "===="}) {
        EXPECT_FALSE(base64_decode(bad).has_value()) << bad;
    }
}

} // namespace
} // namespace tensoracle
