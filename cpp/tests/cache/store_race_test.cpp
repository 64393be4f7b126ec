// Concurrent writers of one identity, in separate processes: the store's exclusive lock serializes
// their builds (no read-modify-write under it is lost), and its saves replace the entry atomically
// (a reader that takes no lock sees no entry or a complete one, never part of a save).
#include "cache/store.hpp"
#include "io/atomic_file.hpp"
#include "io/hash.hpp"
#include "support/child_process.hpp"
#include "support/test_support.hpp"

#include <chrono>
#include <fstream>
#include <gtest/gtest.h>
#include <thread>

namespace tensoracle {
namespace {

constexpr int kWriters = 8;
constexpr int kReaders = 2;
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

EngineIdentity race_identity() {
    return make_identity({{"name", "race"}, {"graph_version", "1"}});
}

// Child roles. A reader's arguments: the cache, the stop file, the file for its count of entries,
// the file for its error. A writer's: the cache, the counter, its number, the file for its error.
// Each exits 0, or 1 with the exception's message in its error file.
int reader_role(std::vector<std::string> const& arguments) {
    try {
        int const entries = read_entries(Store(arguments.at(0)), race_identity(), arguments.at(1));
        std::ofstream(arguments.at(2)) << entries;
    } catch (std::exception const& error) {
        std::ofstream(arguments.at(3)) << error.what();
        return 1;
    }
    return 0;
}
bool const reader_registered = testing::register_child_role("race_reader", reader_role);

int writer_role(std::vector<std::string> const& arguments) {
    try {
        write_entries(Store(arguments.at(0)), race_identity(), arguments.at(1),
                      std::stoi(arguments.at(2)));
    } catch (std::exception const& error) {
        std::ofstream(arguments.at(3)) << error.what();
        return 1;
    }
    return 0;
}
bool const writer_registered = testing::register_child_role("race_writer", writer_role);

std::string error_text(std::filesystem::path const& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(StoreRace, ConcurrentWritersAreSerializedAndReadersSeeOnlyCompleteEntries) {
    testing::TemporaryDirectory dir;
    auto const cache = dir.path() / "cache";
    auto const counter = dir.path() / "builds";
    auto const stop = dir.path() / "stop";
    auto const identity = race_identity();
    Store const store(cache);

    std::vector<testing::ChildProcess> readers;
    for (int i = 0; i < kReaders; ++i) {
        readers.emplace_back("race_reader",
                             std::vector<std::string>{
                                 cache.string(), stop.string(),
                                 (dir.path() / ("reader-entries-" + std::to_string(i))).string(),
                                 (dir.path() / ("reader-error-" + std::to_string(i))).string()});
    }
    // Every writer is released at once: while this process holds the exclusive lock they all
    // block on it, then compete for it.
    auto gate = store.lock(identity, LockMode::exclusive);
    std::vector<testing::ChildProcess> writers;
    for (int writer = 0; writer < kWriters; ++writer) {
        writers.emplace_back(
            "race_writer", std::vector<std::string>{
                               cache.string(), counter.string(), std::to_string(writer),
                               (dir.path() / ("writer-error-" + std::to_string(writer))).string()});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    gate.release();
    for (int writer = 0; writer < kWriters; ++writer) {
        EXPECT_EQ(writers[static_cast<std::size_t>(writer)].wait(), 0)
            << error_text(dir.path() / ("writer-error-" + std::to_string(writer)));
    }
    std::ofstream(stop) << "stop";
    for (std::size_t i = 0; i < readers.size(); ++i) {
        EXPECT_EQ(readers[i].wait(), 0)
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
