// Concurrent writers of one identity, in separate processes: the store's exclusive lock serializes
// their builds (no read-modify-write under it is lost), and its saves replace the entry atomically
// (a reader that takes no lock sees no entry or a complete one, never part of a save).
#include "support/test_support.hpp"
#include "tensoracle/cache/store.hpp"
#include "tensoracle/io/atomic_file.hpp"
#include "tensoracle/io/hash.hpp"

#include <chrono>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace tensoracle {
namespace {

constexpr int kWriters = 8;
constexpr int kSavesPerWriter = 4;
constexpr std::size_t kPlanSize = 1 << 20;

int read_counter(std::filesystem::path const& path) {
    std::ifstream in(path);
    int value = 0;
    in >> value;
    return value;
}

// The plan writer `writer` saves in its save number `save`: readers recompute it from the
// references to check that what they read is one complete save.
std::vector<std::byte> plan_of(int writer, int save) {
    return testing::random_bytes(kPlanSize, static_cast<std::uint32_t>(writer * 100 + save + 1));
}

// One writer process: kSavesPerWriter times, under the identity's exclusive lock, a slow
// read-modify-write of the shared counter, then a save of its own plan.
void write_entries(Store const& store, EngineIdentity const& identity,
                   std::filesystem::path const& counter, int writer) {
    for (int save = 0; save < kSavesPerWriter; ++save) {
        FileLock const builder = store.lock(identity, LockMode::exclusive);
        int const builds = read_counter(counter) + 1;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        std::ofstream(counter) << builds;
        store.save(identity, {{"writer", writer}, {"save", save}}, plan_of(writer, save));
    }
}

// Reads without a lock until `stop` exists, and once more after; every entry read must be
// complete and one writer's. Returns the number of entries read, or throws on a partial or mixed
// one.
int read_entries(Store const& store, EngineIdentity const& identity,
                 std::filesystem::path const& stop) {
    int entries = 0;
    for (bool last = false; !last;) {
        last = std::filesystem::exists(stop);
        auto const saved = store.read(identity); // CorruptEngineError on a partial file
        if (!saved) {
            continue;
        }
        int const writer = saved->header().references.at("writer").get<int>();
        int const save = saved->header().references.at("save").get<int>();
        auto const expected = plan_of(writer, save);
        if (saved->plan().size() != expected.size() ||
            !std::equal(expected.begin(), expected.end(), saved->plan().begin())) {
            throw std::runtime_error("the plan read is not the one writer " +
                                     std::to_string(writer) + " saved");
        }
        ++entries;
    }
    return entries;
}

int wait_for(pid_t pid) {
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
        return -1;
    }
    return WEXITSTATUS(status);
}

// Runs `body` in a child process; exit 0 on success, 1 (with the message in `error_file`) on an
// exception.
template <typename Body>
pid_t spawn(std::filesystem::path const& error_file, Body body) {
    pid_t const pid = ::fork();
    if (pid == 0) {
        try {
            body();
        } catch (std::exception const& error) {
            std::ofstream(error_file) << error.what();
            ::_exit(1);
        }
        ::_exit(0);
    }
    return pid;
}

std::string error_text(std::filesystem::path const& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(StoreRace, ConcurrentWritersAreSerializedAndReadersSeeOnlyCompleteEntries) {
    testing::TemporaryDirectory dir;
    auto const cache = dir.path() / "cache";
    auto const counter = dir.path() / "builds";
    auto const stop = dir.path() / "stop";
    auto const identity = make_identity({{"name", "race"}, {"graph_version", "1"}});
    Store const store(cache);

    std::vector<pid_t> readers;
    for (int i = 0; i < 2; ++i) {
        readers.push_back(spawn(dir.path() / ("reader-error-" + std::to_string(i)), [&] {
            int const entries = read_entries(Store(cache), identity, stop);
            std::ofstream(dir.path() / ("reader-entries-" + std::to_string(i))) << entries;
        }));
    }
    // Every writer is released at once: while this process holds the exclusive lock they all
    // block on it, then compete for it.
    auto gate = store.lock(identity, LockMode::exclusive);
    std::vector<pid_t> writers;
    for (int writer = 0; writer < kWriters; ++writer) {
        writers.push_back(spawn(dir.path() / ("writer-error-" + std::to_string(writer)), [&] {
            gate.release(); // the parent's copy keeps the lock; this one must not
            write_entries(Store(cache), identity, counter, writer);
        }));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    gate.release();
    for (int writer = 0; writer < kWriters; ++writer) {
        EXPECT_EQ(wait_for(writers[static_cast<std::size_t>(writer)]), 0)
            << error_text(dir.path() / ("writer-error-" + std::to_string(writer)));
    }
    std::ofstream(stop) << "stop";
    for (std::size_t i = 0; i < readers.size(); ++i) {
        EXPECT_EQ(wait_for(readers[i]), 0)
            << error_text(dir.path() / ("reader-error-" + std::to_string(i)));
        EXPECT_GT(read_counter(dir.path() / ("reader-entries-" + std::to_string(i))), 0)
            << "reader " << i << " read no entry";
    }

    // A lost update would mean two writers held the exclusive lock at once.
    EXPECT_EQ(read_counter(counter), kWriters * kSavesPerWriter);
    auto const saved = store.read(identity);
    ASSERT_TRUE(saved.has_value());
    int const writer = saved->header().references.at("writer").get<int>();
    EXPECT_EQ(saved->header().references.at("save").get<int>(), kSavesPerWriter - 1)
        << "the last save of the entry is some writer's last";
    EXPECT_EQ(sha256_hex(saved->plan()), sha256_hex(plan_of(writer, kSavesPerWriter - 1)));
    for (auto const& entry : std::filesystem::directory_iterator(cache)) {
        EXPECT_FALSE(is_temporary_name(entry.path().filename().string())) << entry.path();
    }
}

} // namespace
} // namespace tensoracle
