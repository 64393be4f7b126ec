// Joining a sharded build's manifests (see manifest_merge.hpp). The split is the one of
// python/src/tensoracle/cli/build_shard.py: the build's recipes sorted by name, graph version and
// occurrence (the k-th recipe of the same name and graph version), the one at sorted position p
// in part p mod N.
#include "tensoracle/deploy/manifest_merge.hpp"

#include "tensoracle/deploy/manifest.hpp"
#include "tensoracle/errors.hpp"
#include "text/bounded_json.hpp"
#include "text/message_text.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tensoracle::deploy {
namespace {

using Json = nlohmann::json;

// A build's recipe: its name, graph version and occurrence among recipes of that pair.
using RecipeKey = std::tuple<std::string, std::string, std::size_t>;

// A recipe's name and graph version: the key under which entries are placed, one look-up each.
// A walk over the build's recipes for each entry made a merge of 50,000 entries take 6.4 s
// instead of 2.6 s (bench/manifest_merge.py).
using RecipePair = std::pair<std::string, std::string>;

struct RecipePairHash {
    std::size_t operator()(RecipePair const& pair) const noexcept {
        std::size_t const name = std::hash<std::string>{}(pair.first);
        std::size_t const version = std::hash<std::string>{}(pair.second);
        // boost::hash_combine's mix, so that ("ab", "c") and ("a", "bc") hash apart.
        return name ^ (version + static_cast<std::size_t>(0x9e3779b97f4a7c15ULL) + (name << 6U) +
                       (name >> 2U));
    }
};

// The positions, in the build's order, of a recipe's occurrences that one part builds, and how
// many of them that part's entries have taken.
struct Slots {
    std::vector<std::size_t> positions;
    std::size_t next = 0;
};

struct Part {
    std::string name;
    Json document;
    std::uint64_t index = 0;
    std::uint64_t count = 0;
};

std::uint64_t whole(Json const& shard, std::string const& name, char const* field,
                    std::uint64_t lowest) {
    auto const found = shard.find(field);
    if (found == shard.end() || !found->is_number_integer() ||
        (!found->is_number_unsigned() && found->get<std::int64_t>() < 0) ||
        found->get<std::uint64_t>() < lowest) {
        throw InvalidArgument(name + ": shard." + field + " is " +
                              (found == shard.end() ? std::string("missing") : shown(*found)) +
                              ", expected a whole number >= " + std::to_string(lowest));
    }
    return found->get<std::uint64_t>();
}

Part part_of(ManifestPart const& given) {
    (void)parse_manifest(given.text, given.name); // every check of a manifest first
    Part part{given.name,
              parse_bounded_json(given.text, {.max_bytes = kMaxManifestFileBytes,
                                              .max_values = kMaxManifestValues}),
              0, 0};
    auto const shard = part.document.find("shard");
    if (shard == part.document.end() || !shard->is_object()) {
        throw InvalidArgument(given.name + " is not a part of a sharded build: it has no shard " +
                              "member (write the parts with tensoracle build --shard I/N " +
                              "--manifest FILE)");
    }
    part.count = whole(*shard, given.name, "count", 1);
    part.index = whole(*shard, given.name, "index", 0);
    if (part.index >= part.count) {
        throw InvalidArgument(given.name + ": shard.index is " + std::to_string(part.index) +
                              ", not a part of " + std::to_string(part.count));
    }
    auto const recipes = shard->find("recipes");
    bool valid = recipes != shard->end() && recipes->is_array();
    for (std::size_t i = 0; valid && i < recipes->size(); ++i) {
        Json const& recipe = (*recipes)[i];
        valid = recipe.is_object() && recipe.contains("recipe") && recipe["recipe"].is_string() &&
                recipe.contains("graph_version") && recipe["graph_version"].is_string();
    }
    if (!valid) {
        throw InvalidArgument(given.name + ": shard.recipes is " +
                              (recipes == shard->end() ? std::string("missing") : shown(*recipes)) +
                              R"(, expected a list of {"recipe", "graph_version"} objects)");
    }
    return part;
}

// Where the first part and another disagree about the build they are parts of.
void check_same_build(Part const& first, Part const& other) {
    auto const differ = [&](std::string const& field, Json const& one, Json const& two) {
        throw InvalidArgument(first.name + " and " + other.name + " are parts of different " +
                              "builds: " + field + " is " + shown(one) + " in " + first.name +
                              " and " + shown(two) + " in " + other.name);
    };
    for (char const* field : {"schema_version", "spec", "remote"}) {
        if (first.document.at(field) != other.document.at(field)) {
            differ(field, first.document.at(field), other.document.at(field));
        }
    }
    if (first.count != other.count) {
        differ("shard.count", first.count, other.count);
    }
    Json const& recipes = first.document.at("shard").at("recipes");
    Json const& others = other.document.at("shard").at("recipes");
    if (recipes != others) {
        differ("shard.recipes", recipes, others);
    }
}

std::string part_list(std::vector<std::uint64_t> const& indices) {
    std::string text;
    for (std::uint64_t index : indices) {
        text += (text.empty() ? "" : ", ") + std::to_string(index);
    }
    return text;
}

} // namespace

std::string merge_manifests(std::vector<ManifestPart> const& parts) {
    if (parts.empty()) {
        throw InvalidArgument("no manifest to merge: give the manifest of every part");
    }
    std::vector<Part> read;
    read.reserve(parts.size());
    for (ManifestPart const& given : parts) {
        read.push_back(part_of(given));
        check_same_build(read.front(), read.back());
    }
    std::uint64_t const count = read.front().count;
    std::map<std::uint64_t, std::string> by_index;
    for (Part const& part : read) {
        auto const [at, added] = by_index.emplace(part.index, part.name);
        if (!added) {
            throw InvalidArgument(at->second + " and " + part.name + " are both part " +
                                  std::to_string(part.index) + " of " + std::to_string(count));
        }
    }
    std::vector<std::uint64_t> missing;
    for (std::uint64_t index = 0; index < count && missing.size() < 11; ++index) {
        if (by_index.count(index) == 0) {
            missing.push_back(index);
        }
    }
    if (!missing.empty()) {
        throw InvalidArgument("parts " + part_list(missing) + " of " + std::to_string(count) +
                              " are missing: merge the manifest of every part (" +
                              std::to_string(read.size()) + " given)");
    }

    // The split: which part each recipe of the build belongs to.
    Json const& recipes = read.front().document.at("shard").at("recipes");
    std::vector<RecipeKey> keys;
    keys.reserve(recipes.size());
    std::unordered_map<RecipePair, std::size_t, RecipePairHash> seen;
    for (Json const& recipe : recipes) {
        RecipePair pair{recipe.at("recipe").get<std::string>(),
                        recipe.at("graph_version").get<std::string>()};
        std::size_t const occurrence = seen[pair]++;
        keys.emplace_back(std::move(pair.first), std::move(pair.second), occurrence);
    }
    std::vector<std::size_t> sorted(keys.size());
    std::iota(sorted.begin(), sorted.end(), std::size_t{0});
    std::sort(sorted.begin(), sorted.end(),
              [&](std::size_t one, std::size_t two) { return keys[one] < keys[two]; });
    std::vector<std::uint64_t> owner(keys.size());
    for (std::size_t rank = 0; rank < sorted.size(); ++rank) {
        owner[sorted[rank]] = rank % count;
    }

    // Where each part's entries of a recipe go: the positions of the recipe's occurrences that
    // the part builds, in the build's order. An entry takes the first one that no entry before
    // it took, and only its own part places entries there: a cursor per list says which.
    std::unordered_map<RecipePair, std::unordered_map<std::uint64_t, Slots>, RecipePairHash> slots;
    slots.reserve(seen.size());
    for (std::size_t at = 0; at < keys.size(); ++at) {
        slots[RecipePair{std::get<0>(keys[at]), std::get<1>(keys[at])}][owner[at]]
            .positions.push_back(at);
    }

    // Each part's entries at the positions of their recipes.
    std::vector<std::optional<Json>> placed(keys.size());
    for (Part const& part : read) {
        Json const& entries = part.document.at("entries");
        for (std::size_t i = 0; i < entries.size(); ++i) {
            Json const& entry = entries[i];
            RecipePair const pair{entry.at("recipe").get<std::string>(),
                                  entry.at("graph_version").get<std::string>()};
            auto const recipe = slots.find(pair);
            Slots* free = nullptr;
            if (recipe != slots.end()) {
                auto const owned = recipe->second.find(part.index);
                if (owned != recipe->second.end() &&
                    owned->second.next < owned->second.positions.size()) {
                    free = &owned->second;
                }
            }
            if (free == nullptr) {
                std::string const what =
                    "recipe " + shown(pair.first) + " (graph_version " + shown(pair.second) + ")";
                std::string message = part.name + ": entries[" + std::to_string(i) + "]";
                message += " is ";
                message += what;
                if (recipe == slots.end()) {
                    message += ", which is not a recipe of the build (shard.recipes)";
                } else {
                    message += ", which part " + std::to_string(part.index) + " of " +
                               std::to_string(count) +
                               " does not build (another part does), or a repeat of an entry "
                               "before it: conflicting entries";
                }
                throw InvalidArgument(message);
            }
            placed[free->positions[free->next++]] = entry;
        }
    }
    Json merged_entries = Json::array();
    for (auto& entry : placed) {
        if (entry) {
            merged_entries.push_back(std::move(*entry));
        }
    }
    Json const& first = read.front().document;
    Json const merged = {{"schema_version", first.at("schema_version")},
                         {"spec", first.at("spec")},
                         {"remote", first.at("remote")},
                         {"entries", std::move(merged_entries)}};
    std::string text = merged.dump(2) + "\n";
    (void)parse_manifest(text, "the merged manifest"); // what every reader reads
    return text;
}

} // namespace tensoracle::deploy
