// Tests of cross-process file locks, using child processes (support/child_process.hpp) as the
// other processes.
#include "io/file_lock.hpp"
#include "support/child_process.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"

#include <chrono>
#include <filesystem>
#include <gtest/gtest.h>
#include <thread>

namespace tensoracle {
namespace {

LockMode mode_named(std::string const& name) {
    return name == "exclusive" ? LockMode::exclusive : LockMode::shared;
}

// Child: tries to take the lock at arguments[0] in mode arguments[1]; exits 1 when it got it.
int try_lock_role(std::vector<std::string> const& arguments) {
    return FileLock::try_acquire(arguments.at(0), mode_named(arguments.at(1))) ? 1 : 0;
}
bool const try_lock_registered = testing::register_child_role("try_lock", try_lock_role);

// Child: takes the lock at arguments[0] exclusively, creates the file arguments[1] to say so,
// then holds the lock until killed.
int hold_lock_role(std::vector<std::string> const& arguments) {
    auto const lock = FileLock::acquire(arguments.at(0), LockMode::exclusive);
    testing::write_all(arguments.at(1), testing::to_bytes("held"));
    for (;;) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
}
bool const hold_lock_registered = testing::register_child_role("hold_lock", hold_lock_role);

int try_in_child(std::filesystem::path const& path, LockMode mode) {
    testing::ChildProcess child(
        "try_lock", {path.string(), mode == LockMode::exclusive ? "exclusive" : "shared"});
    return child.wait().value_or(-1);
}

TEST(FileLock, CreatesThePrivateLockFile) {
    testing::TemporaryDirectory dir;
    auto const path = dir.path() / "x.lock";
    auto const lock = FileLock::acquire(path, LockMode::shared);
    EXPECT_TRUE(lock.held());
    EXPECT_EQ(lock.path(), path);
    EXPECT_EQ(lock.mode(), LockMode::shared);
    EXPECT_TRUE(std::filesystem::is_regular_file(path));
#ifndef _WIN32 // Windows files have no POSIX permission bits; the private folder protects them.
    EXPECT_EQ(std::filesystem::status(path).permissions(),
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
#endif
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
    auto const ready = dir.path() / "ready";
    testing::ChildProcess holder("hold_lock", {path.string(), ready.string()});
    auto const deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    while (!std::filesystem::exists(ready) && std::chrono::steady_clock::now() < deadline) {
        ASSERT_FALSE(holder.wait(std::chrono::milliseconds(10)).has_value()) << "the holder ended";
    }
    ASSERT_TRUE(std::filesystem::exists(ready));
    EXPECT_FALSE(FileLock::try_acquire(path, LockMode::shared).has_value());
    holder.kill();
    EXPECT_EQ(holder.wait(), testing::kKilledChild);
    EXPECT_TRUE(FileLock::try_acquire(path, LockMode::exclusive).has_value());
}

TEST(FileLock, UnopenableLockFileIsAFileError) {
    testing::TemporaryDirectory dir;
    EXPECT_THROW(FileLock::acquire(dir.path() / "missing" / "x.lock", LockMode::shared), FileError);
    EXPECT_THROW(FileLock::try_acquire(dir.path() / "missing" / "x.lock", LockMode::shared),
                 FileError);
}

} // namespace
} // namespace tensoracle
