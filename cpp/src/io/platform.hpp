// Private to the core: the operating-system calls the core makes, behind one interface with one
// implementation per system (src/io/posix/, src/io/windows/; CMake compiles the one of the
// target). Files are named by C runtime descriptors (`int`) on both: POSIX descriptors there,
// descriptors of the Microsoft C runtime over Win32 handles on Windows.
//
// The functions report failures as the POSIX calls they stand for do: -1 (or false, or nullopt)
// with errno set, so that callers keep one error-handling path. The Windows implementation maps
// its errors onto errno (ENOENT, EEXIST, EACCES for a sharing violation, EWOULDBLOCK for a lock
// held elsewhere, ELOOP for a reparse point that open_file was told not to follow, ...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tensoracle::platform {

enum class Follow { links, no_links };

// How open_file opens: the C runtime's O_RDONLY, O_WRONLY or O_RDWR, with O_CREAT, O_EXCL and
// O_TRUNC. Without following links, a link at `path` fails with ELOOP. Either way the open of a
// FIFO or device does not block (POSIX O_NONBLOCK, which regular files ignore): every caller
// refuses what is not a regular file after the open, so a FIFO named where a file is expected
// is refused at once instead of hanging. Descriptors are not inherited by child processes. On
// Windows, files are opened sharing read, write and delete access, so an open descriptor of ours
// never keeps another process from replacing or removing the file.
int open_file(std::filesystem::path const& path, int flags, unsigned mode, Follow follow) noexcept;
int close_file(int fd) noexcept;

enum class FileKind { regular, directory, link, other };

struct FileStatus {
    FileKind kind = FileKind::other;
    std::uint64_t size = 0;
    std::int64_t modified_ns = 0; // since the Unix epoch
    std::uint64_t identity = 0;   // the inode number; on Windows the file index
    std::uint64_t device = 0;     // the device number; on Windows the volume serial number
};

std::optional<FileStatus> status(int fd) noexcept;
std::optional<FileStatus> status(std::filesystem::path const& path, Follow follow) noexcept;

// read(2) / pread(2) / write(2): the count done, 0 at the end of the file, or -1.
long long read_some(int fd, void* buffer, std::size_t size) noexcept;
long long read_at(int fd, void* buffer, std::size_t size, std::uint64_t offset) noexcept;
long long write_some(int fd, void const* buffer, std::size_t size) noexcept;
// Copies up to `size` bytes of `from` at `offset` to `to` at its position, inside the kernel
// (Linux's copy_file_range: no copy through this process, and blocks shared where the file system
// can): the count done, 0 at the end of `from`, or -1 with errno, ENOSYS where there is no such
// call (elsewhere) and EXDEV, EINVAL or EOPNOTSUPP where it does not apply to these files: the
// caller then reads and writes.
long long copy_some(int from, std::uint64_t offset, int to, std::size_t size) noexcept;

// Flushes the file's data to the device (fsync; FlushFileBuffers).
int flush_file(int fd) noexcept;
// Starts writing `length` bytes from `offset` to the device without waiting (Linux's
// sync_file_range with SYNC_FILE_RANGE_WRITE; nothing elsewhere): a hint that leaves flush_file
// less to wait for; errors ignored.
void start_writeback(int fd, std::uint64_t offset, std::uint64_t length) noexcept;
// Sets the modification time to now (futimens(fd, nullptr); SetFileTime).
int touch(int fd) noexcept;
// Renames `from` over `to`, atomically replacing it (rename(2)). On Windows: a rename with POSIX
// semantics where the system has it (Windows 10 1709 and later, NTFS), which replaces `to` even
// while others read it with delete access shared; else MoveFileExW (MOVEFILE_REPLACE_EXISTING |
// MOVEFILE_WRITE_THROUGH), tried again for up to 5 seconds while any handle has `to` open. Fails
// with EACCES while another process keeps `to` open without sharing delete access, or maps it.
int replace_file(std::filesystem::path const& from, std::filesystem::path const& to) noexcept;
// Makes a completed rename in `directory` durable (fsync of the directory; on Windows
// FlushFileBuffers of the directory, opened with write access, and 0 also where the file system
// cannot flush a directory: FAT, network shares). -1 with errno on any other error.
int flush_directory(std::filesystem::path const& directory) noexcept;
// unlink(2); DeleteFileW. On Windows EACCES while another process keeps the file open.
int remove_file(std::filesystem::path const& path) noexcept;
// mkdir(path, 0700); CreateDirectoryW (EEXIST when something is there).
int make_directory(std::filesystem::path const& path) noexcept;

// The names in `directory` (without "." and ".."), or nullopt with errno set.
std::optional<std::vector<std::string>> list_directory(std::filesystem::path const& directory);

// Whole-file advisory locks, released by unlock_file, by closing the descriptor and by the OS
// when the process dies (flock; LockFileEx over the whole file). Without `wait`, a conflicting
// holder fails at once with EWOULDBLOCK.
int lock_file(int fd, bool exclusive, bool wait) noexcept;
int unlock_file(int fd) noexcept;

// Whether a mapped view of a file keeps it from being replaced or removed until it is unmapped:
// so on Windows; on POSIX a mapping keeps the old file's pages and leaves the name free.
#ifdef _WIN32
inline constexpr bool mappings_block_replacement = true;
#else
inline constexpr bool mappings_block_replacement = false;
#endif

// A read-only shared mapping of the first `size` bytes (size > 0), or nullptr with errno set.
void* map_file(int fd, std::size_t size) noexcept;
void unmap_file(void* address, std::size_t size) noexcept;
// `size` bytes (size > 0) of private, writable memory for a copy of a file, or nullptr with errno
// set; freed by release_private_memory with the same size. On Linux anonymous pages with
// transparent huge pages asked for (madvise MADV_HUGEPAGE): a 1 GiB copy then faults 512 times
// instead of 262,144, measured 4x faster to fill than operator new's pages. VirtualAlloc on
// Windows.
void* allocate_private_memory(std::size_t size) noexcept;
void release_private_memory(void* address, std::size_t size) noexcept;
// A read-once-in-order hint for a file read with read_some (posix_fadvise
// POSIX_FADV_SEQUENTIAL; nothing on Windows); errors ignored.
void advise_sequential_reads(int fd) noexcept;
// A read-once-in-order hint (madvise MADV_SEQUENTIAL; nothing on Windows); errors ignored.
void advise_sequential(void* address, std::size_t size) noexcept;

long long process_id() noexcept;
// Whether a process with this id runs on this machine now (kill(pid, 0) succeeds or is refused
// with EPERM; on Windows OpenProcess finds it still active). Ids of other machines, or of another
// PID namespace, are not seen: callers add a condition of their own (a lock, an age) before they
// act on a process that looks gone.
bool process_alive(long long pid) noexcept;

// The user's home directory: HOME, else the password database (POSIX); USERPROFILE (Windows).
// `variable` names the variable that was read, for messages. Empty when there is none.
struct Home {
    std::string directory;
    char const* variable;
};
Home home_directory();

// strerror(error_number), with what the error usually means on this system when that helps
// (on Windows, EACCES for a file another process keeps open).
std::string error_text(int error_number);

// A shared library loaded by name (dlopen RTLD_NOW | RTLD_LOCAL; LoadLibraryExW), closed by the
// destructor; error() says why the last load or lookup failed.
class DynamicLibrary {
public:
    // nullopt when the library cannot be loaded; `why` receives the loader's reason.
    static std::optional<DynamicLibrary> load(std::string const& name, std::string& why);
    DynamicLibrary(DynamicLibrary&& other) noexcept;
    DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
    DynamicLibrary(DynamicLibrary const&) = delete;
    DynamicLibrary& operator=(DynamicLibrary const&) = delete;
    ~DynamicLibrary();
    // The address of `symbol`, or nullptr.
    void* symbol(char const* symbol) const noexcept;

private:
    explicit DynamicLibrary(void* handle) noexcept : handle_(handle) {}
    void* handle_ = nullptr;
};

// The CUDA driver library's name: libcuda.so.1; nvcuda.dll.
char const* cuda_driver_library() noexcept;

// An owned descriptor, closed by the destructor.
class Descriptor {
public:
    explicit Descriptor(int fd) noexcept : fd_(fd) {}
    Descriptor(Descriptor const&) = delete;
    Descriptor& operator=(Descriptor const&) = delete;
    Descriptor(Descriptor&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    Descriptor& operator=(Descriptor&&) = delete;
    ~Descriptor() {
        if (fd_ >= 0) {
            (void)close_file(fd_);
        }
    }
    int get() const noexcept { return fd_; }
    bool valid() const noexcept { return fd_ >= 0; }

private:
    int fd_;
};

} // namespace tensoracle::platform
