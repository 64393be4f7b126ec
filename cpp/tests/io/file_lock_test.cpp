// Tests of cross-process file locks, using forked children as the other processes.
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"
#include "tensoracle/io/file_lock.hpp"

#include <chrono>
#include <csignal>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace tensoracle {
namespace {

// Runs `probe` in a child process and returns its exit status (0..255).
template <typename Probe>
int in_child(Probe probe) {
    pid_t const pid = ::fork();
    if (pid == 0) {
        int code = 100;
        try {
            code = probe();
        } catch (...) {
        }
        ::_exit(code);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int try_in_child(std::filesystem::path const& path, LockMode mode) {
    return in_child([&] { return FileLock::try_acquire(path, mode) ? 1 : 0; });
}

TEST(FileLock, CreatesThePrivateLockFile) {
    testing::TemporaryDirectory dir;
    auto const path = dir.path() / "x.lock";
    auto const lock = FileLock::acquire(path, LockMode::shared);
    EXPECT_TRUE(lock.held());
    EXPECT_EQ(lock.path(), path);
    EXPECT_EQ(lock.mode(), LockMode::shared);
    struct stat status {};
    ASSERT_EQ(::stat(path.c_str(), &status), 0);
    EXPECT_EQ(status.st_mode & 0777, 0600U);
}

TEST(FileLock, SharedLocksCoexistAndExcludeWriters) {
    testing::TemporaryDirectory dir;
    auto const path = dir.path() / "x.lock";
    auto lock = FileLock::acquire(path, LockMode::shared);
    EXPECT_EQ(try_in_child(path, LockMode::shared), 1);
    EXPECT_EQ(try_in_child(path, LockMode::exclusive), 0);
    lock.release();
    EXPECT_FALSE(lock.held());
    EXPECT_EQ(try_in_child(path, LockMode::exclusive), 1);
}

TEST(FileLock, ExclusiveExcludesEveryone) {
    testing::TemporaryDirectory dir;
    auto const path = dir.path() / "x.lock";
    {
        auto const lock = FileLock::acquire(path, LockMode::exclusive);
        EXPECT_EQ(try_in_child(path, LockMode::shared), 0);
        EXPECT_EQ(try_in_child(path, LockMode::exclusive), 0);
        // Two opens in one process conflict too: flock belongs to the open file description.
        EXPECT_FALSE(FileLock::try_acquire(path, LockMode::shared).has_value());
    }
    EXPECT_EQ(try_in_child(path, LockMode::exclusive), 1);
}

TEST(FileLock, MoveKeepsTheLock) {
    testing::TemporaryDirectory dir;
    auto const path = dir.path() / "x.lock";
    auto first = FileLock::acquire(path, LockMode::exclusive);
    FileLock second = std::move(first);
    EXPECT_FALSE(first.held()); // NOLINT(bugprone-use-after-move)
    EXPECT_TRUE(second.held());
    EXPECT_EQ(try_in_child(path, LockMode::shared), 0);
    auto other = FileLock::acquire(dir.path() / "y.lock", LockMode::shared);
    other = std::move(second);
    EXPECT_EQ(try_in_child(dir.path() / "y.lock", LockMode::exclusive), 1);
    EXPECT_EQ(try_in_child(path, LockMode::shared), 0);
}

TEST(FileLock, BlockingAcquireWaitsForTheHolder) {
    testing::TemporaryDirectory dir;
    auto const path = dir.path() / "x.lock";
    auto lock = FileLock::acquire(path, LockMode::exclusive);
    auto const started = std::chrono::steady_clock::now();
    std::thread releaser([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        lock.release();
    });
    auto const waited = FileLock::acquire(path, LockMode::exclusive);
    auto const elapsed = std::chrono::steady_clock::now() - started;
    releaser.join();
    EXPECT_GE(elapsed, std::chrono::milliseconds(250));
}

TEST(FileLock, ADeadHolderLosesItsLock) {
    testing::TemporaryDirectory dir;
    auto const path = dir.path() / "x.lock";
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    pid_t const pid = ::fork();
    if (pid == 0) {
        auto const lock = FileLock::acquire(path, LockMode::exclusive);
        char const byte = 'x';
        (void)::write(ready[1], &byte, 1);
        ::pause();
        ::_exit(0);
    }
    char byte = 0;
    ASSERT_EQ(::read(ready[0], &byte, 1), 1);
    EXPECT_FALSE(FileLock::try_acquire(path, LockMode::shared).has_value());
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    EXPECT_TRUE(FileLock::try_acquire(path, LockMode::exclusive).has_value());
    ::close(ready[0]);
    ::close(ready[1]);
}

TEST(FileLock, UnopenableLockFileIsAFileError) {
    testing::TemporaryDirectory dir;
    EXPECT_THROW(FileLock::acquire(dir.path() / "missing" / "x.lock", LockMode::shared), FileError);
    EXPECT_THROW(FileLock::try_acquire(dir.path() / "missing" / "x.lock", LockMode::shared),
                 FileError);
}

} // namespace
} // namespace tensoracle
