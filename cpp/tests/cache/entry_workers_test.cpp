// The entry workers of a cache listing (src/cache/entry_workers.hpp): every index once, on
// several threads for a long listing, and the first failure rethrown after every thread stopped.
#include "cache/entry_workers.hpp"

#include <atomic>
#include <chrono>
#include <gtest/gtest.h>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace tensoracle {
namespace {

TEST(EntryWorkers, EveryIndexIsWorkedOnceWhateverTheCount) {
    for (std::size_t const count : {std::size_t{0}, std::size_t{1}, std::size_t{63},
                                    std::size_t{64}, std::size_t{1000}, std::size_t{100003}}) {
        std::vector<std::atomic<int>> calls(count);
        detail::for_each_entry(count, [&](std::size_t index) { calls[index].fetch_add(1); });
        for (std::size_t index = 0; index < count; ++index) {
            ASSERT_EQ(calls[index].load(), 1) << "index " << index << " of " << count;
        }
    }
}

TEST(EntryWorkers, AShortListingStaysOnTheCallingThreadALongOneSpreads) {
    EXPECT_EQ(detail::entry_worker_count(63), 1U);
    EXPECT_EQ(detail::entry_worker_count(0), 1U);
    unsigned const cores = std::max(1U, std::thread::hardware_concurrency());
    EXPECT_EQ(detail::entry_worker_count(1'000'000), std::min(cores, detail::max_entry_workers));
    EXPECT_LE(detail::entry_worker_count(128), 2U);

    std::mutex mutex;
    std::set<std::thread::id> threads;
    detail::for_each_entry(63, [&](std::size_t) {
        std::lock_guard const lock(mutex);
        threads.insert(std::this_thread::get_id());
    });
    EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST(EntryWorkers, TheFirstFailureIsRethrownAndTheRestIsSkipped) {
    std::atomic<std::size_t> worked{0};
    std::size_t const count = 100000;
    try {
        detail::for_each_entry(count, [&](std::size_t index) {
            worked.fetch_add(1);
            if (index == 10) {
                throw std::runtime_error("entry 10 failed");
            }
            // Work that takes time, as a header read does: all of it would take seconds, so the
            // other threads cannot run through every index while the failing one, descheduled on
            // a busy machine, has not yet said it failed (with no work they could, in a
            // millisecond).
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        });
        FAIL() << "the failure was not rethrown";
    } catch (std::runtime_error const& error) {
        EXPECT_STREQ(error.what(), "entry 10 failed");
    }
    // The threads stop taking indices once one failed: far fewer than all were worked.
    EXPECT_LT(worked.load(), count);
}

} // namespace
} // namespace tensoracle
