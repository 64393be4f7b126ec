// The cache directory is tensoracle's alone: links planted there are refused, never followed,
// and a cache that cannot be written still serves its intact entries.
#include "support/cache_test_support.hpp"
#include "support/test_support.hpp"
#include "tensoracle/cache/cache_listing.hpp"
#include "tensoracle/cache/store.hpp"
#include "tensoracle/errors.hpp"
#include "tensoracle/io/file_lock.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tensoracle {
namespace {

using nlohmann::json;

EngineIdentity identity() {
    return make_identity({{"name", "model"}, {"graph_version", "1"}});
}

TEST(CacheLinks, ASymlinkedEntryIsCorruptAndItsTargetUntouched) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path() / "cache");
    Store const elsewhere(dir.path() / "elsewhere");
    auto const id = identity();
    auto const target = elsewhere.save(id, json::object(), testing::random_bytes(100, 1));
    testing::set_mtime(target, 1'000'000'000'000'000'000);
    std::filesystem::create_symlink(target, store.entry_path(id));

    EXPECT_FALSE(store.contains(id));
    try {
        (void)store.read(id);
        ADD_FAILURE() << "the link was followed";
    } catch (CorruptEngineError const& error) {
        EXPECT_NE(std::string(error.what()).find("is a symbolic link"), std::string::npos)
            << error.what();
    }
    EXPECT_EQ(testing::mtime_ns(target), 1'000'000'000'000'000'000);
    EXPECT_THROW(read_engine_header(store.entry_path(id)), CorruptEngineError);

    // Saving again replaces the link itself; the file it pointed to keeps its bytes.
    auto const before = testing::read_all(target);
    store.save(id, json::object(), testing::random_bytes(50, 2));
    EXPECT_TRUE(
        std::filesystem::is_regular_file(std::filesystem::symlink_status(store.entry_path(id))));
    EXPECT_EQ(testing::read_all(target), before);
    EXPECT_TRUE(store.read(id).has_value());
}

TEST(CacheLinks, ASymlinkedLockFileIsRefusedAndNothingIsCreatedOutside) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path() / "cache");
    auto const id = identity();
    auto const outside = dir.path() / "outside.lock";
    std::filesystem::create_symlink(outside, store.lock_path(id));
    for (LockMode mode : {LockMode::shared, LockMode::exclusive}) {
        try {
            (void)store.lock(id, mode);
            ADD_FAILURE() << "the lock link was followed";
        } catch (FileError const& error) {
            EXPECT_NE(std::string(error.what()).find("is a symbolic link"), std::string::npos)
                << error.what();
        }
        EXPECT_THROW((void)FileLock::try_acquire(store.lock_path(id), mode), FileError);
    }
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(outside)));
}

TEST(CacheLinks, AListingReportsALinkAsUnrecognized) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path());
    auto const target = dir.path() / "elsewhere.bin";
    testing::write_all(target, testing::random_bytes(10, 3));
    std::filesystem::create_symlink(target, dir.path() / "planted-0.engine");
    CacheScan const scan = scan_cache(dir.path(), true);
    ASSERT_EQ(scan.entries.size(), 1U);
    EXPECT_EQ(scan.entries[0].status, EntryStatus::unrecognized);
    EXPECT_NE(scan.entries[0].reason.find("is a symbolic link"), std::string::npos);
}

// A cache whose directory this process cannot write (a shared, read-only cache), with no lock
// file for the entry: the intact entry is still read. Root ignores permissions, so as root the
// read runs in a child that gives up its privileges first.
TEST(CacheLinks, AnIntactEntryIsReadFromACacheThatCannotBeWritten) {
    testing::TemporaryDirectory dir;
    auto const cache = dir.path() / "cache";
    Store const store(cache);
    auto const id = identity();
    store.save(id, json::object(), testing::random_bytes(1000, 4));
    ASSERT_FALSE(std::filesystem::exists(store.lock_path(id)));
    ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
    ASSERT_EQ(::chmod(cache.c_str(), 0555), 0);
    ASSERT_EQ(::chmod(store.entry_path(id).c_str(), 0444), 0);

    auto const read_it = [&]() -> int {
        try {
            FileLock const shared = store.lock(id, LockMode::shared);
            if (shared.held()) {
                return 3; // a lock file was created: the directory was writable after all
            }
            auto const saved = store.read(id);
            if (!saved || saved->plan().size() != 1000) {
                return 4;
            }
            // An exclusive lock (to build) is refused with the reason.
            try {
                (void)store.lock(id, LockMode::exclusive);
                return 5;
            } catch (FileError const&) {
                return 0;
            }
        } catch (std::exception const&) {
            return 6;
        }
    };
    int status = 0;
    if (::geteuid() == 0) {
        pid_t const child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            if (::setgid(65534) != 0 || ::setuid(65534) != 0) {
                ::_exit(7);
            }
            ::_exit(read_it());
        }
        int wait_status = 0;
        ASSERT_EQ(::waitpid(child, &wait_status, 0), child);
        ASSERT_TRUE(WIFEXITED(wait_status));
        status = WEXITSTATUS(wait_status);
    } else {
        status = read_it();
    }
    ::chmod(cache.c_str(), 0700);
    EXPECT_EQ(status, 0);
    EXPECT_FALSE(std::filesystem::exists(store.lock_path(id)));
}

} // namespace
} // namespace tensoracle
