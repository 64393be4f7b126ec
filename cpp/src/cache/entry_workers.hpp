// Private to the core: runs one piece of work per cache entry on a few threads. Reading a header
// is a few system calls and a small JSON parse, so a listing of many entries is bound by the CPU
// of one thread; each index is handed to the next free thread, and the caller combines the
// results in index order, so the output does not depend on the thread count.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tensoracle::detail {

// Below this many entries, starting threads costs more than it saves.
inline constexpr std::size_t parallel_entries_threshold = 64;
// Threads beyond this many contend for the directory's inode locks more than they help.
inline constexpr unsigned max_entry_workers = 8;

inline unsigned entry_worker_count(std::size_t count) {
    if (count < parallel_entries_threshold) {
        return 1;
    }
    unsigned const cores = std::max(1U, std::thread::hardware_concurrency());
    return static_cast<unsigned>(
        std::min<std::size_t>({cores, max_entry_workers, count / parallel_entries_threshold}));
}

// Calls work(index) once for every index in [0, count), on the calling thread and at most
// max_entry_workers - 1 others. When a call throws, the remaining indices are skipped and the
// first exception is rethrown here once every thread has stopped.
template <class Work>
void for_each_entry(std::size_t count, Work const& work) {
    unsigned const workers = entry_worker_count(count);
    if (workers == 1) {
        for (std::size_t index = 0; index < count; ++index) {
            work(index);
        }
        return;
    }
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr first_error;
    std::mutex error_mutex;
    auto const run = [&] {
        while (!failed.load(std::memory_order_relaxed)) {
            std::size_t const index = next.fetch_add(1, std::memory_order_relaxed);
            if (index >= count) {
                return;
            }
            try {
                work(index);
            } catch (...) {
                std::lock_guard const lock(error_mutex);
                if (!first_error) {
                    first_error = std::current_exception();
                }
                failed.store(true, std::memory_order_relaxed);
            }
        }
    };
    {
        std::vector<std::jthread> pool;
        pool.reserve(workers - 1);
        for (unsigned worker = 1; worker < workers; ++worker) {
            pool.emplace_back(run);
        }
        run();
    } // joins every worker
    if (first_error) {
        std::rethrow_exception(first_error);
    }
}

} // namespace tensoracle::detail
