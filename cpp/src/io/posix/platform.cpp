// The operating-system calls of the core on POSIX systems (see platform.hpp).
#include "io/platform.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <memory>
#include <pwd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace tensoracle::platform {
namespace {

FileStatus from_stat(struct stat const& status) noexcept {
    FileStatus result;
    if (S_ISREG(status.st_mode)) {
        result.kind = FileKind::regular;
    } else if (S_ISDIR(status.st_mode)) {
        result.kind = FileKind::directory;
    } else if (S_ISLNK(status.st_mode)) {
        result.kind = FileKind::link;
    }
    result.size = static_cast<std::uint64_t>(status.st_size);
    result.modified_ns = static_cast<std::int64_t>(status.st_mtim.tv_sec) * 1'000'000'000 +
                         static_cast<std::int64_t>(status.st_mtim.tv_nsec);
    result.identity = static_cast<std::uint64_t>(status.st_ino);
    result.device = static_cast<std::uint64_t>(status.st_dev);
    return result;
}

template <typename Call>
auto retrying(Call call) noexcept {
    auto result = call();
    while (result < 0 && errno == EINTR) {
        result = call();
    }
    return result;
}

} // namespace

int open_file(std::filesystem::path const& path, int flags, unsigned mode, Follow follow) noexcept {
    int const extra = O_NONBLOCK | O_CLOEXEC | (follow == Follow::links ? 0 : O_NOFOLLOW);
    return retrying([&] { return ::open(path.c_str(), flags | extra, static_cast<mode_t>(mode)); });
}

int close_file(int fd) noexcept {
    return ::close(fd);
}

std::optional<FileStatus> status(int fd) noexcept {
    struct stat result {};
    if (::fstat(fd, &result) != 0) {
        return std::nullopt;
    }
    return from_stat(result);
}

std::optional<FileStatus> status(std::filesystem::path const& path, Follow follow) noexcept {
    struct stat result {};
    int const code =
        follow == Follow::links ? ::stat(path.c_str(), &result) : ::lstat(path.c_str(), &result);
    if (code != 0) {
        return std::nullopt;
    }
    return from_stat(result);
}

long long read_some(int fd, void* buffer, std::size_t size) noexcept {
    return retrying([&] { return ::read(fd, buffer, size); });
}

long long read_at(int fd, void* buffer, std::size_t size, std::uint64_t offset) noexcept {
    return retrying([&] { return ::pread(fd, buffer, size, static_cast<off_t>(offset)); });
}

long long write_some(int fd, void const* buffer, std::size_t size) noexcept {
    return retrying([&] { return ::write(fd, buffer, size); });
}

long long copy_some(int from, std::uint64_t offset, int to, std::size_t size) noexcept {
#if defined(__linux__)
    auto at = static_cast<off_t>(offset);
    return retrying([&] { return ::copy_file_range(from, &at, to, nullptr, size, 0); });
#else
    (void)from, (void)offset, (void)to, (void)size;
    errno = ENOSYS;
    return -1;
#endif
}

int flush_file(int fd) noexcept {
    return retrying([&] { return ::fsync(fd); });
}

void start_writeback(int fd, std::uint64_t offset, std::uint64_t length) noexcept {
#if defined(__linux__)
    (void)::sync_file_range(fd, static_cast<off_t>(offset), static_cast<off_t>(length),
                            SYNC_FILE_RANGE_WRITE);
#else
    (void)fd;
    (void)offset;
    (void)length;
#endif
}

int touch(int fd) noexcept {
    return ::futimens(fd, nullptr);
}

int replace_file(std::filesystem::path const& from, std::filesystem::path const& to) noexcept {
    return ::rename(from.c_str(), to.c_str());
}

int flush_directory(std::filesystem::path const& directory) noexcept {
    int const fd =
        retrying([&] { return ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
    if (fd < 0) {
        return -1;
    }
    int const code = flush_file(fd);
    int const error = errno;
    ::close(fd);
    errno = error;
    return code;
}

int remove_file(std::filesystem::path const& path) noexcept {
    return ::unlink(path.c_str());
}

int make_directory(std::filesystem::path const& path) noexcept {
    return ::mkdir(path.c_str(), 0700);
}

std::optional<std::vector<std::string>> list_directory(std::filesystem::path const& directory) {
    struct Closer {
        void operator()(DIR* stream) const noexcept { ::closedir(stream); }
    };
    std::unique_ptr<DIR, Closer> const stream{::opendir(directory.c_str())};
    if (!stream) {
        return std::nullopt;
    }
    std::vector<std::string> names;
    while (true) {
        errno = 0;
        dirent const* const item = ::readdir(stream.get());
        if (item == nullptr) {
            if (errno != 0) {
                return std::nullopt;
            }
            return names;
        }
        std::string_view const name{item->d_name};
        if (name != "." && name != "..") {
            names.emplace_back(name);
        }
    }
}

int lock_file(int fd, bool exclusive, bool wait) noexcept {
    int const operation = (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB);
    return retrying([&] { return ::flock(fd, operation); });
}

void advise_sequential_reads(int fd) noexcept {
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
}

int unlock_file(int fd) noexcept {
    return retrying([&] { return ::flock(fd, LOCK_UN); });
}

void* map_file(int fd, std::size_t size) noexcept {
    void* const address = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    return address == MAP_FAILED ? nullptr : address;
}

void unmap_file(void* address, std::size_t size) noexcept {
    ::munmap(address, size);
}

void* allocate_private_memory(std::size_t size) noexcept {
    void* const address =
        ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (address == MAP_FAILED) {
        return nullptr;
    }
    (void)::madvise(address, size, MADV_HUGEPAGE); // a hint: kernels without THP ignore it
    return address;
}

void release_private_memory(void* address, std::size_t size) noexcept {
    ::munmap(address, size);
}

void advise_sequential(void* address, std::size_t size) noexcept {
    (void)::madvise(address, size, MADV_SEQUENTIAL);
}

long long process_id() noexcept {
    return ::getpid();
}

bool process_alive(long long pid) noexcept {
    if (pid <= 0 || pid != static_cast<long long>(static_cast<pid_t>(pid))) {
        return false; // 0 and negative ids name process groups, not one process
    }
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

Home home_directory() {
    char const* const variable = std::getenv("HOME");
    if (variable != nullptr && *variable != '\0') {
        return {variable, "HOME"};
    }
    // As Python's Path.home() does without HOME: the password database.
    long const suggested = ::sysconf(_SC_GETPW_R_SIZE_MAX);
    std::vector<char> buffer(suggested > 0 ? static_cast<std::size_t>(suggested) : 16384);
    struct passwd entry {};
    struct passwd* found = nullptr;
    if (::getpwuid_r(::getuid(), &entry, buffer.data(), buffer.size(), &found) != 0 ||
        found == nullptr || found->pw_dir == nullptr) {
        return {{}, "HOME"};
    }
    return {found->pw_dir, "HOME"};
}

std::string error_text(int error_number) {
    return std::strerror(error_number);
}

std::optional<DynamicLibrary> DynamicLibrary::load(std::string const& name, std::string& why) {
    void* const handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        char const* const reason = ::dlerror();
        why = reason != nullptr ? reason : "unknown reason";
        return std::nullopt;
    }
    return DynamicLibrary(handle);
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
    if (this != &other) {
        if (handle_ != nullptr) {
            ::dlclose(handle_);
        }
        handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
}

DynamicLibrary::~DynamicLibrary() {
    if (handle_ != nullptr) {
        ::dlclose(handle_);
    }
}

void* DynamicLibrary::symbol(char const* symbol) const noexcept {
    return ::dlsym(handle_, symbol);
}

char const* cuda_driver_library() noexcept {
    return "libcuda.so.1";
}

} // namespace tensoracle::platform
