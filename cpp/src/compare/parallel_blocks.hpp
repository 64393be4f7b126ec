// Private to the core: splits a flat element range into fixed blocks and runs them on worker
// threads. Block boundaries do not depend on the thread count, so results that are combined in
// block order are bit-for-bit the same however many threads ran.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace tensoracle::detail {

inline constexpr std::uint64_t block_elements = std::uint64_t{1} << 16;
// Below this many elements, starting threads costs more than it saves.
inline constexpr std::uint64_t parallel_threshold = std::uint64_t{1} << 18;

inline unsigned worker_count(unsigned requested, std::uint64_t elements, std::size_t blocks) {
    unsigned workers = requested;
    if (workers == 0) {
        workers =
            elements < parallel_threshold ? 1U : std::max(1U, std::thread::hardware_concurrency());
    }
    return static_cast<unsigned>(
        std::min<std::size_t>(std::max(1U, workers), std::max<std::size_t>(1, blocks)));
}

// Calls work(first, count, partial) once per block, where partial is that block's own slot of
// the returned vector. `work` must not throw.
template <class Partial, class Work>
std::vector<Partial> run_blocks(std::uint64_t elements, unsigned requested_threads, Work work) {
    auto const blocks = static_cast<std::size_t>((elements + block_elements - 1) / block_elements);
    std::vector<Partial> partials(blocks);
    auto const run_range = [&](std::size_t begin, std::size_t end) {
        for (std::size_t block = begin; block < end; ++block) {
            std::uint64_t const first = block * block_elements;
            auto const count = static_cast<std::size_t>(std::min(block_elements, elements - first));
            work(first, count, partials[block]);
        }
    };
    unsigned const workers = worker_count(requested_threads, elements, blocks);
    if (workers == 1) {
        run_range(0, blocks);
        return partials;
    }
    {
        std::vector<std::jthread> pool;
        pool.reserve(workers);
        for (unsigned worker = 0; worker < workers; ++worker) {
            std::size_t const begin = blocks * worker / workers;
            std::size_t const end = blocks * (worker + 1) / workers;
            pool.emplace_back([&run_range, begin, end] { run_range(begin, end); });
        }
    } // joins every worker
    return partials;
}

} // namespace tensoracle::detail
