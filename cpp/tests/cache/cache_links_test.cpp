// The cache directory is tensoracle's alone: links planted there are refused, never followed,
// and a cache that cannot be written still serves its intact entries.
#include "cache/listing.hpp"
#include "cache/pruning.hpp"
#include "cache/store.hpp"
#include "cache/verification.hpp"
#include "io/file_lock.hpp"
#include "support/cache_test_support.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <sys/types.h>
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

std::map<std::string, VerifiedEntry> by_name(CacheVerification const& verification) {
    std::map<std::string, VerifiedEntry> entries;
    for (VerifiedEntry const& entry : verification.entries) {
        entries[entry.name] = entry;
    }
    return entries;
}

bool contains(std::string const& text, std::string const& part) {
    return text.find(part) != std::string::npos;
}

// `cache verify` in a child process that SIGALRM ends after 20 s: a verify that blocks on a FIFO
// fails the test instead of hanging it. The child exits 0 when `check` holds.
int verify_in_child(std::filesystem::path const& cache,
                    bool (*check)(CacheVerification const&, std::filesystem::path const&)) {
    pid_t const child = ::fork();
    if (child == 0) {
        ::alarm(20);
        ::_exit(check(verify_cache(cache), cache) ? 0 : 1);
    }
    int status = 0;
    if (child < 0 || ::waitpid(child, &status, 0) != child) {
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A link to a FIFO and a link to a file outside the cache: verify opens neither (no hang, none
// of the outside file's bytes in any reason) and reports both as unrecognized links.
TEST(CacheLinks, VerifyFollowsNoLinkToAFifoOrToAFileOutside) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path() / "cache");
    ASSERT_EQ(::mkfifo((dir.path() / "fifo").c_str(), 0600), 0);
    testing::write_all(dir.path() / "secret.txt", testing::to_bytes("TOP-SECRET-BYTES"));
    std::filesystem::create_symlink(dir.path() / "fifo", store.directory() / "fifo.engine");
    std::filesystem::create_symlink(dir.path() / "secret.txt", store.directory() / "out.engine");
    int const status = verify_in_child(
        store.directory(), [](CacheVerification const& verification, auto const& cache) {
            // The one-file check too (a link swapped in after the listing): never followed.
            for (char const* name : {"fifo.engine", "out.engine"}) {
                std::string const damage = engine_file_damage(cache / name);
                if (!contains(damage, "is a symbolic link") || contains(damage, "TOP-SECRET")) {
                    return false;
                }
            }
            auto entries = by_name(verification);
            bool ok = verification.unrecognized_count == 2 && verification.damaged_count == 0 &&
                      !verification.passed();
            for (char const* name : {"fifo.engine", "out.engine"}) {
                ok = ok && entries[name].status == VerifyStatus::unrecognized &&
                     contains(entries[name].reason, "is a symbolic link") &&
                     !contains(entries[name].reason, "TOP-SECRET");
            }
            nlohmann::json const report = verification_json(verification);
            return ok && report["unrecognized_count"] == 2 && report["unrecognized"].size() == 2 &&
                   report["entries"][0]["status"] == "unrecognized" &&
                   !contains(report.dump(), "TOP-SECRET");
        });
    EXPECT_EQ(status, 0) << "128 + 14 (SIGALRM): verify blocked on the FIFO";
}

// A FIFO and a directory at engine names: listed and verified as unrecognized, never opened for
// reading; opening the entry whose name a directory holds is CorruptEngineError naming the path.
TEST(CacheLinks, AFifoOrADirectoryAtAnEntrysNameIsUnrecognizedAndCorrupt) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path() / "cache");
    auto const id = identity();
    ASSERT_EQ(::mkfifo((store.directory() / "pipe.engine").c_str(), 0600), 0);
    std::filesystem::create_directory(store.entry_path(id));

    CacheScan const scan = scan_cache(store.directory(), true);
    ASSERT_EQ(scan.entries.size(), 2U);
    for (CacheEntry const& entry : scan.entries) {
        EXPECT_EQ(entry.status, EntryStatus::unrecognized) << entry.name;
        EXPECT_FALSE(entry.regular) << entry.name;
        EXPECT_EQ(entry.size_bytes, 0U) << entry.name;
    }
    EXPECT_TRUE(contains(scan.entries[0].reason, "is a directory")) << scan.entries[0].reason;
    EXPECT_TRUE(contains(scan.entries[1].reason, "not a regular file")) << scan.entries[1].reason;
    EXPECT_EQ(scan.total_size_bytes, 0U);
    nlohmann::json const listed = listing_json(scan, {});
    EXPECT_EQ(listed["entries"][0]["status"], "unrecognized");
    EXPECT_TRUE(contains(listed["entries"][0]["reason"].get<std::string>(), "is a directory"));
    EXPECT_TRUE(contains(listing_table(scan), "is a directory"));
    PrunePlan const plan = plan_prune(scan.entries, {0, std::nullopt}, {});
    EXPECT_TRUE(plan.selected.empty());
    EXPECT_EQ(plan.excluded.size(), 2U);

    int const status =
        verify_in_child(store.directory(), [](CacheVerification const& verified, auto const&) {
            return verified.unrecognized_count == 2 && verified.entries.size() == 2 &&
                   verified.entries[0].status == VerifyStatus::unrecognized &&
                   contains(verified.entries[0].reason, "is a directory") &&
                   verified.entries[1].status == VerifyStatus::unrecognized &&
                   contains(verified.entries[1].reason, "not a regular file");
        });
    EXPECT_EQ(status, 0);

    EXPECT_FALSE(store.contains(id));
    try {
        (void)store.read(id);
        ADD_FAILURE() << "the directory was read";
    } catch (CorruptEngineError const& error) {
        EXPECT_TRUE(contains(error.what(), store.entry_path(id).string())) << error.what();
        EXPECT_TRUE(contains(error.what(), "is a directory")) << error.what();
        EXPECT_EQ(error.path(), store.entry_path(id));
    }
}

// A copy and a hard link of an entry under other names: no open reads them, so list and verify
// report them unrecognized with the name the header gives; the link is the same file as the
// entry and counts once in the total.
TEST(CacheLinks, MisnamedCopiesAreUnrecognizedAndHardLinksCountOnce) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path() / "cache");
    auto const id = identity();
    auto const entry = store.save(id, json::object(), testing::random_bytes(1000, 5));
    auto const size = std::filesystem::file_size(entry);
    std::filesystem::copy_file(entry, store.directory() / "copy.engine");
    std::filesystem::create_hard_link(entry, store.directory() / "zz-link.engine");

    CacheScan const scan = scan_cache(store.directory(), true);
    ASSERT_EQ(scan.entries.size(), 3U);
    EXPECT_EQ(scan.entries[0].name, "copy.engine");
    EXPECT_EQ(scan.entries[1].name, id.file_name);
    EXPECT_EQ(scan.entries[2].name, "zz-link.engine");
    EXPECT_EQ(scan.entries[1].status, EntryStatus::recognized);
    for (std::size_t const index : {0U, 2U}) {
        CacheEntry const& misnamed = scan.entries[index];
        EXPECT_EQ(misnamed.status, EntryStatus::unrecognized) << misnamed.name;
        EXPECT_FALSE(misnamed.header.has_value());
        EXPECT_TRUE(contains(misnamed.reason, "does not match its header")) << misnamed.reason;
        EXPECT_TRUE(contains(misnamed.reason, id.file_name)) << misnamed.reason;
    }
    EXPECT_EQ(scan.total_size_bytes, 2 * size); // the entry (and its link) once, the copy
    std::ostringstream streamed;
    write_listing_json(streamed, store.directory());
    nlohmann::json const listed = nlohmann::json::parse(streamed.str());
    EXPECT_EQ(listed["total_size_bytes"], 2 * size);
    EXPECT_EQ(listed["entries"][2]["status"], "unrecognized");

    CacheVerification const verification = verify_cache(store.directory());
    auto entries = by_name(verification);
    EXPECT_EQ(entries[id.file_name].status, VerifyStatus::intact);
    EXPECT_EQ(entries["copy.engine"].status, VerifyStatus::unrecognized);
    EXPECT_EQ(entries["zz-link.engine"].status, VerifyStatus::unrecognized);
    EXPECT_TRUE(contains(entries["copy.engine"].reason, id.file_name));
    EXPECT_EQ(verification.unrecognized_count, 2U);
    EXPECT_FALSE(verification.passed());

    // Pruning counts the file once too: the plan's total, and the removal of the entry frees
    // nothing while its link keeps the file.
    PrunePlan const plan = plan_prune(scan.entries, {std::nullopt, 0}, {});
    EXPECT_EQ(plan.total_size_bytes, 2 * size);
    ASSERT_EQ(plan.selected.size(), 1U);
    EXPECT_EQ(plan.selected_bytes, size);
    EXPECT_EQ(plan.projected_total_bytes, 2 * size);
}

// Two names of one file, both removed: bytes_removed counts the file once.
TEST(CacheLinks, RemovingTwoNamesOfOneFileCountsItsBytesOnce) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path() / "cache");
    auto const entry = store.save(identity(), json::object(), testing::random_bytes(700, 6));
    auto const size = std::filesystem::file_size(entry);
    std::filesystem::create_hard_link(entry, store.directory() / "other.engine");
    PrunePlan plan;
    plan.criterion.cutoff_ns = 0;
    for (CacheEntry const& scanned : scan_cache(store.directory(), false).entries) {
        plan.selected.push_back({scanned.name, scanned.size_bytes, scanned.recorded_at_ns,
                                 scanned.inode, scanned.device});
    }
    plan.total_size_bytes = size;
    PruneResult const result = execute_prune(store, plan);
    EXPECT_EQ(result.removed.size(), 2U);
    EXPECT_TRUE(result.failed.empty());
    EXPECT_EQ(result.bytes_removed, size);
    EXPECT_EQ(result.remaining_total_bytes, 0U);
}

} // namespace
} // namespace tensoracle
