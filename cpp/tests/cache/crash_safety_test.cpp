// Saves killed at random moments leave either the old or the new complete engine, never a mix,
// and a concurrent reader never sees a partial plan.
#include "cache/plan_checksum.hpp"
#include "cache/plan_chunks.hpp"
#include "cache/store.hpp"
#include "io/atomic_file.hpp"
#include "support/child_process.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"

#include <chrono>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <thread>

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
    header.chunks = plan_chunks_of(plan); // format version 2, as Store::save writes
    AtomicFile file(store.entry_path(identity));
    file.write(encode_engine_prefix(header));
    for (std::size_t offset = 0; offset < plan.size(); offset += kChunkBytes) {
        file.write(std::span(plan).subspan(offset, std::min(kChunkBytes, plan.size() - offset)));
    }
    file.commit();
}

EngineIdentity crash_identity() {
    return make_identity({{"name", "crash"}, {"graph_version", "1"}});
}

// Child: reads the entry in a loop until the file arguments[1] exists, then writes its count of
// good reads to arguments[2] and exits 0; exits 3 when the entry is missing, 4 on a bad read.
int reader_role(std::vector<std::string> const& arguments) {
    Store const store(arguments.at(0));
    auto const identity = crash_identity();
    std::uint64_t reads = 0;
    while (!std::filesystem::exists(arguments.at(1))) {
        try {
            auto const saved = store.read(identity);
            if (!saved) {
                return 3;
            }
            verified_generation(*saved);
        } catch (...) {
            return 4;
        }
        ++reads;
    }
    std::ofstream(arguments.at(2)) << reads;
    return 0;
}
bool const reader_registered = testing::register_child_role("crash_reader", reader_role);

// Child: creates the file arguments[2] to say it starts, then saves generation arguments[1];
// exits 0 when the save completed, 2 when it failed.
int writer_role(std::vector<std::string> const& arguments) {
    Store const store(arguments.at(0));
    std::ofstream(arguments.at(2)) << "started";
    try {
        chunked_save(store, crash_identity(), std::stoull(arguments.at(1)));
    } catch (...) {
        return 2;
    }
    return 0;
}
bool const writer_registered = testing::register_child_role("crash_writer", writer_role);

TEST(CrashSafety, KilledSavesLeaveACompleteEngine) {
    testing::TemporaryDirectory dir;
    Store const store(dir.path());
    auto const identity = crash_identity();

    auto const started = std::chrono::steady_clock::now();
    chunked_save(store, identity, 0);
    auto const save_time = std::chrono::steady_clock::now() - started;
    auto const window_us = std::max<long long>(
        2000, std::chrono::duration_cast<std::chrono::microseconds>(save_time).count() * 3 / 2);

    // A reader that takes no lock reads the entry over and over while writers replace it.
    auto const stop = dir.path() / "stop";
    auto const reads_file = dir.path() / "reads";
    testing::ChildProcess reader(
        "crash_reader",
        std::vector<std::string>{dir.path().string(), stop.string(), reads_file.string()});

    std::mt19937 random(12345);
    std::uint64_t current = 0;
    int killed = 0;
    int completed = 0;
    for (int trial = 1; trial <= kTrials; ++trial) {
        auto const generation = static_cast<std::uint64_t>(trial);
        // The delay counts from the writer's start of its save, not of its process (a process
        // start takes longer than a save).
        auto const started_file = dir.path() / ("started-" + std::to_string(trial));
        testing::ChildProcess writer(
            "crash_writer",
            {dir.path().string(), std::to_string(generation), started_file.string()});
        while (!std::filesystem::exists(started_file) &&
               !writer.wait(std::chrono::milliseconds(0))) {
            std::this_thread::yield();
        }
        std::uniform_int_distribution<long long> delay(0, window_us);
        std::this_thread::sleep_for(std::chrono::microseconds(delay(random)));
        writer.kill();
        int const status = writer.wait().value_or(-1);
        bool const was_killed = status == testing::kKilledChild;
        if (was_killed) {
            ++killed;
        } else {
            ASSERT_EQ(status, 0) << "the writer failed on its own";
            ++completed;
        }

        auto const saved = store.read(identity);
        ASSERT_TRUE(saved.has_value());
        auto const found = verified_generation(*saved);
        if (!was_killed) {
            EXPECT_EQ(found, generation) << "a completed save must be visible";
        } else {
            EXPECT_TRUE(found == current || found == generation)
                << "trial " << trial << " found generation " << found;
        }
        current = found;
    }

    std::uint64_t reads = 0;
    std::ofstream(stop) << "stop";
    EXPECT_EQ(reader.wait(), 0) << "the concurrent reader saw a bad entry (3: none, 4: bad)";
    std::ifstream(reads_file) >> reads;
    EXPECT_GT(reads, 0U) << "the concurrent reader never completed a read";
    EXPECT_GT(killed, 0) << "no save was interrupted; the test proved nothing";
    std::cout << "trials: " << kTrials << ", killed: " << killed << ", completed: " << completed
              << ", concurrent good reads: " << reads << "\n";

    // Killed writers leave their temporary files behind; nothing else may appear.
    for (auto const& entry : std::filesystem::directory_iterator(dir.path())) {
        auto const name = entry.path().filename().string();
        EXPECT_TRUE(name == identity.file_name || name == identity.file_name + ".lock" ||
                    name == "stop" || name == "reads" || name.rfind("started-", 0) == 0 ||
                    is_temporary_name(name))
            << name;
    }
}

} // namespace
} // namespace tensoracle
