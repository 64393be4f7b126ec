// Engine identity: canonical conditions → SHA-256 digest → file name.
#include "cache/identity.hpp"

#include "io/hash.hpp"
#include "tensoracle/errors.hpp"
#include "text/canonical_json.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace tensoracle {
namespace {

constexpr std::size_t kMaxSafeNameLength = 64;

// The name only makes file listings readable; the digest alone keeps identities apart, so any
// byte outside a portable file-name alphabet may be replaced without losing uniqueness.
std::string safe_name(std::string const& name) {
    std::string out;
    for (char const c : name) {
        if (out.size() == kMaxSafeNameLength) {
            break;
        }
        bool const portable = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        out.push_back(portable ? c : '_');
    }
    return out;
}

// "sm" then 2 or 3 digits, the first not 0: the spelling BuilderSettings.targets accepts.
bool is_target(nlohmann::json const& value) {
    if (!value.is_string()) {
        return false;
    }
    std::string_view const text = value.get_ref<std::string const&>();
    if (text.size() < 4 || text.size() > 5 || !text.starts_with("sm") || text[2] == '0') {
        return false;
    }
    return std::all_of(text.begin() + 2, text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// By compute capability, lowest first: without leading zeros a shorter name is a lower one.
bool lower_target(nlohmann::json const& a, nlohmann::json const& b) {
    auto const& left = a.get_ref<std::string const&>();
    auto const& right = b.get_ref<std::string const&>();
    return left.size() != right.size() ? left.size() < right.size() : left < right;
}

// Checks conditions["targets"] (when present) is a set of targets and sorts it in place.
// TensorRT-RTX's default targets (sm80, sm86, sm89, sm120) are already in this order, so the
// entries saved for them keep their identity; tensoracle 1.x recorded no targets at all.
void sort_targets(nlohmann::json& conditions) {
    auto const found = conditions.find("targets");
    if (found == conditions.end()) {
        return;
    }
    nlohmann::json& targets = *found;
    if (!targets.is_array()) {
        throw InvalidArgument("engine conditions member \"targets\" must be an array of compute "
                              "capabilities such as [\"sm86\",\"sm89\"], not " +
                              targets.dump());
    }
    for (nlohmann::json const& target : targets) {
        if (!is_target(target)) {
            throw InvalidArgument("engine conditions member \"targets\" holds " + target.dump() +
                                  "; write each target as \"sm\" and its compute capability in "
                                  "lower case, for example \"sm89\" or \"sm120\"");
        }
    }
    std::sort(targets.begin(), targets.end(), lower_target);
    auto const repeated = std::adjacent_find(targets.begin(), targets.end());
    if (repeated != targets.end()) {
        throw InvalidArgument("engine conditions member \"targets\" names " + repeated->dump() +
                              " twice; name each target once");
    }
}

} // namespace

EngineIdentity make_identity(nlohmann::json conditions) {
    if (conditions.is_object()) {
        sort_targets(conditions);
    }
    return recorded_identity(std::move(conditions));
}

namespace {

// The checks recorded_identity makes, and the digest and file name it gives; `canonical` is
// canonical_json(conditions) when the caller has it.
std::pair<std::string, std::string>
digest_and_file_name(nlohmann::json const& conditions,
                     std::optional<std::string_view> canonical = std::nullopt) {
    if (!conditions.is_object()) {
        throw InvalidArgument(std::string("engine conditions must be a JSON object, not a ") +
                              conditions.type_name());
    }
    auto const name = conditions.find("name");
    if (name == conditions.end() || !name->is_string() ||
        name->get_ref<std::string const&>().empty()) {
        throw InvalidArgument("engine conditions need a non-empty string member \"name\", got " +
                              (name == conditions.end() ? std::string("none") : name->dump()));
    }
    std::string digest =
        canonical ? sha256_hex(*canonical) : sha256_hex(canonical_json(conditions));
    std::string file_name = safe_name(name->get<std::string>()) + "-" + digest + ".engine";
    return {std::move(digest), std::move(file_name)};
}

} // namespace

EngineIdentity recorded_identity(nlohmann::json conditions) {
    EngineIdentity identity;
    std::tie(identity.digest, identity.file_name) = digest_and_file_name(conditions);
    identity.conditions = std::move(conditions);
    return identity;
}

std::string recorded_file_name(nlohmann::json const& conditions) {
    return digest_and_file_name(conditions).second;
}

std::string recorded_file_name(nlohmann::json const& conditions,
                               std::string_view canonical_conditions) {
    return digest_and_file_name(conditions, canonical_conditions).second;
}

} // namespace tensoracle
