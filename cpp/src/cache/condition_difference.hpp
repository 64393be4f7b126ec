// The differences between the build conditions of two saved engines, each described for people
// ("graph_version 3 → 4", "weights: model.safetensors content changed"), and the saved entry of
// the same name nearest to a new set of conditions: what `tensoracle cache diff` prints and what
// open_engine records as the reason it built again.
#pragma once

#include "cache/listing.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tensoracle {

struct ConditionDifference {
    std::string key;         // top-level condition key
    nlohmann::json before;   // null when the key is absent
    nlohmann::json after;    // null when the key is absent
    std::string description; // one line for people
};

// Every top-level key whose value differs between `before` and `after` (objects), by key order.
// Weight digests are named by the weight files recorded for them in `weights` (file names only).
std::vector<ConditionDifference> condition_differences(nlohmann::json const& before,
                                                       nlohmann::json const& after,
                                                       WeightPathIndex const& weights);

// [{"key", "before", "after", "description"}, ...].
nlohmann::json differences_json(std::vector<ConditionDifference> const& differences);

struct NearestEntry {
    std::string file_name;
    std::vector<ConditionDifference> differences;
};

// Among the recognized entries of `directory` whose conditions have the same "name" as
// `conditions`, the one with the fewest differing keys (the most recently used on a tie); nothing
// when there is none. Reads headers and weight records only.
std::optional<NearestEntry> nearest_entry(std::filesystem::path const& directory,
                                          nlohmann::json const& conditions);

} // namespace tensoracle
