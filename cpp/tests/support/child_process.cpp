// The roles of child processes, shared by the per-OS halves (child_process.hpp).
#include "support/child_process.hpp"

#include <cstdlib>
#include <exception>
#include <iostream>
#include <map>
#include <sstream>

namespace tensoracle::testing {
namespace {

std::map<std::string, ChildRole>& roles() {
    static std::map<std::string, ChildRole> registered;
    return registered;
}

} // namespace

bool register_child_role(char const* name, ChildRole role) {
    roles()[name] = role;
    return true;
}

std::optional<int> run_child_role() {
    char const* const name = std::getenv("TENSORACLE_TEST_CHILD");
    if (name == nullptr || *name == '\0') {
        return std::nullopt;
    }
    auto const found = roles().find(name);
    if (found == roles().end()) {
        std::cerr << "no child role named " << name << "\n";
        return 101;
    }
    std::vector<std::string> arguments;
    if (char const* const lines = std::getenv("TENSORACLE_TEST_CHILD_ARGS")) {
        std::istringstream in(lines);
        for (std::string line; std::getline(in, line);) {
            arguments.push_back(line);
        }
    }
    try {
        return found->second(arguments);
    } catch (std::exception const& error) {
        std::cerr << "child role " << name << ": " << error.what() << "\n";
    } catch (...) {
    }
    return 100;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : native_(other.native_), status_(other.status_) {
    other.native_ = -1;
}

} // namespace tensoracle::testing
