// The command's process calls on POSIX systems (see process.hpp).
#include "../process.hpp"

#include "../commands.hpp"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace tensoracle::cli {

std::array<char const*, 2> const& python_names() noexcept {
    static constexpr std::array<char const*, 2> kNames = {"python3", "python"};
    return kNames;
}

char path_separator() noexcept {
    return ':';
}

std::optional<std::filesystem::path> this_executable() {
    std::error_code error;
    std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    if (error) {
        return std::nullopt;
    }
    return self;
}

bool is_executable(std::filesystem::path const& path) {
    std::error_code error;
    return std::filesystem::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

int run_in_place_of_this_process(std::filesystem::path const& program,
                                 std::vector<std::string> const& arguments, std::string& error) {
    std::vector<std::string> copies = arguments;
    std::vector<char*> argv;
    argv.reserve(copies.size() + 1);
    for (std::string& argument : copies) {
        argv.push_back(argument.data());
    }
    argv.push_back(nullptr);
    ::execv(program.c_str(), argv.data());
    error = std::strerror(errno);
    return kExitFailure;
}

} // namespace tensoracle::cli
