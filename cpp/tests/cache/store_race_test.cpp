// Eight processes opening one identity at once build it exactly once and read the same bytes.
#include "support/test_support.hpp"
#include "tensoracle/cache/store.hpp"
#include "tensoracle/io/hash.hpp"

#include <chrono>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace tensoracle {
namespace {

constexpr int kProcesses = 8;

int read_counter(std::filesystem::path const& path) {
    std::ifstream in(path);
    int value = 0;
    in >> value;
    return value;
}

// One race of kProcesses openers on a fresh identity; results go to files under `work`.
void race(std::filesystem::path const& cache, std::filesystem::path const& work, int round) {
    std::filesystem::create_directories(work);
    auto const counter = work / "builds";
    auto const identity =
        make_identity({{"name", "race"}, {"graph_version", std::to_string(round)}});

    // While this process holds the exclusive lock every child blocks on its shared lock; on
    // release all of them find no entry at the same moment and compete for the exclusive lock,
    // the case where only the re-check under the exclusive lock prevents repeated builds.
    auto gate = Store(cache).lock(identity, LockMode::exclusive);
    std::vector<pid_t> children;
    for (int i = 0; i < kProcesses; ++i) {
        pid_t const pid = ::fork();
        if (pid == 0) {
            gate.release(); // the parent's copy keeps the lock; this one must not
            try {
                Store const store(cache);
                auto const saved = store.open_or_build(identity, false, [&] {
                    // The build runs under the exclusive lock: a plain read-modify-write of the
                    // counter would lose updates if two builds overlapped.
                    int const builds = read_counter(counter) + 1;
                    std::this_thread::sleep_for(std::chrono::milliseconds(100));
                    std::ofstream(counter) << builds;
                    return BuiltEngine{
                        {{"builder", ::getpid()}},
                        testing::random_bytes(1 << 20, static_cast<std::uint32_t>(::getpid()))};
                });
                std::ofstream(work / ("digest-" + std::to_string(i)))
                    << sha256_hex(saved.plan()) << " " << saved.header().references.dump();
            } catch (std::exception const& error) {
                std::ofstream(work / ("error-" + std::to_string(i))) << error.what();
                ::_exit(1);
            }
            ::_exit(0);
        }
        children.push_back(pid);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    gate.release();
    for (pid_t const pid : children) {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }

    EXPECT_EQ(read_counter(counter), 1);
    std::string first;
    for (int i = 0; i < kProcesses; ++i) {
        std::ifstream in(work / ("digest-" + std::to_string(i)));
        std::string line;
        std::getline(in, line);
        ASSERT_FALSE(line.empty()) << "process " << i << " reported nothing";
        if (i == 0) {
            first = line;
        }
        EXPECT_EQ(line, first) << "process " << i;
    }
    auto const saved = Store(cache).read(identity);
    ASSERT_TRUE(saved.has_value());
    EXPECT_EQ(first.substr(0, 64), sha256_hex(saved->plan()));
}

// Which process wins which step depends on scheduling, so several rounds are run: a protocol
// without the re-check under the exclusive lock fails at least one of them with near certainty.
TEST(StoreRace, OneBuildForManyOpeners) {
    testing::TemporaryDirectory dir;
    for (int round = 0; round < 6; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        race(dir.path() / "cache", dir.path() / std::to_string(round), round);
    }
}

} // namespace
} // namespace tensoracle
