// Tests of the engine cache store: directory, saves, verified reads, conditions, timestamps.
#include "cache/plan_checksum.hpp"
#include "cache/store.hpp"
#include "io/atomic_file.hpp"
#include "io/file_lock.hpp"
#include "support/cache_test_support.hpp"
#include "support/scoped_environment.hpp"
#include "support/test_support.hpp"
#include "support/this_process.hpp"
#include "tensoracle/errors.hpp"

#include <cstdlib>
#include <ctime>
#include <gtest/gtest.h>
#include <optional>
#ifndef _WIN32
#include <pwd.h>
#include <unistd.h>
#endif

namespace tensoracle {
namespace {

using nlohmann::json;

EngineIdentity identity(std::string const& version = "1") {
    return make_identity({{"name", "model"}, {"graph_version", version}, {"tf32", true}});
}

using testing::ScopedEnvironment;

std::int64_t mtime_seconds(std::filesystem::path const& path) {
    return testing::mtime_ns(path) / 1'000'000'000;
}

void set_old_mtime(std::filesystem::path const& path) {
    testing::set_mtime(path, std::int64_t{1'000'000'000} * 1'000'000'000);
}

template <typename Error>
std::string error_of(Store const& store, EngineIdentity const& id) {
    try {
        store.read(id);
    } catch (Error const& error) {
        EXPECT_EQ(error.path(), store.entry_path(id));
        std::string message = error.what();
        EXPECT_NE(message.find(store.entry_path(id).string()), std::string::npos) << message;
        return message;
    }
    ADD_FAILURE() << "read did not throw the expected error";
    return {};
}

TEST(DefaultCacheDirectory, FollowsXdgThenHome) {
#ifdef _WIN32
    GTEST_SKIP() << "the POSIX default (XDG_CACHE_HOME, HOME, the password database); the Windows "
                    "one (%USERPROFILE%\\.cache\\tensoracle) is checked by make windows-test";
#else
    {
        ScopedEnvironment xdg("XDG_CACHE_HOME", "/x/cache");
        ScopedEnvironment home("HOME", "/home/u");
        EXPECT_EQ(default_cache_directory(), "/x/cache/tensoracle");
    }
    {
        ScopedEnvironment xdg("XDG_CACHE_HOME", "");
        ScopedEnvironment home("HOME", "/home/u");
        EXPECT_EQ(default_cache_directory(), "/home/u/.cache/tensoracle");
    }
    {
        ScopedEnvironment xdg("XDG_CACHE_HOME", std::nullopt);
        ScopedEnvironment home("HOME", "/home/v");
        EXPECT_EQ(default_cache_directory(), "/home/v/.cache/tensoracle");
    }
    {
        // Without HOME, the user's home directory in the password database (as Python's
        // Path.home() finds it): a service started without HOME still finds its cache.
        ScopedEnvironment xdg("XDG_CACHE_HOME", std::nullopt);
        ScopedEnvironment home("HOME", std::nullopt);
        struct passwd const* entry = ::getpwuid(::getuid());
        ASSERT_NE(entry, nullptr);
        EXPECT_EQ(default_cache_directory(),
                  std::filesystem::path(entry->pw_dir) / ".cache" / "tensoracle");
    }
#endif
}

TEST(DefaultCacheDirectory, NamesAVariableThatIsNotText) {
    ScopedEnvironment xdg("XDG_CACHE_HOME", std::string("/x/\xff"));
    try {
        (void)default_cache_directory();
        FAIL() << "a non-UTF-8 XDG_CACHE_HOME was accepted";
    } catch (InvalidArgument const& error) {
        EXPECT_NE(std::string(error.what()).find("XDG_CACHE_HOME='/x/\\xff' is not valid UTF-8"),
                  std::string::npos)
            << error.what();
    }
}

TEST(Store, CreatesMissingDirectoriesPrivately) {
    testing::TemporaryDirectory dir;
    auto const path = dir.path() / "a" / "b";
    Store const store(path);
    EXPECT_EQ(store.directory(), path);
    for (auto const& p : {dir.path() / "a", path}) {
        EXPECT_TRUE(std::filesystem::is_directory(p)) << p;
#ifndef _WIN32 // Windows folders have no POSIX permission bits.
        EXPECT_EQ(std::filesystem::status(p).permissions(), std::filesystem::perms::owner_all) << p;
#endif
    }
    testing::write_all(dir.path() / "file", {});
    EXPECT_THROW(Store(dir.path() / "file"), FileError);
    EXPECT_THROW(Store(dir.path() / "file" / "sub"), FileError);
}

TEST(Store, SaveThenReadRoundTrips) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path());
    auto const id = identity();
    EXPECT_FALSE(store.contains(id));
    EXPECT_FALSE(store.read(id).has_value());
    auto const plan = testing::random_bytes(200'000, 9);
    json const references = {{"workspace_limit", nullptr}, {"shape_tensor_outputs", {"x"}}};
    auto const path = store.save(id, references, plan);
    EXPECT_EQ(path, dir.path() / id.file_name);
    EXPECT_EQ(store.entry_path(id), path);
    EXPECT_EQ(store.lock_path(id), dir.path() / (id.file_name + ".lock"));
    EXPECT_EQ(store.lock_path_for(path), store.lock_path(id));
    EXPECT_TRUE(store.contains(id));

    auto const saved = store.read(id);
    ASSERT_TRUE(saved.has_value());
    EXPECT_EQ(saved->path(), path);
    EXPECT_EQ(saved->header().conditions, id.conditions);
    EXPECT_EQ(saved->header().references, references);
    EXPECT_EQ(saved->header().plan_xxh3_128, plan_checksum_hex(plan));
    ASSERT_EQ(saved->plan().size(), plan.size());
    EXPECT_TRUE(std::equal(plan.begin(), plan.end(), saved->plan().begin()));

#ifndef _WIN32 // Windows files have no POSIX permission bits.
    EXPECT_EQ(std::filesystem::status(path).permissions(),
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
#endif
    for (auto const& entry : std::filesystem::directory_iterator(dir.path())) {
        EXPECT_FALSE(is_temporary_name(entry.path().filename().string())) << entry.path();
    }
}

// Readers hold what they read (a copy in their own memory), which never blocks a save.
TEST(Store, SaveReplacesAndReadersKeepWhatTheyRead) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path());
    auto const id = identity();
    auto const first = testing::random_bytes(10'000, 1);
    auto const second = testing::random_bytes(20'000, 2);
    store.save(id, json::object(), first);
    auto const old = store.read(id);
    store.save(id, json::object(), second);
    EXPECT_TRUE(std::equal(first.begin(), first.end(), old->plan().begin()));
    auto const now = store.read(id);
    ASSERT_EQ(now->plan().size(), second.size());
    EXPECT_TRUE(std::equal(second.begin(), second.end(), now->plan().begin()));
}

TEST(Store, AWriteIntoOrATruncationOfTheFileAfterTheReadLeavesThePlanUnchanged) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path());
    auto const id = identity();
    auto const plan = testing::random_bytes(3 * 1024 * 1024 + 17, 3); // several read pieces
    auto const path = store.save(id, json::object(), plan);
    auto const saved = store.read(id);
    ASSERT_TRUE(saved.has_value());
    testing::scribble_then_truncate(path);
    ASSERT_EQ(std::filesystem::file_size(path), 0U);
    ASSERT_EQ(saved->plan().size(), plan.size());
    EXPECT_TRUE(std::equal(plan.begin(), plan.end(), saved->plan().begin()));
}

// A killed writer's temporary file of the entry is removed by the next writer (which holds the
// entry's lock); a live writer's, another entry's and a directory are left.
TEST(Store, TheTemporariesAKilledWriterLeftAreRemoved) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path());
    auto const id = identity();
    std::string const dead = id.file_name + ".tmp-999999999-a1b2c3"; // beyond any pid_max
    std::string const live =
        id.file_name + ".tmp-" + std::to_string(testing::this_process_id()) + "-d4e5f6";
    std::string const other = "other-" + id.file_name + ".tmp-999999999-a1b2c3";
    for (std::string const& name : {dead, live, other}) {
        testing::write_all(dir.path() / name, testing::random_bytes(100, 5));
    }
    std::string const folder = id.file_name + ".tmp-999999998-000000";
    std::filesystem::create_directory(dir.path() / folder);
    EXPECT_EQ(store.remove_abandoned_temporaries(id.file_name), 1U);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / dead));
    EXPECT_TRUE(std::filesystem::exists(dir.path() / live));
    EXPECT_TRUE(std::filesystem::exists(dir.path() / other));
    EXPECT_TRUE(std::filesystem::is_directory(dir.path() / folder));
    EXPECT_EQ(store.remove_abandoned_temporaries(id.file_name), 0U);
}

TEST(Store, WrongChecksumIsCorrupt) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path());
    auto const id = identity();
    auto const path = store.save(id, json::object(), testing::random_bytes(1000, 3));
    auto bytes = testing::read_all(path);
    bytes.back() ^= std::byte{1};
    testing::write_all(path, bytes);
    set_old_mtime(path);
    auto const message = error_of<CorruptEngineError>(store, id);
    EXPECT_NE(message.find("XXH3-128 checksum"), std::string::npos) << message;
    EXPECT_EQ(mtime_seconds(path), 1'000'000'000) << "a failed read must not touch the time";
}

TEST(Store, EmptyFileIsCorruptAndExplained) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path());
    auto const id = identity();
    testing::write_all(store.entry_path(id), {});
    auto const message = error_of<CorruptEngineError>(store, id);
    EXPECT_NE(message.find("empty file"), std::string::npos) << message;
    EXPECT_NE(message.find("a build in progress or an interrupted save"), std::string::npos);
}

TEST(Store, TruncatedAndForeignFilesAreCorrupt) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path());
    auto const id = identity();
    auto const path = store.save(id, json::object(), testing::random_bytes(1000, 3));
    auto const bytes = testing::read_all(path);
    testing::write_all(path, std::span(bytes).first(bytes.size() - 1));
    EXPECT_NE(error_of<CorruptEngineError>(store, id).find("truncated"), std::string::npos);
    testing::write_all(path, testing::to_bytes("hello, world, this is not an engine"));
    EXPECT_NE(error_of<CorruptEngineError>(store, id).find("not a tensoracle engine"),
              std::string::npos);
}

TEST(Store, OtherConditionsAreNamedKeyByKey) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path());
    auto const wanted = identity("1");
    auto other_conditions = wanted.conditions;
    other_conditions["graph_version"] = "2";
    other_conditions.erase("tf32");
    other_conditions["extra"] = 5;
    auto const other = make_identity(other_conditions);
    auto const written = store.save(other, json::object(), testing::random_bytes(100, 4));
    std::filesystem::rename(written, store.entry_path(wanted));
    auto const message = error_of<EngineConditionError>(store, wanted);
    EXPECT_NE(message.find("\"graph_version\" (saved \"2\", requested \"1\")"), std::string::npos)
        << message;
    EXPECT_NE(message.find("\"tf32\" (saved absent, requested true)"), std::string::npos)
        << message;
    EXPECT_NE(message.find("\"extra\" (saved 5, requested absent)"), std::string::npos) << message;
    EXPECT_EQ(message.find("\"name\""), std::string::npos) << message;
}

TEST(Store, SuccessfulReadRecordsTheTime) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path());
    auto const id = identity();
    auto const path = store.save(id, json::object(), testing::random_bytes(100, 5));
    set_old_mtime(path);
    ASSERT_TRUE(store.read(id).has_value());
    EXPECT_GE(mtime_seconds(path), std::time(nullptr) - 60);
}

TEST(Store, ReadOfAMissingEntryCreatesNothing) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path());
    auto const id = identity();
    EXPECT_FALSE(store.read(id).has_value());
    EXPECT_FALSE(std::filesystem::exists(store.entry_path(id)));
}

// Store::lock is the per-identity lock every opener takes (SHARED to read, EXCLUSIVE to build and
// save): on the entry's own lock file, shared with other readers, exclusive against everyone, and
// independent of other identities.
TEST(Store, EntryLocksAreSharedForReadersAndExclusiveForTheBuilder) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path());
    auto const id = identity();
    auto const other = identity("2");
    {
        FileLock const reader = store.lock(id, LockMode::shared);
        EXPECT_TRUE(reader.held());
        EXPECT_EQ(reader.path(), store.lock_path(id));
        EXPECT_TRUE(FileLock::try_acquire(store.lock_path(id), LockMode::shared).has_value());
        EXPECT_FALSE(FileLock::try_acquire(store.lock_path(id), LockMode::exclusive).has_value());
        EXPECT_TRUE(FileLock::try_acquire(store.lock_path(other), LockMode::exclusive).has_value());
    }
    {
        FileLock const builder = store.lock(id, LockMode::exclusive);
        EXPECT_EQ(builder.mode(), LockMode::exclusive);
        EXPECT_FALSE(FileLock::try_acquire(store.lock_path(id), LockMode::shared).has_value());
        // Taking the lock creates the lock file only, never the entry.
        EXPECT_FALSE(store.contains(id));
    }
    EXPECT_TRUE(FileLock::try_acquire(store.lock_path(id), LockMode::exclusive).has_value());
}

// A damaged entry reaches the reader as CorruptEngineError (the caller decides to rebuild); a
// forced rebuild's save replaces it, and what it saved is read back.
TEST(Store, ACorruptEntryReachesTheReaderAndASaveReplacesIt) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path());
    auto const id = identity();
    testing::write_all(store.entry_path(id), {});
    EXPECT_TRUE(store.contains(id));
    EXPECT_THROW(static_cast<void>(store.read(id)), CorruptEngineError);
    auto const plan = testing::random_bytes(10, 1);
    {
        FileLock const builder = store.lock(id, LockMode::exclusive);
        store.save(id, {{"build", 2}}, plan);
    }
    auto const saved = store.read(id);
    ASSERT_TRUE(saved.has_value());
    EXPECT_EQ(saved->header().references, json({{"build", 2}}));
    ASSERT_EQ(saved->plan().size(), plan.size());
    EXPECT_TRUE(std::equal(plan.begin(), plan.end(), saved->plan().begin()));
}

TEST(Store, SaveRefusesFloatReferences) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path());
    EXPECT_THROW(store.save(identity(), {{"ratio", 0.5}}, {}), InvalidArgument);
    EXPECT_FALSE(store.contains(identity()));
}

// The conditions refusal names each differing key and both values, escaped as JSON with ASCII
// only, each cut at 120 bytes, and at most ten keys, then how many more: it stays short and
// printable whatever the saved file records.
TEST(Store, TheConditionsRefusalIsEscapedAndCapped) {
    std::filesystem::path const path = "/cache/m.engine";
    auto const message = [&path](json const& saved, json const& requested) {
        try {
            check_conditions(saved, requested, path);
        } catch (EngineConditionError const& error) {
            return std::string(error.what());
        }
        ADD_FAILURE() << "no refusal";
        return std::string();
    };
    EXPECT_EQ(message(json{{"tf32", false}}, json{{"tf32", true}}),
              "saved engine '/cache/m.engine' was built under other conditions; differing keys: "
              "\"tf32\" (saved false, requested true)");

    std::string const odd_key = std::string("k\n\x1b[31m") + "\xc3\xbc";
    std::string const escaped = message(json{{odd_key, "gr\xc3\xbc\xc3\x9f"}}, json::object());
    EXPECT_NE(escaped.find(R"("k\n\u001b[31m\u00fc" (saved "gr\u00fc\u00df", requested absent))"),
              std::string::npos)
        << escaped;
    for (char const c : escaped) {
        EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "byte " << static_cast<int>(c) << " in " << escaped;
    }

    std::string const long_value(100000, 'v');
    std::string const cut = message(json{{std::string(100000, 'k'), long_value}}, json::object());
    EXPECT_LT(cut.size(), 400U) << cut;
    EXPECT_NE(
        cut.find("\"" + std::string(119, 'k') + "... (saved \"" + std::string(119, 'v') + "..."),
        std::string::npos);

    json many = json::object();
    for (int i = 0; i < 25; ++i) {
        many["key" + std::to_string(100 + i)] = i;
    }
    std::string const capped = message(many, json::object());
    EXPECT_NE(capped.find("\"key109\" (saved 9, requested absent); and 15 more differing keys"),
              std::string::npos)
        << capped;
    EXPECT_EQ(capped.find("key110"), std::string::npos);
}

} // namespace
} // namespace tensoracle
