// The Win32 calls through which replace_file and flush_directory (io/windows/platform.cpp) open,
// rename, flush and close files, and the handle they close them with. The calls are the real
// functions; a test may replace them (Win32CallsOverride) to record what was asked and to inject
// failures. Windows only.
#pragma once

// windows.h comes first.
// clang-format off
#include <windows.h>
// clang-format on

#include <utility>

namespace tensoracle::platform::detail {

struct Win32Calls {
    decltype(&::CreateFileW) create_file = &::CreateFileW;
    decltype(&::SetFileInformationByHandle) set_file_information = &::SetFileInformationByHandle;
    decltype(&::FlushFileBuffers) flush_file_buffers = &::FlushFileBuffers;
    decltype(&::CloseHandle) close_handle = &::CloseHandle;
    decltype(&::MoveFileExW) move_file = &::MoveFileExW;
};

// The calls in use (one set for the process). Tests replace them only while no other thread
// renames or flushes.
Win32Calls& win32_calls() noexcept;

// Replaces the calls in use for its lifetime, then restores the previous ones.
class Win32CallsOverride {
public:
    explicit Win32CallsOverride(Win32Calls calls) noexcept
        : previous_(std::exchange(win32_calls(), calls)) {}
    Win32CallsOverride(Win32CallsOverride const&) = delete;
    Win32CallsOverride& operator=(Win32CallsOverride const&) = delete;
    Win32CallsOverride(Win32CallsOverride&&) = delete;
    Win32CallsOverride& operator=(Win32CallsOverride&&) = delete;
    ~Win32CallsOverride() { win32_calls() = previous_; }

private:
    Win32Calls previous_;
};

// Owns a handle from CreateFileW and closes it (through win32_calls().close_handle) on every
// path out of its scope, an exception's included.
class UniqueHandle {
public:
    UniqueHandle() noexcept = default;
    explicit UniqueHandle(HANDLE handle) noexcept : handle_(handle) {}
    UniqueHandle(UniqueHandle&& other) noexcept
        : handle_(std::exchange(other.handle_, INVALID_HANDLE_VALUE)) {}
    UniqueHandle& operator=(UniqueHandle&& other) noexcept {
        if (this != &other) {
            reset();
            handle_ = std::exchange(other.handle_, INVALID_HANDLE_VALUE);
        }
        return *this;
    }
    UniqueHandle(UniqueHandle const&) = delete;
    UniqueHandle& operator=(UniqueHandle const&) = delete;
    ~UniqueHandle() { reset(); }

    HANDLE get() const noexcept { return handle_; }
    explicit operator bool() const noexcept {
        return handle_ != INVALID_HANDLE_VALUE && handle_ != nullptr;
    }
    // Closes the handle now, keeping GetLastError() as it was (what callers report).
    void reset() noexcept {
        if (*this) {
            DWORD const error = ::GetLastError();
            (void)win32_calls().close_handle(std::exchange(handle_, INVALID_HANDLE_VALUE));
            ::SetLastError(error);
        }
    }

private:
    HANDLE handle_ = INVALID_HANDLE_VALUE;
};

} // namespace tensoracle::platform::detail
