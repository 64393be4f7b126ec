// The message of the error a test expects, and its refusal's fields: shared by the tests that
// assert refusals.
#pragma once

#include "tensoracle/errors.hpp"

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

// What `body` throws as `Error`, as its refusal's fields; a test failure and empty fields when it
// throws nothing.
template <typename Error>
Refusal refusal_of(std::function<void()> const& body) {
    try {
        body();
    } catch (Error const& error) {
        return error.refusal();
    }
    ADD_FAILURE() << "no error raised";
    return {};
}

// The fields as one line, so that a test compares them all at once and a failure shows each.
inline std::string fields_of(Refusal const& refusal) {
    return "subject=" + refusal.subject + " | field=" + refusal.field +
           " | observed=" + refusal.observed + " | expected=" + refusal.expected +
           " | remedy=" + refusal.remedy;
}

} // namespace tensoracle::testing
