// The command's process calls on Windows (see process.hpp): the interpreter runs as a child
// process (_wspawnv), and its exit status becomes this command's.
#include "../process.hpp"

#include "../commands.hpp"

// windows.h comes first.
// clang-format off
#include <windows.h>
#include <process.h>
// clang-format on

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace tensoracle::cli {

std::array<char const*, 2> const& python_names() noexcept {
    static constexpr std::array<char const*, 2> kNames = {"python.exe", "python3.exe"};
    return kNames;
}

char path_separator() noexcept {
    return ';';
}

std::optional<std::filesystem::path> this_executable() {
    std::wstring buffer(MAX_PATH, L'\0');
    while (true) {
        DWORD const length =
            ::GetModuleFileNameW(nullptr, buffer.data(), static_cast<DWORD>(buffer.size()));
        if (length == 0) {
            return std::nullopt;
        }
        if (length < buffer.size()) {
            buffer.resize(length);
            return std::filesystem::path(buffer);
        }
        buffer.resize(buffer.size() * 2);
    }
}

bool is_executable(std::filesystem::path const& path) {
    std::error_code error;
    return std::filesystem::is_regular_file(path, error);
}

int run_in_place_of_this_process(std::filesystem::path const& program,
                                 std::vector<std::string> const& arguments, std::string& error) {
    // _wspawnv passes the arguments as one command line: each is quoted, with the quotes and
    // backslashes inside it escaped as CommandLineToArgvW reads them back.
    std::vector<std::wstring> quoted;
    quoted.reserve(arguments.size());
    for (std::string const& argument : arguments) {
        std::wstring const text = std::filesystem::path(argument).wstring();
        std::wstring out = L"\"";
        std::size_t backslashes = 0;
        for (wchar_t const c : text) {
            if (c == L'\\') {
                ++backslashes;
                continue;
            }
            out.append(c == L'"' ? backslashes * 2 + 1 : backslashes, L'\\');
            backslashes = 0;
            out.push_back(c);
        }
        out.append(backslashes * 2, L'\\');
        out.push_back(L'"');
        quoted.push_back(std::move(out));
    }
    std::vector<wchar_t const*> argv;
    argv.reserve(quoted.size() + 1);
    for (std::wstring const& argument : quoted) {
        argv.push_back(argument.c_str());
    }
    argv.push_back(nullptr);
    intptr_t const status = ::_wspawnv(_P_WAIT, program.c_str(), argv.data());
    if (status == -1) {
        error = std::strerror(errno);
        return kExitFailure;
    }
    std::exit(static_cast<int>(status));
}

} // namespace tensoracle::cli
