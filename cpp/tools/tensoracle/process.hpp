// What the command needs from the operating system to hand a subcommand to Python, with one
// implementation per system (posix/process.cpp, windows/process.cpp; CMake compiles the target's).
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tensoracle::cli {

// The interpreter names looked for beside this command, the first also on PATH (python3 and
// python; python.exe and python3.exe on Windows), and PATH's separator (':'; ';').
std::array<char const*, 2> const& python_names() noexcept;
char path_separator() noexcept;

// The path of the running executable, when the system tells it.
std::optional<std::filesystem::path> this_executable();

// A regular file this process may execute.
bool is_executable(std::filesystem::path const& path);

// Runs `program` with `arguments` (arguments[0] included) in place of this process: on POSIX the
// process image is replaced (execv) and this returns only on failure; on Windows, which cannot
// replace a process, the program runs as a child with this console and this process then exits
// with its status. Returns kExitFailure with `error` set when the program cannot be started.
int run_in_place_of_this_process(std::filesystem::path const& program,
                                 std::vector<std::string> const& arguments, std::string& error);

} // namespace tensoracle::cli
