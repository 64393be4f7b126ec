// Eight processes opening one identity at once build it exactly once and read the same bytes.
#include "tensoracle/hash.hpp"
#include "tensoracle/store.hpp"
#include "test_support.hpp"

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

TEST(StoreRace, OneBuildForManyOpeners) {
    testing::TemporaryDirectory dir;
    auto const cache = dir.path() / "cache";
    auto const counter = dir.path() / "builds";
    auto const identity = make_identity({{"name", "race"}, {"graph_version", "1"}});

    int start[2];
    ASSERT_EQ(::pipe(start), 0);
    std::vector<pid_t> children;
    for (int i = 0; i < kProcesses; ++i) {
        pid_t const pid = ::fork();
        if (pid == 0) {
            ::close(start[1]);
            char byte = 0;
            (void)::read(start[0], &byte, 1); // EOF when the parent closes: everyone starts at once
            try {
                Store const store(cache);
                auto const saved = store.open_or_build(identity, false, [&] {
                    // The build runs under the exclusive lock: a plain read-modify-write of the
                    // counter would lose updates if two builds overlapped.
                    int const builds = read_counter(counter) + 1;
                    std::this_thread::sleep_for(std::chrono::milliseconds(200));
                    std::ofstream(counter) << builds;
                    return BuiltEngine{
                        {{"builder", ::getpid()}},
                        testing::random_bytes(1 << 20, static_cast<std::uint32_t>(::getpid()))};
                });
                std::ofstream(dir.path() / ("digest-" + std::to_string(i)))
                    << sha256_hex(saved.plan()) << " " << saved.header().references.dump();
            } catch (std::exception const& error) {
                std::ofstream(dir.path() / ("error-" + std::to_string(i))) << error.what();
                ::_exit(1);
            }
            ::_exit(0);
        }
        children.push_back(pid);
    }
    ::close(start[0]);
    ::close(start[1]);
    for (pid_t const pid : children) {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }

    EXPECT_EQ(read_counter(counter), 1);
    std::string first;
    for (int i = 0; i < kProcesses; ++i) {
        std::ifstream in(dir.path() / ("digest-" + std::to_string(i)));
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

} // namespace
} // namespace tensoracle
