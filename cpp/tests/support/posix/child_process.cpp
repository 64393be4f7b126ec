// Child processes on POSIX systems (child_process.hpp): posix_spawn of this test binary.
#include "support/child_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ; // NOLINT(readability-redundant-declaration)

namespace tensoracle::testing {
namespace {

std::optional<int> status_of(int status) {
    if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
    }
    if (WIFSIGNALED(status)) {
        return WTERMSIG(status) == SIGKILL ? kKilledChild : -WTERMSIG(status);
    }
    return std::nullopt;
}

} // namespace

ChildProcess::ChildProcess(std::string const& role, std::vector<std::string> const& arguments) {
    std::string const self = std::filesystem::read_symlink("/proc/self/exe").string();
    std::string lines;
    for (auto const& argument : arguments) {
        lines += argument + "\n";
    }
    std::vector<std::string> variables;
    for (char** variable = environ; *variable != nullptr; ++variable) {
        if (std::strncmp(*variable, "TENSORACLE_TEST_CHILD", 21) != 0) {
            variables.emplace_back(*variable);
        }
    }
    variables.push_back("TENSORACLE_TEST_CHILD=" + role);
    variables.push_back("TENSORACLE_TEST_CHILD_ARGS=" + lines);
    std::vector<char*> envp;
    for (auto& variable : variables) {
        envp.push_back(variable.data());
    }
    envp.push_back(nullptr);
    std::string program = self;
    std::string filter = "--gtest_filter=-*";
    std::vector<char*> argv{program.data(), filter.data(), nullptr};
    pid_t pid = 0;
    int const error = ::posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), envp.data());
    if (error != 0) {
        throw std::runtime_error(std::string("posix_spawn failed: ") + std::strerror(error));
    }
    native_ = pid;
}

ChildProcess::~ChildProcess() {
    if (native_ != -1 && !status_) {
        kill();
    }
}

std::optional<int> ChildProcess::wait(std::chrono::milliseconds timeout) {
    auto const deadline = std::chrono::steady_clock::now() + timeout;
    while (!status_) {
        int status = 0;
        pid_t const done = ::waitpid(static_cast<pid_t>(native_), &status, WNOHANG);
        if (done == static_cast<pid_t>(native_)) {
            status_ = status_of(status);
        } else if (done < 0 && errno != EINTR) {
            throw std::runtime_error("waitpid failed");
        } else if (std::chrono::steady_clock::now() >= deadline) {
            return std::nullopt;
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    }
    return status_;
}

void ChildProcess::kill() {
    if (status_) {
        return;
    }
    ::kill(static_cast<pid_t>(native_), SIGKILL);
    int status = 0;
    while (::waitpid(static_cast<pid_t>(native_), &status, 0) < 0 && errno == EINTR) {
    }
    status_ = status_of(status);
}

} // namespace tensoracle::testing
