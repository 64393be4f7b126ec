// The operating-system calls of the core on Windows (see platform.hpp): Win32 handles wrapped in
// C runtime descriptors, CreateFileW sharing read, write and delete access, LockFileEx,
// SetFileInformationByHandle (FileRenameInfoEx) or MoveFileExW, FlushFileBuffers (of files and of
// directories), CreateFileMappingW and MapViewOfFile, FindFirstFileW and LoadLibraryExW, with each
// Win32 error mapped onto the errno the callers test. The rename's and the directory flush's calls
// go through win32_calls.hpp, which tests may replace.
#include "io/platform.hpp"

#include "io/windows/win32_calls.hpp"

// windows.h comes first.
// clang-format off
#include <windows.h>
#include <io.h>
// clang-format on

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace tensoracle::platform {

detail::Win32Calls& detail::win32_calls() noexcept {
    static Win32Calls calls;
    return calls;
}

namespace {

// 100-nanosecond intervals between 1601-01-01 (FILETIME's epoch) and 1970-01-01.
constexpr std::int64_t kEpochDifference = 116'444'736'000'000'000;

int errno_of(DWORD error) noexcept {
    switch (error) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE:
    case ERROR_BAD_NETPATH:
    case ERROR_BAD_PATHNAME:
        return ENOENT;
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS:
        return EEXIST;
    case ERROR_ACCESS_DENIED:
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION:
    case ERROR_USER_MAPPED_FILE:
    case ERROR_DELETE_PENDING:
        return EACCES;
    case ERROR_WRITE_PROTECT:
        return EROFS;
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL:
        return ENOSPC;
    case ERROR_DIRECTORY:
        return ENOTDIR;
    case ERROR_DIR_NOT_EMPTY:
        return ENOTEMPTY;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
        return ENOMEM;
    case ERROR_INVALID_HANDLE:
        return EBADF;
    case ERROR_INVALID_PARAMETER:
        return EINVAL;
    case ERROR_FILENAME_EXCED_RANGE:
        return ENAMETOOLONG;
    case ERROR_CANT_RESOLVE_FILENAME:
        return ELOOP;
    default:
        return EIO;
    }
}

// Sets errno from GetLastError() and returns `result`.
template <typename Result>
Result failed(Result result) noexcept {
    errno = errno_of(::GetLastError());
    return result;
}

HANDLE handle_of(int fd) noexcept {
    return reinterpret_cast<HANDLE>(::_get_osfhandle(fd)); // NOLINT(performance-no-int-to-ptr)
}

std::string utf8(std::wstring_view text) {
    if (text.empty()) {
        return {};
    }
    int const size = ::WideCharToMultiByte(CP_UTF8, 0, text.data(), static_cast<int>(text.size()),
                                           nullptr, 0, nullptr, nullptr);
    std::string result(static_cast<std::size_t>(size), '\0');
    ::WideCharToMultiByte(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), result.data(),
                          size, nullptr, nullptr);
    return result;
}

std::wstring wide(std::string_view text) {
    if (text.empty()) {
        return {};
    }
    int const size =
        ::MultiByteToWideChar(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), nullptr, 0);
    std::wstring result(static_cast<std::size_t>(size), L'\0');
    ::MultiByteToWideChar(CP_UTF8, 0, text.data(), static_cast<int>(text.size()), result.data(),
                          size);
    return result;
}

// Whether an open handle is a symbolic link or a junction itself (opened without following it).
bool is_link(HANDLE handle) noexcept {
    FILE_ATTRIBUTE_TAG_INFO tag{};
    if (::GetFileInformationByHandleEx(handle, FileAttributeTagInfo, &tag, sizeof tag) == 0) {
        return false;
    }
    return (tag.FileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0 &&
           (tag.ReparseTag == IO_REPARSE_TAG_SYMLINK ||
            tag.ReparseTag == IO_REPARSE_TAG_MOUNT_POINT);
}

std::optional<FileStatus> status_of_handle(HANDLE handle) noexcept {
    BY_HANDLE_FILE_INFORMATION information{};
    if (::GetFileInformationByHandle(handle, &information) == 0) {
        return failed(std::optional<FileStatus>{});
    }
    FileStatus result;
    if (is_link(handle)) {
        result.kind = FileKind::link;
    } else if ((information.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0) {
        result.kind = FileKind::directory;
    } else if (::GetFileType(handle) == FILE_TYPE_DISK) {
        result.kind = FileKind::regular;
    }
    result.size = (std::uint64_t{information.nFileSizeHigh} << 32U) | information.nFileSizeLow;
    auto const ticks = static_cast<std::int64_t>(
        (std::uint64_t{information.ftLastWriteTime.dwHighDateTime} << 32U) |
        information.ftLastWriteTime.dwLowDateTime);
    result.modified_ns = (ticks - kEpochDifference) * 100;
    result.identity =
        (std::uint64_t{information.nFileIndexHigh} << 32U) | information.nFileIndexLow;
    result.device = information.dwVolumeSerialNumber;
    return result;
}

DWORD chunk(std::size_t size) noexcept {
    return static_cast<DWORD>(std::min<std::size_t>(size, std::size_t{1} << 30U));
}

} // namespace

int open_file(std::filesystem::path const& path, int flags, unsigned /*mode*/,
              Follow follow) noexcept {
    int const access_mode = flags & (O_RDONLY | O_WRONLY | O_RDWR);
    DWORD access = access_mode == O_WRONLY ? GENERIC_WRITE
                   : access_mode == O_RDWR ? GENERIC_READ | GENERIC_WRITE
                                           : GENERIC_READ;
    bool const create = (flags & O_CREAT) != 0;
    bool const exclusive = (flags & O_EXCL) != 0;
    bool const truncate = (flags & O_TRUNC) != 0;
    DWORD const disposition = create && exclusive  ? CREATE_NEW
                              : create && truncate ? CREATE_ALWAYS
                              : create             ? OPEN_ALWAYS
                              : truncate           ? TRUNCATE_EXISTING
                                                   : OPEN_EXISTING;
    // Directories open as on POSIX (and are then refused as not regular files by the callers).
    DWORD attributes = FILE_ATTRIBUTE_NORMAL | FILE_FLAG_BACKUP_SEMANTICS;
    if (follow == Follow::no_links) {
        attributes |= FILE_FLAG_OPEN_REPARSE_POINT;
    }
    DWORD const share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
    // Readers may also record a read in the modification time (touch), where the file allows.
    HANDLE handle = ::CreateFileW(path.c_str(), access | FILE_WRITE_ATTRIBUTES, share, nullptr,
                                  disposition, attributes, nullptr);
    if (handle == INVALID_HANDLE_VALUE && ::GetLastError() == ERROR_ACCESS_DENIED) {
        handle =
            ::CreateFileW(path.c_str(), access, share, nullptr, disposition, attributes, nullptr);
    }
    if (handle == INVALID_HANDLE_VALUE) {
        return failed(-1);
    }
    if (follow == Follow::no_links && is_link(handle)) {
        ::CloseHandle(handle);
        errno = ELOOP;
        return -1;
    }
    int const runtime_flags = (access_mode == O_WRONLY ? _O_WRONLY
                               : access_mode == O_RDWR ? _O_RDWR
                                                       : _O_RDONLY) |
                              _O_BINARY | _O_NOINHERIT;
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the C runtime takes an intptr_t
    int const fd = ::_open_osfhandle(reinterpret_cast<intptr_t>(handle), runtime_flags);
    if (fd < 0) {
        ::CloseHandle(handle);
        errno = EMFILE;
    }
    return fd;
}

int close_file(int fd) noexcept {
    return ::_close(fd);
}

std::optional<FileStatus> status(int fd) noexcept {
    HANDLE handle = handle_of(fd);
    if (handle == INVALID_HANDLE_VALUE) {
        errno = EBADF;
        return std::nullopt;
    }
    return status_of_handle(handle);
}

std::optional<FileStatus> status(std::filesystem::path const& path, Follow follow) noexcept {
    DWORD attributes = FILE_FLAG_BACKUP_SEMANTICS;
    if (follow == Follow::no_links) {
        attributes |= FILE_FLAG_OPEN_REPARSE_POINT;
    }
    // Reading attributes conflicts with no other opener's sharing mode.
    HANDLE handle = ::CreateFileW(path.c_str(), FILE_READ_ATTRIBUTES,
                                  FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                                  OPEN_EXISTING, attributes, nullptr);
    if (handle == INVALID_HANDLE_VALUE) {
        return failed(std::optional<FileStatus>{});
    }
    auto result = status_of_handle(handle);
    int const error = errno;
    ::CloseHandle(handle);
    errno = error;
    return result;
}

long long read_some(int fd, void* buffer, std::size_t size) noexcept {
    DWORD count = 0;
    if (::ReadFile(handle_of(fd), buffer, chunk(size), &count, nullptr) == 0) {
        DWORD const error = ::GetLastError();
        if (error == ERROR_HANDLE_EOF || error == ERROR_BROKEN_PIPE) {
            return 0;
        }
        errno = errno_of(error);
        return -1;
    }
    return count;
}

long long read_at(int fd, void* buffer, std::size_t size, std::uint64_t offset) noexcept {
    OVERLAPPED position{};
    position.Offset = static_cast<DWORD>(offset & 0xffffffffU);
    position.OffsetHigh = static_cast<DWORD>(offset >> 32U);
    DWORD count = 0;
    if (::ReadFile(handle_of(fd), buffer, chunk(size), &count, &position) == 0) {
        DWORD const error = ::GetLastError();
        if (error == ERROR_HANDLE_EOF) {
            return 0;
        }
        errno = errno_of(error);
        return -1;
    }
    return count;
}

long long copy_some(int /*from*/, std::uint64_t /*offset*/, int /*to*/,
                    std::size_t /*size*/) noexcept {
    errno = ENOSYS; // no kernel copy between descriptors: the caller reads and writes
    return -1;
}

long long write_some(int fd, void const* buffer, std::size_t size) noexcept {
    DWORD count = 0;
    if (::WriteFile(handle_of(fd), buffer, chunk(size), &count, nullptr) == 0) {
        return failed(-1LL);
    }
    return count;
}

int flush_file(int fd) noexcept {
    return ::FlushFileBuffers(handle_of(fd)) != 0 ? 0 : failed(-1);
}

void start_writeback(int, std::uint64_t, std::uint64_t) noexcept {} // FlushFileBuffers only

int touch(int fd) noexcept {
    FILETIME now{};
    ::GetSystemTimeAsFileTime(&now);
    return ::SetFileTime(handle_of(fd), nullptr, nullptr, &now) != 0 ? 0 : failed(-1);
}

namespace {

// `path` as a verbatim Win32 path ("\\?\C:\...", "\\?\UNC\server\share\..."), the form
// FILE_RENAME_INFO takes without a root directory.
std::wstring verbatim(std::filesystem::path const& path) {
    std::wstring full = std::filesystem::absolute(path).wstring();
    if (full.starts_with(LR"(\\?\)")) {
        return full;
    }
    if (full.starts_with(LR"(\\)")) {
        return LR"(\\?\UNC\)" + full.substr(2);
    }
    return LR"(\\?\)" + full;
}

// Windows 10's values, which mingw-w64 declares only for a newer _WIN32_WINNT than this build's
// Windows 8 (FileRenameInfoEx, FILE_RENAME_FLAG_REPLACE_IF_EXISTS and _POSIX_SEMANTICS).
constexpr auto kFileRenameInfoEx = static_cast<FILE_INFO_BY_HANDLE_CLASS>(22);
constexpr unsigned kReplaceIfExists = 0x1;
constexpr unsigned kPosixSemantics = 0x2;

// The rename with POSIX semantics (Windows 10 1709 and later, on NTFS): `to` is replaced even
// while other processes that share delete access have it open; they go on reading the old file.
// False with nothing renamed wherever it fails: where the system or the file system lacks it
// (older Windows, FAT, some network shares, Wine), or for any other reason, which MoveFileExW
// then reports. Like rename(2) it does not wait for the disk; flush_directory, which the save
// calls next, does. A flush here could only fail after the rename, where the save reads a failed
// replace_file as nothing renamed and the entry unchanged.
bool replace_with_posix_semantics(std::filesystem::path const& from,
                                  std::filesystem::path const& to) noexcept {
    auto const& calls = detail::win32_calls();
    try {
        detail::UniqueHandle const source{
            calls.create_file(from.c_str(), DELETE | SYNCHRONIZE,
                              FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                              OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT, nullptr)};
        if (!source) {
            return false;
        }
        std::wstring const name = verbatim(to);
        std::size_t const name_bytes = name.size() * sizeof(wchar_t);
        // FILE_RENAME_INFO ends in a one-character FileName array: room for the name and its NUL.
        std::vector<std::byte> buffer(sizeof(FILE_RENAME_INFO) + name_bytes);
        auto* const info = reinterpret_cast<FILE_RENAME_INFO*>(buffer.data());
        // Windows 10 declares a DWORD of flags where this build's declaration (Windows 8) has the
        // BOOLEAN ReplaceIfExists: its first byte, the rest zero as the buffer is.
        info->ReplaceIfExists = static_cast<BOOLEAN>(kReplaceIfExists | kPosixSemantics);
        info->RootDirectory = nullptr;
        info->FileNameLength = static_cast<DWORD>(name_bytes);
        std::memcpy(static_cast<void*>(info->FileName), name.c_str(), name_bytes + sizeof(wchar_t));
        return calls.set_file_information(source.get(), kFileRenameInfoEx, info,
                                          static_cast<DWORD>(buffer.size())) != 0;
    } catch (...) {
        return false; // std::bad_alloc, or a path that cannot be made absolute; source is closed
    }
}

// Errors of a directory flush that say this file system cannot flush a directory (FAT, network
// shares: ERROR_INVALID_FUNCTION; ERROR_ACCESS_DENIED where the write access it needs is refused
// or a directory handle is not flushed), as fsync(2) reports EINVAL where it cannot.
bool cannot_flush_directories(DWORD error) noexcept {
    return error == ERROR_INVALID_FUNCTION || error == ERROR_NOT_SUPPORTED ||
           error == ERROR_ACCESS_DENIED || error == ERROR_INVALID_PARAMETER;
}

} // namespace

int replace_file(std::filesystem::path const& from, std::filesystem::path const& to) noexcept {
    if (replace_with_posix_semantics(from, to)) {
        return 0;
    }
    // MoveFileExW refuses to replace a file that any other handle has open, even one sharing
    // delete access: the store's own readers hold an entry only while they copy it, so the
    // rename is tried again for up to 5 seconds before the refusal is reported.
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    DWORD pause_ms = 1;
    DWORD const flags = MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH;
    while (true) {
        if (detail::win32_calls().move_file(from.c_str(), to.c_str(), flags) != 0) {
            return 0;
        }
        DWORD const error = ::GetLastError();
        bool const held = error == ERROR_ACCESS_DENIED || error == ERROR_SHARING_VIOLATION;
        if (!held || std::chrono::steady_clock::now() >= deadline) {
            errno = errno_of(error);
            return -1;
        }
        ::Sleep(pause_ms);
        pause_ms = std::min<DWORD>(pause_ms * 2, 50);
    }
}

int flush_directory(std::filesystem::path const& directory) noexcept {
    auto const& calls = detail::win32_calls();
    // FlushFileBuffers needs write access: FILE_WRITE_DATA, for a directory FILE_ADD_FILE, the
    // right the rename into it needed. FILE_FLAG_BACKUP_SEMANTICS opens a directory.
    detail::UniqueHandle const handle{
        calls.create_file(directory.c_str(), FILE_WRITE_DATA | SYNCHRONIZE,
                          FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                          OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr)};
    if (handle && calls.flush_file_buffers(handle.get()) != 0) {
        return 0;
    }
    DWORD const error = ::GetLastError();
    if (cannot_flush_directories(error)) {
        return 0; // the rename is as durable as this file system makes it
    }
    errno = errno_of(error);
    return -1;
}

int remove_file(std::filesystem::path const& path) noexcept {
    return ::DeleteFileW(path.c_str()) != 0 ? 0 : failed(-1);
}

int make_directory(std::filesystem::path const& path) noexcept {
    return ::CreateDirectoryW(path.c_str(), nullptr) != 0 ? 0 : failed(-1);
}

std::optional<std::vector<std::string>> list_directory(std::filesystem::path const& directory) {
    WIN32_FIND_DATAW found{};
    HANDLE search = ::FindFirstFileW((directory / L"*").c_str(), &found);
    if (search == INVALID_HANDLE_VALUE) {
        return failed(std::optional<std::vector<std::string>>{});
    }
    std::vector<std::string> names;
    do {
        std::wstring_view const name{found.cFileName};
        if (name != L"." && name != L"..") {
            names.push_back(utf8(name));
        }
    } while (::FindNextFileW(search, &found) != 0);
    DWORD const error = ::GetLastError();
    ::FindClose(search);
    if (error != ERROR_NO_MORE_FILES) {
        errno = errno_of(error);
        return std::nullopt;
    }
    return names;
}

int lock_file(int fd, bool exclusive, bool wait) noexcept {
    DWORD const flags =
        (exclusive ? LOCKFILE_EXCLUSIVE_LOCK : 0U) | (wait ? 0U : LOCKFILE_FAIL_IMMEDIATELY);
    OVERLAPPED whole_file{}; // from offset 0, over every byte a file can have
    if (::LockFileEx(handle_of(fd), flags, 0, MAXDWORD, MAXDWORD, &whole_file) != 0) {
        return 0;
    }
    DWORD const error = ::GetLastError();
    errno =
        error == ERROR_LOCK_VIOLATION || error == ERROR_IO_PENDING ? EWOULDBLOCK : errno_of(error);
    return -1;
}

int unlock_file(int fd) noexcept {
    OVERLAPPED whole_file{};
    return ::UnlockFileEx(handle_of(fd), 0, MAXDWORD, MAXDWORD, &whole_file) != 0 ? 0 : failed(-1);
}

void* map_file(int fd, std::size_t size) noexcept {
    HANDLE mapping = ::CreateFileMappingW(handle_of(fd), nullptr, PAGE_READONLY, 0, 0, nullptr);
    if (mapping == nullptr) {
        return failed(nullptr);
    }
    void* const address = ::MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, size);
    DWORD const error = ::GetLastError();
    ::CloseHandle(mapping); // the view keeps the mapping alive
    if (address == nullptr) {
        errno = errno_of(error);
    }
    return address;
}

void unmap_file(void* address, std::size_t /*size*/) noexcept {
    ::UnmapViewOfFile(address);
}

void* allocate_private_memory(std::size_t size) noexcept {
    void* const address = ::VirtualAlloc(nullptr, size, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE);
    if (address == nullptr) {
        errno = ENOMEM;
    }
    return address;
}

void release_private_memory(void* address, std::size_t /*size*/) noexcept {
    ::VirtualFree(address, 0, MEM_RELEASE);
}

void advise_sequential(void* /*address*/, std::size_t /*size*/) noexcept {}

void advise_sequential_reads(int /*fd*/) noexcept {}

long long process_id() noexcept {
    return static_cast<long long>(::GetCurrentProcessId());
}

bool process_alive(long long pid) noexcept {
    if (pid <= 0 || pid > static_cast<long long>(std::numeric_limits<DWORD>::max())) {
        return false;
    }
    HANDLE process =
        ::OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, static_cast<DWORD>(pid));
    if (process == nullptr) {
        return ::GetLastError() == ERROR_ACCESS_DENIED; // there, but not ours to query
    }
    DWORD code = 0;
    bool const running = ::GetExitCodeProcess(process, &code) != 0 && code == STILL_ACTIVE;
    ::CloseHandle(process);
    return running;
}

Home home_directory() {
    wchar_t const* const profile = ::_wgetenv(L"USERPROFILE");
    return {profile == nullptr ? std::string{} : utf8(profile), "USERPROFILE"};
}

std::string error_text(int error_number) {
    std::string text = std::strerror(error_number);
    if (error_number == EACCES) {
        text += " (on Windows also when another process keeps the file open or mapped)";
    }
    return text;
}

std::optional<DynamicLibrary> DynamicLibrary::load(std::string const& name, std::string& why) {
    HMODULE const module =
        ::LoadLibraryExW(wide(name).c_str(), nullptr, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
    if (module == nullptr) {
        DWORD const error = ::GetLastError();
        wchar_t* message = nullptr;
        DWORD const length = ::FormatMessageW(
            FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM |
                FORMAT_MESSAGE_IGNORE_INSERTS,
            nullptr, error, 0,
            reinterpret_cast<wchar_t*>(&message), // the allocating form takes the pointer's address
            0, nullptr);
        why = length == 0 ? "Windows error " + std::to_string(error)
                          : utf8(std::wstring_view(message, length));
        ::LocalFree(message);
        while (!why.empty() && (why.back() == '\n' || why.back() == '\r' || why.back() == ' ')) {
            why.pop_back();
        }
        return std::nullopt;
    }
    return DynamicLibrary(module);
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
    if (this != &other) {
        if (handle_ != nullptr) {
            ::FreeLibrary(static_cast<HMODULE>(handle_));
        }
        handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
}

DynamicLibrary::~DynamicLibrary() {
    if (handle_ != nullptr) {
        ::FreeLibrary(static_cast<HMODULE>(handle_));
    }
}

void* DynamicLibrary::symbol(char const* symbol) const noexcept {
    FARPROC const address = ::GetProcAddress(static_cast<HMODULE>(handle_), symbol);
    void* result = nullptr;
    static_assert(sizeof result == sizeof address);
    std::memcpy(&result, &address, sizeof result); // a function's address as data, as dlsym gives
    return result;
}

char const* cuda_driver_library() noexcept {
    return "nvcuda.dll";
}

} // namespace tensoracle::platform
