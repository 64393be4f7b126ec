// Saves killed at random moments leave either the old or the new complete engine, never a mix,
// and a concurrent reader never sees a partial plan.
#include "support/test_support.hpp"
#include "tensoracle/cache/plan_checksum.hpp"
#include "tensoracle/cache/store.hpp"
#include "tensoracle/errors.hpp"
#include "tensoracle/io/atomic_file.hpp"

#include <chrono>
#include <csignal>
#include <cstring>
#include <gtest/gtest.h>
#include <random>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace tensoracle {
namespace {

using nlohmann::json;
constexpr std::size_t kPlanBytes = 4U << 20;
constexpr std::size_t kChunkBytes = 64U << 10;
constexpr int kTrials = 50;

// A plan whose every 8-byte word is derived from its generation, cheap to make and to check.
std::vector<std::byte> plan_of(std::uint64_t generation) {
    std::vector<std::byte> plan(kPlanBytes);
    for (std::size_t i = 0; i < kPlanBytes / 8; ++i) {
        std::uint64_t const word = generation * 0x9E3779B97F4A7C15ULL + i;
        std::memcpy(plan.data() + i * 8, &word, 8);
    }
    return plan;
}

// The generation recorded in the header, after checking the plan is exactly that generation's.
std::uint64_t verified_generation(SavedEngine const& saved) {
    auto const generation = saved.header().references.at("generation").get<std::uint64_t>();
    auto const expected = plan_of(generation);
    if (saved.plan().size() != expected.size() ||
        !std::equal(expected.begin(), expected.end(), saved.plan().begin())) {
        throw std::runtime_error("plan does not belong to generation " +
                                 std::to_string(generation));
    }
    return generation;
}

// What Store::save does, but writing the plan in small chunks so that a kill can land between
// any two of them (one large write(2) would make most kills fall before or after it).
void chunked_save(Store const& store, EngineIdentity const& identity, std::uint64_t generation) {
    auto const plan = plan_of(generation);
    EngineHeader header;
    header.conditions = identity.conditions;
    header.references = {{"generation", generation}};
    header.plan_size = plan.size();
    header.plan_xxh3_128 = plan_checksum_hex(plan);
    AtomicFile file(store.entry_path(identity));
    file.write(encode_engine_prefix(header));
    for (std::size_t offset = 0; offset < plan.size(); offset += kChunkBytes) {
        file.write(std::span(plan).subspan(offset, std::min(kChunkBytes, plan.size() - offset)));
    }
    file.commit();
}

// Reads the entry in a loop until killed; exits non-zero on the first bad read.
[[noreturn]] void reader_loop(Store const& store, EngineIdentity const& identity,
                              std::uint64_t* reads) {
    for (;; ++*reads) {
        try {
            auto const saved = store.read(identity);
            if (!saved) {
                ::_exit(3);
            }
            verified_generation(*saved);
        } catch (...) {
            ::_exit(4);
        }
    }
}

TEST(CrashSafety, KilledSavesLeaveACompleteEngine) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path());
    auto const identity = make_identity({{"name", "crash"}, {"graph_version", "1"}});

    auto const started = std::chrono::steady_clock::now();
    chunked_save(store, identity, 0);
    auto const save_time = std::chrono::steady_clock::now() - started;
    auto const window_us = std::max<long>(
        2000, std::chrono::duration_cast<std::chrono::microseconds>(save_time).count() * 3 / 2);

    // The reader counts its good reads in memory shared with this process.
    void* const shared = ::mmap(nullptr, sizeof(std::uint64_t), PROT_READ | PROT_WRITE,
                                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(shared, MAP_FAILED);
    auto* const reads = static_cast<std::uint64_t*>(shared);
    *reads = 0;
    pid_t const reader = ::fork();
    if (reader == 0) {
        reader_loop(store, identity, reads);
    }

    std::mt19937 random(12345);
    std::uint64_t current = 0;
    int killed = 0;
    int completed = 0;
    for (int trial = 1; trial <= kTrials; ++trial) {
        auto const generation = static_cast<std::uint64_t>(trial);
        pid_t const writer = ::fork();
        if (writer == 0) {
            try {
                chunked_save(store, identity, generation);
            } catch (...) {
                ::_exit(2);
            }
            ::_exit(0);
        }
        std::uniform_int_distribution<long> delay(0, window_us);
        std::this_thread::sleep_for(std::chrono::microseconds(delay(random)));
        ::kill(writer, SIGKILL);
        int status = 0;
        ASSERT_EQ(::waitpid(writer, &status, 0), writer);
        if (WIFSIGNALED(status)) {
            ++killed;
        } else {
            ASSERT_EQ(WEXITSTATUS(status), 0) << "the writer failed on its own";
            ++completed;
        }

        auto const saved = store.read(identity);
        ASSERT_TRUE(saved.has_value());
        auto const found = verified_generation(*saved);
        if (WIFEXITED(status)) {
            EXPECT_EQ(found, generation) << "a completed save must be visible";
        } else {
            EXPECT_TRUE(found == current || found == generation)
                << "trial " << trial << " found generation " << found;
        }
        current = found;
    }

    ::kill(reader, SIGKILL);
    int reader_status = 0;
    ASSERT_EQ(::waitpid(reader, &reader_status, 0), reader);
    EXPECT_TRUE(WIFSIGNALED(reader_status))
        << "the concurrent reader saw a bad entry (exit " << WEXITSTATUS(reader_status) << ")";
    EXPECT_GT(killed, 0) << "no save was interrupted; the test proved nothing";
    EXPECT_GT(*reads, 0U) << "the concurrent reader never completed a read";
    std::cout << "trials: " << kTrials << ", killed: " << killed << ", completed: " << completed
              << ", concurrent good reads: " << *reads << "\n";
    ::munmap(shared, sizeof(std::uint64_t));

    // Killed writers leave their temporary files behind; nothing else may appear.
    for (auto const& entry : std::filesystem::directory_iterator(dir.path())) {
        auto const name = entry.path().filename().string();
        EXPECT_TRUE(name == identity.file_name || name == identity.file_name + ".lock" ||
                    is_temporary_name(name))
            << name;
    }
}

} // namespace
} // namespace tensoracle
