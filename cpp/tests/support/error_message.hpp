// The message of the error a test expects: shared by the tests that assert refusals' texts.
#pragma once

#include <functional>
#include <gtest/gtest.h>
#include <string>

namespace tensoracle::testing {

// What `body` throws as `Error`, as its message; a test failure and "" when it throws nothing.
// Another exception type propagates and fails the test with its own message.
template <typename Error>
std::string message_of(std::function<void()> const& body) {
    try {
        body();
    } catch (Error const& error) {
        return error.what();
    }
    ADD_FAILURE() << "no error raised";
    return {};
}

} // namespace tensoracle::testing
