// Other processes for tests of cross-process behaviour (locks, races, crashes), the GoogleTest
// "re-run yourself" pattern: a ChildProcess starts this same test binary again with the
// environment variable TENSORACLE_TEST_CHILD naming a role (registered with register_child_role)
// and TENSORACLE_TEST_CHILD_ARGS its arguments, one a line, and with --gtest_filter=-* so that it
// runs no test; its main (test_main.cpp) runs the role instead and exits with what it returns.
// Per OS in support/posix/child_process.cpp (posix_spawn) and support/windows/child_process.cpp
// (CreateProcessW; TerminateProcess stands in for SIGKILL).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tensoracle::testing {

// What a role runs in the child; its return value is the child's exit status (0..255). An
// exception leaving it exits 100.
using ChildRole = int (*)(std::vector<std::string> const& arguments);

// Registers `role` under `name`; returns true, so that it can initialize a namespace-scope
// constant of the test file.
bool register_child_role(char const* name, ChildRole role);

// In main, before the tests: when this process is a child, runs its role and returns its exit
// status; otherwise nothing.
std::optional<int> run_child_role();

// What wait() returns for a child that kill() ended.
inline constexpr int kKilledChild = -9;

class ChildProcess {
public:
    ChildProcess(std::string const& role, std::vector<std::string> const& arguments);
    ChildProcess(ChildProcess const&) = delete;
    ChildProcess& operator=(ChildProcess const&) = delete;
    ChildProcess(ChildProcess&& other) noexcept;
    ChildProcess& operator=(ChildProcess&& other) = delete;
    // A child still running is killed and waited for.
    ~ChildProcess();

    // The exit status once the child has ended, kKilledChild when kill() ended it, nothing when
    // it still runs after `timeout`.
    std::optional<int> wait(std::chrono::milliseconds timeout = std::chrono::minutes(2));
    // Ends the child at once, as a crash would (SIGKILL, TerminateProcess), and waits for it.
    void kill();

private:
    std::intptr_t native_ = -1; // the pid, or the process HANDLE
    std::optional<int> status_;
};

} // namespace tensoracle::testing
