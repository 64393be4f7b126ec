// Differences between build conditions, described key by key, and the nearest saved entry.
#include "cache/condition_difference.hpp"

#include "cache/weight_digest.hpp"

#include <algorithm>
#include <cstddef>
#include <set>

namespace tensoracle {
namespace {

constexpr std::size_t kMaxValueText = 80;
constexpr std::size_t kShortDigest = 12;

std::string value_text(nlohmann::json const& value) {
    if (value.is_null()) {
        return "none";
    }
    std::string text = value.is_string()
                           ? value.get<std::string>()
                           : value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (text.size() > kMaxValueText) {
        text = text.substr(0, kMaxValueText - 3) + "...";
    }
    return text;
}

std::string arrow(std::string const& before, std::string const& after) {
    return before + " \u2192 " + after;
}

// The file name recorded for a weight digest, else its first hex digits.
std::string weight_name(nlohmann::json const& digest, WeightPathIndex const& weights) {
    if (!digest.is_string()) {
        return value_text(digest);
    }
    nlohmann::json const paths = weights.paths_for(digest.get<std::string>());
    if (!paths.empty()) {
        return std::filesystem::path(paths.front().get<std::string>()).filename().string();
    }
    return "sha256 " + digest.get<std::string>().substr(0, kShortDigest);
}

std::string describe_weights(nlohmann::json const& before, nlohmann::json const& after,
                             WeightPathIndex const& weights) {
    if (!before.is_array() || !after.is_array()) {
        return "weights: " + arrow(value_text(before), value_text(after));
    }
    if (before.size() != after.size()) {
        return "weights: " + arrow(std::to_string(before.size()) + " files",
                                   std::to_string(after.size()) + " files");
    }
    std::string changed;
    for (std::size_t index = 0; index < before.size(); ++index) {
        if (before[index] != after[index]) {
            std::string name = weight_name(after[index], weights);
            if (name.starts_with("sha256 ")) {
                name = weight_name(before[index], weights);
            }
            if (name.starts_with("sha256 ")) {
                name = "weight file " + std::to_string(index + 1);
            }
            changed += (changed.empty() ? "" : ", ") + name;
        }
    }
    return "weights: " + changed + " content changed";
}

// A GPU record as a name: the product name; for a record of a compute capability only (a
// TensorRT 11 engine of hardware compatibility level same_compute_capability) that; "none" for
// an identity that records no GPU (TensorRT-RTX, level ampere_plus, a build without a GPU).
std::string gpu_text(nlohmann::json const& gpu) {
    if (gpu.is_object()) {
        if (auto const name = gpu.find("name"); name != gpu.end() && name->is_string()) {
            return name->get<std::string>();
        }
        if (auto const capability = gpu.find("compute_capability");
            capability != gpu.end() && capability->is_string() && gpu.size() == 1) {
            return "compute capability " + capability->get<std::string>();
        }
    }
    return value_text(gpu);
}

std::string describe(std::string const& key, nlohmann::json const& before,
                     nlohmann::json const& after, nlohmann::json const& backend,
                     WeightPathIndex const& weights) {
    if (key == "weights") {
        return describe_weights(before, after, weights);
    }
    if (key == "plugins") {
        return "plugins: the plugin libraries changed (" +
               arrow(value_text(before.is_array() ? nlohmann::json(before.size()) : before),
                     value_text(after.is_array() ? nlohmann::json(after.size()) : after)) +
               " libraries)";
    }
    if (key == "backend_version") {
        std::string const name = backend.is_string() ? backend.get<std::string>() : "backend";
        return name + " version " + arrow(value_text(before), value_text(after));
    }
    if (key == "gpu") {
        std::string const from = gpu_text(before);
        std::string const to = gpu_text(after);
        if (from == to) {
            return "gpu: " + from + " properties changed (" +
                   arrow(value_text(before), value_text(after)) + ")";
        }
        return "gpu: " + arrow(from, to);
    }
    if (key == "graph_version" || key == "backend" || key == "optimization_level") {
        return key + " " + arrow(value_text(before), value_text(after));
    }
    return key + ": " + arrow(value_text(before), value_text(after));
}

} // namespace

std::vector<ConditionDifference> condition_differences(nlohmann::json const& before,
                                                       nlohmann::json const& after,
                                                       WeightPathIndex const& weights) {
    nlohmann::json const empty = nlohmann::json::object();
    nlohmann::json const& from = before.is_object() ? before : empty;
    nlohmann::json const& to = after.is_object() ? after : empty;
    std::set<std::string> keys;
    for (auto const& item : from.items()) {
        keys.insert(item.key());
    }
    for (auto const& item : to.items()) {
        keys.insert(item.key());
    }
    nlohmann::json const backend = to.value("backend", from.value("backend", nlohmann::json()));
    std::vector<ConditionDifference> differences;
    for (std::string const& key : keys) {
        nlohmann::json const old_value = from.contains(key) ? from.at(key) : nlohmann::json();
        nlohmann::json const new_value = to.contains(key) ? to.at(key) : nlohmann::json();
        if (from.contains(key) == to.contains(key) && old_value == new_value) {
            continue;
        }
        differences.push_back(
            {key, old_value, new_value, describe(key, old_value, new_value, backend, weights)});
    }
    return differences;
}

nlohmann::json differences_json(std::vector<ConditionDifference> const& differences) {
    nlohmann::json result = nlohmann::json::array();
    for (ConditionDifference const& difference : differences) {
        result.push_back({{"key", difference.key},
                          {"before", difference.before},
                          {"after", difference.after},
                          {"description", difference.description}});
    }
    return result;
}

std::optional<NearestEntry> nearest_entry(std::filesystem::path const& directory,
                                          nlohmann::json const& conditions) {
    auto const name = conditions.find("name");
    if (!conditions.is_object() || name == conditions.end()) {
        return std::nullopt;
    }
    CacheScan const scan = scan_cache(directory);
    std::vector<WeightRecord> const records =
        scan.exists ? read_weight_records(directory) : std::vector<WeightRecord>{};
    WeightPathIndex const weights{records};
    std::optional<NearestEntry> best;
    std::int64_t best_time = 0;
    for (CacheEntry const& entry : scan.entries) {
        if (!entry.header || !entry.header->conditions.is_object()) {
            continue;
        }
        auto const entry_name = entry.header->conditions.find("name");
        if (entry_name == entry.header->conditions.end() || *entry_name != *name) {
            continue;
        }
        auto differences = condition_differences(entry.header->conditions, conditions, weights);
        bool const better =
            !best || differences.size() < best->differences.size() ||
            (differences.size() == best->differences.size() && entry.recorded_at_ns > best_time);
        if (better) {
            best = NearestEntry{entry.name, std::move(differences)};
            best_time = entry.recorded_at_ns;
        }
    }
    return best;
}

} // namespace tensoracle
