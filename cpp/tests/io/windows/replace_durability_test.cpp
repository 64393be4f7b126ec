// Windows: the atomic save's rename and directory flush (replace_file, flush_directory). The
// directory is opened with write access and flushed (FlushFileBuffers needs write access), a
// failed flush is reported as -1 with errno, file systems that cannot flush a directory are
// tolerated, and every handle opened is closed, when the rename throws too. The Win32 calls go
// through io/windows/win32_calls.hpp: the tests record them and inject failures, the real
// functions doing the work underneath.
#include "io/platform.hpp"
#include "io/windows/win32_calls.hpp"
#include "support/test_support.hpp"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <gtest/gtest.h>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tensoracle {
namespace {

struct Opened {
    std::wstring path;
    DWORD access = 0;
    DWORD flags = 0;
    HANDLE handle = INVALID_HANDLE_VALUE;
};

struct Flushed {
    HANDLE handle = INVALID_HANDLE_VALUE;
    bool succeeded = false;
};

// What the calls saw, and the failures to inject (0: call the real function).
struct Record {
    std::vector<Opened> opened;
    std::vector<HANDLE> closed;
    std::vector<Flushed> flushed;
    int renames = 0;
    DWORD open_failure = 0;
    DWORD flush_failure = 0;
    DWORD rename_failure = 0;
};

Record& record() {
    static Record value;
    return value;
}

HANDLE WINAPI recording_create_file(LPCWSTR path, DWORD access, DWORD share,
                                    LPSECURITY_ATTRIBUTES security, DWORD disposition, DWORD flags,
                                    HANDLE template_file) {
    if (record().open_failure != 0) {
        ::SetLastError(record().open_failure);
        return INVALID_HANDLE_VALUE;
    }
    HANDLE handle = ::CreateFileW(path, access, share, security, disposition, flags, template_file);
    if (handle != INVALID_HANDLE_VALUE) {
        record().opened.push_back({path, access, flags, handle});
    }
    return handle;
}

BOOL WINAPI recording_flush(HANDLE handle) {
    if (record().flush_failure != 0) {
        record().flushed.push_back({handle, false});
        ::SetLastError(record().flush_failure);
        return FALSE;
    }
    BOOL const result = ::FlushFileBuffers(handle);
    DWORD const error = ::GetLastError();
    record().flushed.push_back({handle, result != 0});
    ::SetLastError(error);
    return result;
}

BOOL WINAPI recording_close(HANDLE handle) {
    record().closed.push_back(handle);
    return ::CloseHandle(handle);
}

BOOL WINAPI recording_rename(HANDLE handle, FILE_INFO_BY_HANDLE_CLASS kind, LPVOID info,
                             DWORD size) {
    ++record().renames;
    if (record().rename_failure != 0) {
        ::SetLastError(record().rename_failure);
        return FALSE;
    }
    return ::SetFileInformationByHandle(handle, kind, info, size);
}

platform::detail::Win32Calls recording_calls() {
    platform::detail::Win32Calls calls;
    calls.create_file = &recording_create_file;
    calls.flush_file_buffers = &recording_flush;
    calls.close_handle = &recording_close;
    calls.set_file_information = &recording_rename;
    return calls;
}

bool writable(DWORD access) {
    return (access & (GENERIC_WRITE | GENERIC_ALL | FILE_WRITE_DATA | FILE_APPEND_DATA)) != 0;
}

std::string text_of(std::filesystem::path const& path) {
    auto const bytes = testing::read_all(path);
    std::string text(bytes.size(), '\0');
    std::transform(bytes.begin(), bytes.end(), text.begin(),
                   [](std::byte b) { return static_cast<char>(b); });
    return text;
}

void write_text(std::filesystem::path const& path, std::string const& text) {
    testing::write_all(path, std::as_bytes(std::span(text)));
}

// Whether some handle still has `path` open: an opener that shares nothing is refused then.
bool held_open(std::filesystem::path const& path) {
    HANDLE handle = ::CreateFileW(path.c_str(), GENERIC_READ, 0, nullptr, OPEN_EXISTING,
                                  FILE_ATTRIBUTE_NORMAL, nullptr);
    if (handle == INVALID_HANDLE_VALUE) {
        return ::GetLastError() == ERROR_SHARING_VIOLATION;
    }
    ::CloseHandle(handle);
    return false;
}

class ReplaceDurability : public ::testing::Test {
protected:
    ReplaceDurability() { record() = Record{}; }

    // Every handle that was opened was closed once, and nothing else was closed.
    static void expect_every_handle_closed() {
        std::vector<HANDLE> opened;
        for (auto const& item : record().opened) {
            opened.push_back(item.handle);
        }
        std::vector<HANDLE> closed = record().closed;
        std::sort(opened.begin(), opened.end());
        std::sort(closed.begin(), closed.end());
        EXPECT_EQ(opened, closed);
    }

    testing::TemporaryDirectory directory_;
    platform::detail::Win32CallsOverride calls_{recording_calls()};
};

TEST_F(ReplaceDurability, TheDirectoryIsOpenedForWritingAndFlushed) {
    ASSERT_EQ(platform::flush_directory(directory_.path()), 0);

    ASSERT_EQ(record().opened.size(), 1U);
    Opened const& opened = record().opened[0];
    EXPECT_EQ(std::filesystem::path(opened.path), directory_.path());
    EXPECT_NE(opened.flags & FILE_FLAG_BACKUP_SEMANTICS, 0U) << "what opens a directory";
    EXPECT_TRUE(writable(opened.access))
        << "FlushFileBuffers needs write access: " << std::hex << opened.access;
    ASSERT_EQ(record().flushed.size(), 1U);
    EXPECT_EQ(record().flushed[0].handle, opened.handle);
    // The real flush of the directory succeeded: nothing was tolerated here.
    EXPECT_TRUE(record().flushed[0].succeeded);
    expect_every_handle_closed();
}

TEST_F(ReplaceDurability, AFailedDirectoryFlushIsReportedWithErrno) {
    for (auto const& [error, expected] : {std::pair<DWORD, int>{ERROR_IO_DEVICE, EIO},
                                          std::pair<DWORD, int>{ERROR_DISK_FULL, ENOSPC},
                                          std::pair<DWORD, int>{ERROR_WRITE_PROTECT, EROFS}}) {
        record() = Record{};
        record().flush_failure = error;
        errno = 0;
        EXPECT_EQ(platform::flush_directory(directory_.path()), -1) << error;
        EXPECT_EQ(errno, expected) << error;
        EXPECT_EQ(record().flushed.size(), 1U) << error;
        expect_every_handle_closed();
    }
}

TEST_F(ReplaceDurability, FileSystemsThatCannotFlushADirectoryAreTolerated) {
    // FAT and network shares: ERROR_INVALID_FUNCTION; a refused write access, at the open or at
    // the flush: ERROR_ACCESS_DENIED.
    for (DWORD const error : {DWORD{ERROR_INVALID_FUNCTION}, DWORD{ERROR_NOT_SUPPORTED},
                              DWORD{ERROR_ACCESS_DENIED}, DWORD{ERROR_INVALID_PARAMETER}}) {
        record() = Record{};
        record().flush_failure = error;
        EXPECT_EQ(platform::flush_directory(directory_.path()), 0) << error;
        EXPECT_EQ(record().flushed.size(), 1U) << error;
        expect_every_handle_closed();
    }
    record() = Record{};
    record().open_failure = ERROR_ACCESS_DENIED;
    EXPECT_EQ(platform::flush_directory(directory_.path()), 0);
    EXPECT_TRUE(record().flushed.empty());
}

TEST_F(ReplaceDurability, AMissingDirectoryIsAnError) {
    errno = 0;
    EXPECT_EQ(platform::flush_directory(directory_.path() / "missing"), -1);
    EXPECT_EQ(errno, ENOENT);
    EXPECT_TRUE(record().flushed.empty());
    expect_every_handle_closed();
}

TEST_F(ReplaceDurability, ASaveReplacesTheEntryAndFlushesItsDirectory) {
    auto const entry = directory_.path() / "entry.engine";
    auto const temporary = directory_.path() / "entry.engine.tmp-1-00";
    write_text(entry, "old");
    write_text(temporary, "new");

    ASSERT_EQ(platform::replace_file(temporary, entry), 0);
    ASSERT_EQ(platform::flush_directory(directory_.path()), 0);

    EXPECT_EQ(text_of(entry), "new");
    EXPECT_FALSE(std::filesystem::exists(temporary));
    EXPECT_EQ(testing::names_in(directory_.path()), std::vector<std::string>{"entry.engine"});
    // The rename was tried through the source's handle (opened for delete), and the directory
    // was flushed through a handle with write access.
    ASSERT_FALSE(record().opened.empty());
    EXPECT_EQ(std::filesystem::path(record().opened.front().path), temporary);
    EXPECT_NE(record().opened.front().access & DELETE, 0U);
    EXPECT_EQ(record().renames, 1);
    ASSERT_EQ(record().flushed.size(), 1U);
    // The last handle opened with that value (a closed handle's value is given out again).
    auto const flushed =
        std::find_if(record().opened.rbegin(), record().opened.rend(),
                     [](Opened const& item) { return item.handle == record().flushed[0].handle; });
    ASSERT_NE(flushed, record().opened.rend());
    EXPECT_EQ(std::filesystem::path(flushed->path), directory_.path());
    EXPECT_TRUE(writable(flushed->access));
    EXPECT_TRUE(record().flushed[0].succeeded);
    expect_every_handle_closed();
    EXPECT_FALSE(held_open(entry));
}

TEST_F(ReplaceDurability, WhereTheRenameWithPosixSemanticsFailsMoveFileExReplacesTheEntry) {
    auto const entry = directory_.path() / "entry.engine";
    auto const temporary = directory_.path() / "entry.engine.tmp-1-01";
    write_text(entry, "old");
    write_text(temporary, "new");
    record().rename_failure = ERROR_INVALID_PARAMETER; // as on FAT, older Windows

    ASSERT_EQ(platform::replace_file(temporary, entry), 0);
    ASSERT_EQ(platform::flush_directory(directory_.path()), 0);

    EXPECT_EQ(record().renames, 1);
    EXPECT_EQ(text_of(entry), "new");
    EXPECT_FALSE(std::filesystem::exists(temporary));
    expect_every_handle_closed();
    EXPECT_FALSE(held_open(entry));
}

TEST_F(ReplaceDurability, TheSourceHandleIsClosedWhenTheRenameThrows) {
    // A target that cannot be made absolute: std::filesystem::absolute throws after the source
    // was opened. The rename fails, and no handle keeps the source open (which would make a
    // later replacement of it fail).
    auto const temporary = directory_.path() / "entry.engine.tmp-1-02";
    write_text(temporary, "new");

    errno = 0;
    EXPECT_EQ(platform::replace_file(temporary, std::filesystem::path{}), -1);
    EXPECT_NE(errno, 0);

    ASSERT_EQ(record().opened.size(), 1U);
    EXPECT_EQ(std::filesystem::path(record().opened[0].path), temporary);
    EXPECT_EQ(record().renames, 0);
    expect_every_handle_closed();
    EXPECT_FALSE(held_open(temporary));
    EXPECT_EQ(text_of(temporary), "new");
    // And the file is free to be replaced afterwards.
    auto const entry = directory_.path() / "entry.engine";
    ASSERT_EQ(platform::replace_file(temporary, entry), 0);
    EXPECT_EQ(text_of(entry), "new");
}

} // namespace
} // namespace tensoracle
