// Child processes on Windows (child_process.hpp): CreateProcessW of this test binary, whose
// environment names the role; TerminateProcess stands in for SIGKILL.
#include "support/child_process.hpp"

#include <stdexcept>
#include <windows.h>

namespace tensoracle::testing {
namespace {

// The exit code TerminateProcess gives a killed child; no role returns it.
constexpr UINT kTerminated = 0xDEAD;

HANDLE handle_of(std::intptr_t native) {
    // NOLINTNEXTLINE(performance-no-int-to-ptr): ChildProcess keeps the HANDLE in an intptr_t
    return reinterpret_cast<HANDLE>(native);
}

std::wstring widen(std::string const& text) {
    if (text.empty()) {
        return {};
    }
    int const size =
        ::MultiByteToWideChar(CP_ACP, 0, text.data(), static_cast<int>(text.size()), nullptr, 0);
    std::wstring wide(static_cast<std::size_t>(size), L'\0');
    ::MultiByteToWideChar(CP_ACP, 0, text.data(), static_cast<int>(text.size()), wide.data(), size);
    return wide;
}

} // namespace

ChildProcess::ChildProcess(std::string const& role, std::vector<std::string> const& arguments) {
    std::wstring self(MAX_PATH, L'\0');
    for (;;) {
        DWORD const size =
            ::GetModuleFileNameW(nullptr, self.data(), static_cast<DWORD>(self.size()));
        if (size == 0) {
            throw std::runtime_error("GetModuleFileNameW failed");
        }
        if (size < self.size()) {
            self.resize(size);
            break;
        }
        self.resize(self.size() * 2);
    }
    std::string lines;
    for (auto const& argument : arguments) {
        lines += argument + "\n";
    }
    // The child's environment: this one's, less any role of its own, plus the role.
    std::wstring block;
    if (wchar_t* const strings = ::GetEnvironmentStringsW()) {
        for (wchar_t const* variable = strings; *variable != L'\0';) {
            std::wstring const entry(variable);
            if (entry.rfind(L"TENSORACLE_TEST_CHILD", 0) != 0) {
                block += entry;
                block.push_back(L'\0');
            }
            variable += entry.size() + 1;
        }
        ::FreeEnvironmentStringsW(strings);
    }
    block += L"TENSORACLE_TEST_CHILD=" + widen(role);
    block.push_back(L'\0');
    block += L"TENSORACLE_TEST_CHILD_ARGS=" + widen(lines);
    block.push_back(L'\0');
    block.push_back(L'\0');
    std::wstring command = L"\"" + self + L"\" --gtest_filter=-*";
    STARTUPINFOW startup{};
    startup.cb = sizeof(startup);
    PROCESS_INFORMATION process{};
    // Wine at times fails a start with ERROR_INTERNAL_ERROR while many processes start at once:
    // such a failure is tried again.
    for (int attempt = 1;; ++attempt) {
        if (::CreateProcessW(self.c_str(), command.data(), nullptr, nullptr, FALSE,
                             CREATE_UNICODE_ENVIRONMENT, block.data(), nullptr, &startup,
                             &process)) {
            break;
        }
        DWORD const error = ::GetLastError();
        if (error != ERROR_INTERNAL_ERROR || attempt == 20) {
            throw std::runtime_error("CreateProcessW failed: " + std::to_string(error));
        }
        ::Sleep(50);
    }
    ::CloseHandle(process.hThread);
    native_ = reinterpret_cast<std::intptr_t>(process.hProcess);
}

ChildProcess::~ChildProcess() {
    if (native_ == -1) {
        return;
    }
    if (!status_) {
        kill();
    }
    ::CloseHandle(handle_of(native_));
}

std::optional<int> ChildProcess::wait(std::chrono::milliseconds timeout) {
    if (status_) {
        return status_;
    }
    if (::WaitForSingleObject(handle_of(native_), static_cast<DWORD>(timeout.count())) !=
        WAIT_OBJECT_0) {
        return std::nullopt;
    }
    DWORD code = 0;
    if (!::GetExitCodeProcess(handle_of(native_), &code)) {
        throw std::runtime_error("GetExitCodeProcess failed");
    }
    status_ = code == kTerminated ? kKilledChild : static_cast<int>(code);
    return status_;
}

void ChildProcess::kill() {
    if (status_) {
        return;
    }
    ::TerminateProcess(handle_of(native_), kTerminated);
    ::WaitForSingleObject(handle_of(native_), INFINITE);
    (void)wait(std::chrono::milliseconds(0));
}

} // namespace tensoracle::testing
