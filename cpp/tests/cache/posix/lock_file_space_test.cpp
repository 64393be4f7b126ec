// A full cache (no inodes or blocks left, a quota reached) still serves its intact entries: where
// an entry's lock file is missing and cannot be created, a reader goes on without the lock, as in
// a read-only cache. The failure is injected: this binary defines open(2) itself, and its open
// fails the creation of a lock file with the armed errno while passing every other call to the C
// library's open (the core calls ::open, which resolves to this definition first).
#include "cache/store.hpp"
#include "io/file_lock.hpp"
#include "support/cache_test_support.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <string_view>

namespace {

std::atomic<int> lock_creation_error{0}; // 0: nothing injected

using OpenFunction = int (*)(char const*, int, ...);

OpenFunction next_open(char const* name) {
    return reinterpret_cast<OpenFunction>(::dlsym(RTLD_NEXT, name)); // NOLINT
}

int open_with_injection(char const* name, char const* path, int flags, mode_t mode) {
    int const error = lock_creation_error.load();
    std::string_view const file{path};
    if (error != 0 && (flags & O_CREAT) != 0 && file.ends_with(".lock")) {
        // As the kernel does: an existing file opens, a missing one cannot be created.
        int const existing = next_open(name)(path, flags & ~O_CREAT, mode);
        if (existing >= 0 || errno != ENOENT) {
            return existing;
        }
        errno = error;
        return -1;
    }
    return next_open(name)(path, flags, mode);
}

} // namespace

// NOLINTBEGIN: the C library's variadic interface, defined here to inject the failure.
extern "C" int open(char const* path, int flags, ...) {
    mode_t mode = 0;
    if ((flags & O_CREAT) != 0) {
        va_list arguments;
        va_start(arguments, flags);
        mode = static_cast<mode_t>(va_arg(arguments, int));
        va_end(arguments);
    }
    return open_with_injection("open", path, flags, mode);
}

extern "C" int open64(char const* path, int flags, ...) {
    mode_t mode = 0;
    if ((flags & O_CREAT) != 0) {
        va_list arguments;
        va_start(arguments, flags);
        mode = static_cast<mode_t>(va_arg(arguments, int));
        va_end(arguments);
    }
    return open_with_injection("open64", path, flags, mode);
}
// NOLINTEND

namespace tensoracle {
namespace {

class InjectedLockFailure : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override { lock_creation_error = GetParam(); }
    void TearDown() override { lock_creation_error = 0; }
};

TEST_P(InjectedLockFailure, AnIntactEntryIsReadWithoutTheLockThatCannotBeCreated) {
    testing::TemporaryDirectory dir;
    lock_creation_error = 0;
    Store const store(dir.path() / "cache");
    auto const id = make_identity({{"name", "model"}, {"graph_version", "1"}});
    store.save(id, nlohmann::json::object(), testing::random_bytes(1000, 7));
    ASSERT_FALSE(std::filesystem::exists(store.lock_path(id)));
    lock_creation_error = GetParam();

    FileLock const shared = store.lock(id, LockMode::shared);
    EXPECT_FALSE(shared.held());
    auto const saved = store.read(id);
    ASSERT_TRUE(saved.has_value());
    EXPECT_EQ(saved->plan().size(), 1000U);
    EXPECT_FALSE(std::filesystem::exists(store.lock_path(id)));
    EXPECT_TRUE(FileLock::try_acquire(store.lock_path(id), LockMode::shared).has_value());

    // Building needs the exclusive lock: refused with the reason, naming the lock file.
    try {
        (void)store.lock(id, LockMode::exclusive);
        ADD_FAILURE() << "an exclusive lock without its file";
    } catch (FileError const& error) {
        EXPECT_EQ(error.error_number(), GetParam());
        EXPECT_NE(std::string(error.what()).find(store.lock_path(id).string()), std::string::npos)
            << error.what();
    }

    // An existing lock file is used as ever: the injection only stops its creation.
    lock_creation_error = 0;
    (void)store.lock(id, LockMode::shared);
    lock_creation_error = GetParam();
    EXPECT_TRUE(store.lock(id, LockMode::shared).held());
}

INSTANTIATE_TEST_SUITE_P(NoSpaceOrQuota, InjectedLockFailure, ::testing::Values(ENOSPC, EDQUOT),
                         [](::testing::TestParamInfo<int> const& parameter) {
                             return std::string(parameter.param == ENOSPC ? "ENOSPC" : "EDQUOT");
                         });

// Other failures to create a lock file still fail the read's lock, naming the file.
TEST(InjectedLockFailureOther, AnInputOutputErrorIsReported) {
    testing::TemporaryDirectory dir;
    auto const path = dir.path() / "x.engine.lock";
    lock_creation_error = EIO;
    EXPECT_THROW((void)FileLock::acquire(path, LockMode::shared), FileError);
    lock_creation_error = 0;
}

} // namespace
} // namespace tensoracle
