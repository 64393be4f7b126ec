// The rule that matches an entry's conditions against a described GPU, and the choice of one
// entry per device (see selection.hpp).
#include "tensoracle/deploy/selection.hpp"

#include "cuda/gpu_properties_json.hpp"
#include "deploy/json_forms.hpp"
#include "tensoracle/errors.hpp"
#include "text/json_members.hpp"
#include "text/message_text.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <string_view>
#include <utility>

namespace tensoracle::deploy {
namespace {

using Json = nlohmann::json;

// The oldest compute capability an "ampere_plus" engine runs on (Ampere, sm80).
constexpr std::string_view kAmpereMajor = "8";

// A value as Python's str() writes it: text as it is, True/False, a decimal number.
std::string text_of(PropertyValue const& value) {
    if (auto const* flag = std::get_if<bool>(&value)) {
        return *flag ? "True" : "False";
    }
    if (auto const* number = std::get_if<std::int64_t>(&value)) {
        return std::to_string(*number);
    }
    return std::get<std::string>(value);
}

// Text quoted as Python's repr() quotes it: in single quotes unless it holds a single quote and
// no double quote; backslashes, the quote and control characters escaped.
std::string python_quoted(std::string_view text) {
    bool const doubled =
        text.find('\'') != std::string_view::npos && text.find('"') == std::string_view::npos;
    char const quote = doubled ? '"' : '\'';
    std::string quoted(1, quote);
    for (char const c : text) {
        auto const byte = static_cast<unsigned char>(c);
        if (c == '\\' || c == quote) {
            quoted += '\\';
            quoted += c;
        } else if (c == '\n') {
            quoted += "\\n";
        } else if (c == '\r') {
            quoted += "\\r";
        } else if (c == '\t') {
            quoted += "\\t";
        } else if (byte < 0x20 || byte == 0x7f) {
            constexpr std::string_view kHex = "0123456789abcdef";
            quoted += "\\x";
            quoted += kHex[byte >> 4U];
            quoted += kHex[byte & 0xfU];
        } else {
            quoted += c;
        }
    }
    quoted += quote;
    return quoted;
}

// Python's == between two properties: numbers and true/false compare by value, text by text.
bool same_value(PropertyValue const& left, PropertyValue const& right) {
    auto const number = [](PropertyValue const& value) -> std::optional<std::int64_t> {
        if (auto const* flag = std::get_if<bool>(&value)) {
            return *flag ? 1 : 0;
        }
        if (auto const* whole = std::get_if<std::int64_t>(&value)) {
            return *whole;
        }
        return std::nullopt;
    };
    auto const left_number = number(left);
    auto const right_number = number(right);
    if (left_number || right_number) {
        return left_number == right_number;
    }
    return std::get<std::string>(left) == std::get<std::string>(right);
}

PropertyValue const* property(DeviceDescription const& device, std::string const& key) {
    auto const found = device.properties.find(key);
    return found == device.properties.end() ? nullptr : &found->second;
}

// str(device.get(key)): "None" when the property is absent.
std::string property_text(DeviceDescription const& device, std::string const& key) {
    PropertyValue const* value = property(device, key);
    return value == nullptr ? "None" : text_of(*value);
}

bool all_digits(std::string_view text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A run of digits as Python's int() reads it, written back: without leading zeros.
std::string_view without_leading_zeros(std::string_view digits) {
    std::size_t const first = digits.find_first_not_of('0');
    return first == std::string_view::npos ? digits.substr(digits.size() - 1)
                                           : digits.substr(first);
}

// The description's compute capability split at its first dot, checked as target_of checks it.
std::pair<std::string, std::string> capability_parts(DeviceDescription const& device) {
    PropertyValue const* value = property(device, "compute_capability");
    std::string const capability = value == nullptr ? std::string() : text_of(*value);
    std::size_t const dot = capability.find('.');
    std::string_view const whole = capability;
    if (dot == std::string::npos || !all_digits(whole.substr(0, dot)) ||
        !all_digits(whole.substr(dot + 1))) {
        throw InvalidArgument("the GPU description holds compute_capability=" +
                                  python_quoted(capability) + "; expected 'MAJOR.MINOR'",
                              Refusal{.subject = "the GPU description",
                                      .field = "compute_capability",
                                      .observed = python_quoted(capability),
                                      .expected = "'MAJOR.MINOR'"});
    }
    return {std::string(without_leading_zeros(whole.substr(0, dot))),
            std::string(without_leading_zeros(whole.substr(dot + 1)))};
}

// Whether a major version written without leading zeros is at least `minimum`'s.
bool at_least(std::string const& major, std::string_view minimum) {
    if (major.size() != minimum.size()) {
        return major.size() > minimum.size();
    }
    return major >= minimum;
}

std::string device_text(DeviceDescription const& device) {
    PropertyValue const* name = property(device, "name");
    return (name == nullptr ? std::string("the GPU") : text_of(*name)) + " (" + target_of(device) +
           ")";
}

// How specific a usable entry is to the device: the higher, the better it fits.
int specificity(EntryConditions const& conditions) {
    if (conditions.backend == kTensorRtRtx) {
        return 1;
    }
    if (!conditions.hardware_compatibility) {
        return 3;
    }
    return *conditions.hardware_compatibility == kSameComputeCapability ? 2 : 1;
}

} // namespace

std::string why_chosen(EntryConditions const& conditions, DeviceDescription const& device) {
    std::string const here = device_text(device);
    if (conditions.backend == kTensorRtRtx) {
        return "it is built for " + joined(conditions.targets, ", ") + ", which include " + here;
    }
    if (!conditions.hardware_compatibility) {
        return "it is built for a GPU with exactly the properties of " + here;
    }
    if (*conditions.hardware_compatibility == kSameComputeCapability) {
        return "it is built with hardware_compatibility 'same_compute_capability' for the "
               "compute capability of " +
               here;
    }
    return "it is built with hardware_compatibility 'ampere_plus', for sm80 and newer, which "
           "include " +
           here;
}

namespace {

// Why a candidate cannot be used with `backend` on `device`, or nothing.
std::optional<std::string> unusable(EntryConditions const& conditions,
                                    DeviceDescription const& device,
                                    RuntimeBackend const& backend) {
    // Where the runtime is not the one that built it, what the GPU would say is told too: a
    // refusal then names the targets or GPU the entry is for, not only its backend.
    auto const besides = [&](std::string reason) {
        if (auto const also = cannot_run(conditions, device)) {
            reason += "; besides, ";
            reason += *also;
        }
        return reason;
    };
    if (conditions.backend != backend.name) {
        return besides("it is built by " +
                       (conditions.backend.empty() ? "no backend" : conditions.backend) +
                       "; this application runs " + backend.name);
    }
    if (conditions.backend_version != backend.version) {
        return besides("it is built by " + conditions.backend + " " +
                       (conditions.backend_version.empty() ? "of no recorded version"
                                                           : conditions.backend_version) +
                       "; this application runs " + backend.name + " " + backend.version +
                       ", and an engine runs only on the version that built it");
    }
    if ((conditions.os && *conditions.os != backend.os) ||
        (conditions.arch && *conditions.arch != backend.arch)) {
        return besides("it is built on " + conditions.os.value_or("an unrecorded system") + " " +
                       conditions.arch.value_or("of an unrecorded architecture") +
                       "; this application runs on " + backend.os + " " + backend.arch);
    }
    return cannot_run(conditions, device);
}

[[noreturn]] void mistyped(JsonPlace const& at, Json const& value, std::string_view expected) {
    refuse_json<InvalidArgument>(at, value, expected);
}

// The string member `name`, or "" where it is absent or null.
std::string string_member(Json const& object, JsonPlace const& where, char const* name) {
    auto const found = object.find(name);
    if (found == object.end() || found->is_null()) {
        return {};
    }
    if (!found->is_string()) {
        mistyped(where.member(name), *found, "a string");
    }
    return found->get<std::string>();
}

} // namespace

DeviceDescription describe(GpuProperties const& gpu) {
    return device_from_json(to_json(gpu), JsonPlace::within("the GPU's properties"));
}

std::vector<DeviceDescription> describe_gpus() {
    GpuList const list = query_all_gpu_properties();
    if (list.devices.empty()) {
        throw Error("no GPU can be described on this machine: " + list.absent_reason);
    }
    std::vector<DeviceDescription> devices;
    devices.reserve(list.devices.size());
    for (GpuProperties const& gpu : list.devices) {
        devices.push_back(describe(gpu));
    }
    return devices;
}

CurrentGpu describe_current_gpu() {
    GpuQuery const query = query_gpu_properties();
    if (!query.properties) {
        throw Error("no GPU can be described in this thread: " + query.absent_reason);
    }
    return CurrentGpu{query.device, describe(*query.properties)};
}

std::optional<int> current_gpu_ordinal() {
    GpuQuery const query = query_gpu_properties();
    if (!query.properties) {
        return std::nullopt;
    }
    return query.device;
}

std::string target_of(DeviceDescription const& device) {
    auto const [major, minor] = capability_parts(device);
    return "sm" + major + minor;
}

std::optional<std::string> compute_capability_named(std::string_view text) {
    std::string capability(text);
    if (text.starts_with("sm") && text.size() >= 4 && all_digits(text.substr(2))) {
        capability = std::string(text.substr(2, text.size() - 3)) + "." +
                     std::string(text.substr(text.size() - 1));
    }
    DeviceDescription device;
    device.properties["compute_capability"] = capability;
    try {
        (void)capability_parts(device);
    } catch (InvalidArgument const&) { // not MAJOR.MINOR: the caller says what it expected
        return std::nullopt;
    }
    return capability;
}

std::optional<std::string> cannot_run(EntryConditions const& conditions,
                                      DeviceDescription const& device) {
    std::string const local = target_of(device);
    std::optional<std::string> const& level = conditions.hardware_compatibility;
    if (conditions.backend == kTensorRtRtx) {
        auto const& targets = conditions.targets;
        if (std::find(targets.begin(), targets.end(), local) != targets.end()) {
            return std::nullopt;
        }
        return "the engine is built for " +
               (targets.empty() ? "no target" : joined(targets, ", ")) + "; this GPU, " +
               device_text(device) + ", is not among them";
    }
    if (level == kAmperePlus) {
        if (at_least(capability_parts(device).first, kAmpereMajor)) {
            return std::nullopt;
        }
        return "the engine is built with hardware_compatibility 'ampere_plus', for sm80 and "
               "newer; this GPU, " +
               device_text(device) + ", is older";
    }
    std::optional<DeviceDescription> const& recorded = conditions.gpu;
    if (level == kSameComputeCapability) {
        PropertyValue const* wanted =
            recorded ? property(*recorded, "compute_capability") : nullptr;
        std::string const observed = property_text(device, "compute_capability");
        auto const* wanted_text = wanted == nullptr ? nullptr : std::get_if<std::string>(wanted);
        if (wanted_text != nullptr && *wanted_text == observed) {
            return std::nullopt;
        }
        return "the engine is built with hardware_compatibility 'same_compute_capability', for "
               "compute capability " +
               (wanted == nullptr ? std::string("None") : text_of(*wanted)) + "; this GPU, " +
               device_text(device) + ", has " + observed;
    }
    if (level) {
        return "the engine records hardware_compatibility " + python_quoted(*level) +
               ", which is not known here";
    }
    if (!recorded) {
        return std::string(
            "the engine was built without a GPU by a backend that builds for the GPU in use");
    }
    std::set<std::string> keys;
    for (auto const& [key, value] : recorded->properties) {
        keys.insert(key);
    }
    for (auto const& [key, value] : device.properties) {
        keys.insert(key);
    }
    std::vector<std::string> differing;
    for (std::string const& key : keys) {
        PropertyValue const* before = property(*recorded, key);
        PropertyValue const* after = property(device, key);
        bool const same =
            (before == nullptr || after == nullptr) ? before == after : same_value(*before, *after);
        if (!same) {
            differing.push_back(key);
        }
    }
    if (differing.empty()) {
        return std::nullopt;
    }
    return "the engine is built for " + property_text(*recorded, "name") +
           " and runs only on a GPU with the same properties; this GPU, " + device_text(device) +
           ", differs in " + joined(differing, ", ");
}

std::optional<std::size_t> choose_entry(std::vector<EntryConditions const*> const& candidates,
                                        DeviceDescription const& device,
                                        RuntimeBackend const& backend) {
    std::string const local = target_of(device);
    std::optional<std::size_t> chosen;
    int best = 0;
    bool tied = false;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        EntryConditions const& conditions = *candidates[i];
        if (conditions.backend != backend.name || conditions.backend_version != backend.version ||
            (conditions.os && *conditions.os != backend.os) ||
            (conditions.arch && *conditions.arch != backend.arch)) {
            continue;
        }
        bool const runs = conditions.backend == kTensorRtRtx
                              ? std::find(conditions.targets.begin(), conditions.targets.end(),
                                          local) != conditions.targets.end()
                              : !cannot_run(conditions, device).has_value();
        if (!runs) {
            continue;
        }
        int const rank = specificity(conditions);
        if (rank > best) {
            best = rank;
            chosen = i;
            tied = false;
        } else if (rank == best) {
            tied = true;
        }
    }
    if (tied) {
        return std::nullopt;
    }
    return chosen;
}

Selection select_entry(std::vector<Candidate> const& candidates, DeviceDescription const& device,
                       RuntimeBackend const& backend) {
    // How many candidates a refusal lists with their reasons, and how many others an
    // ambiguous one names: the rest are counted, so that a refusal stays short.
    constexpr std::size_t kListedCandidates = 10;
    constexpr std::size_t kNamedOthers = 3;
    std::string const here = device_text(device) + " with " + backend.name + " " + backend.version;
    Selection selection;
    std::vector<std::size_t> usable;
    std::vector<std::optional<std::string>> reasons(candidates.size());
    int best = 0;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        reasons[i] = unusable(candidates[i].conditions, device, backend);
        if (!reasons[i]) {
            int const rank = specificity(candidates[i].conditions);
            if (rank > best) {
                best = rank;
                usable.clear();
            }
            if (rank == best) {
                usable.push_back(i);
            }
        }
    }
    if (usable.size() == 1) {
        selection.chosen = usable.front();
        selection.why = why_chosen(candidates[usable.front()].conditions, device);
    }
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        if (selection.chosen == i) {
            continue;
        }
        std::string reason;
        if (reasons[i]) {
            reason = *reasons[i];
        } else if (specificity(candidates[i].conditions) < best) {
            reason = "it can run here, but " +
                     (selection.chosen ? candidates[*selection.chosen].name + " is"
                                       : std::string("entries that are")) +
                     " built more specifically for this GPU";
        } else {
            // A few of the others by name, then their count: each reason stays short however
            // many entries tie (1,000 tied entries made a refusal of 83 MB when all were named).
            std::vector<std::string> others;
            for (std::size_t const other : usable) {
                if (others.size() == kNamedOthers) {
                    break;
                }
                if (other != i) {
                    others.push_back(candidates[other].name);
                }
            }
            std::size_t const unnamed = usable.size() - 1 - others.size();
            reason = "it can run here, and so can " + joined(others, ", ") +
                     (unnamed == 0 ? std::string()
                                   : " and " + std::to_string(unnamed) + " more entr" +
                                         (unnamed == 1 ? "y" : "ies")) +
                     ", built as specifically: which one to use is ambiguous";
        }
        selection.rejected.push_back({i, std::move(reason)});
    }
    if (selection.chosen) {
        return selection;
    }
    if (candidates.empty()) {
        selection.refusal = "no entry can be selected for " + here + ": there are no candidates";
        return selection;
    }
    selection.refusal = usable.empty() ? "no entry can run on " + here + ":"
                                       : "more than one entry can run on " + here + ":";
    std::size_t listed = 0;
    for (Rejection const& rejection : selection.rejected) {
        if (listed == kListedCandidates) {
            std::size_t const rest = selection.rejected.size() - listed;
            selection.refusal += "\n  and " + std::to_string(rest) + " more entr" +
                                 (rest == 1 ? "y" : "ies") + ", not listed";
            break;
        }
        selection.refusal +=
            "\n  " + candidates[rejection.candidate].name + ": " + rejection.reason;
        ++listed;
    }
    return selection;
}

DeviceDescription device_from_json(Json const& device, JsonPlace const& where) {
    if (!device.is_object()) {
        mistyped(where, device, "an object of GPU properties");
    }
    constexpr auto kLargest = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    DeviceDescription description;
    for (auto const& [key, value] : device.items()) {
        if (value.is_boolean()) {
            description.properties.emplace(key, value.get<bool>());
        } else if (value.is_number_integer() &&
                   (!value.is_number_unsigned() || value.get<std::uint64_t>() <= kLargest)) {
            description.properties.emplace(key, value.get<std::int64_t>());
        } else if (value.is_string()) {
            description.properties.emplace(key, value.get<std::string>());
        } else {
            mistyped(where.member(key), value, "a string, an integer or true/false");
        }
    }
    return description;
}

EntryConditions conditions_from_json(Json const& conditions, JsonPlace const& where) {
    if (!conditions.is_object()) {
        mistyped(where, conditions, "an object of identity conditions");
    }
    EntryConditions read;
    read.backend = string_member(conditions, where, "backend");
    read.backend_version = string_member(conditions, where, "backend_version");
    for (auto [key, member] :
         {std::pair{"os", &EntryConditions::os}, std::pair{"arch", &EntryConditions::arch}}) {
        if (auto const found = conditions.find(key);
            found != conditions.end() && !found->is_null()) {
            read.*member = string_member(conditions, where, key);
        }
    }
    auto const level = conditions.find("hardware_compatibility");
    if (level != conditions.end() && !level->is_null()) {
        read.hardware_compatibility = string_member(conditions, where, "hardware_compatibility");
    }
    auto const targets = conditions.find("targets");
    if (targets != conditions.end() && !targets->is_null()) {
        JsonPlace const at = where.member("targets");
        if (!targets->is_array()) {
            mistyped(at, *targets, "an array of strings");
        }
        for (std::size_t i = 0; i < targets->size(); ++i) {
            Json const& target = (*targets)[i];
            if (!target.is_string()) {
                mistyped(at.index(i), target, "a string");
            }
            read.targets.push_back(target.get<std::string>());
        }
    }
    auto const gpu = conditions.find("gpu");
    if (gpu != conditions.end() && !gpu->is_null()) {
        read.gpu = device_from_json(*gpu, where.member("gpu"));
    }
    return read;
}

} // namespace tensoracle::deploy
