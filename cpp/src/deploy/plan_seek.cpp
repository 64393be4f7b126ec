// Where a seek in a plan lands (see plan_reader.hpp): the one rule of every stream over a
// PlanReader.
#include "tensoracle/deploy/plan_reader.hpp"

#include <algorithm>

namespace tensoracle::deploy {

std::optional<std::uint64_t> seek_target(std::uint64_t position, std::uint64_t size, SeekFrom from,
                                         std::int64_t offset) noexcept {
    std::uint64_t base = 0;
    if (from == SeekFrom::current) {
        base = position;
    } else if (from == SeekFrom::end) {
        base = size;
    }
    // Only positions inside the plan, or its end; the magnitudes compared unsigned, so that no
    // offset (INT64_MIN included) overflows.
    if (offset < 0) {
        std::uint64_t const back = static_cast<std::uint64_t>(-(offset + 1)) + 1;
        if (back > base) {
            return std::nullopt;
        }
        return base - back;
    }
    auto const ahead = static_cast<std::uint64_t>(offset);
    if (ahead > size - std::min(base, size)) {
        return std::nullopt;
    }
    return base + ahead;
}

} // namespace tensoracle::deploy
