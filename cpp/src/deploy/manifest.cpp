// Reading the deployment manifest (see manifest.hpp): the bounded parser, then every field the
// application relies on checked for its type, and each entry's file name checked against the
// identity of its conditions.
#include "tensoracle/deploy/manifest.hpp"

#include "cache/identity.hpp"
#include "cache/plan_checksum.hpp"
#include "deploy/io_signature.hpp"
#include "deploy/json_fields.hpp"
#include "deploy/json_forms.hpp"
#include "deploy/manifest_document.hpp"
#include "io/file_bytes.hpp"
#include "io/hash.hpp"
#include "remote/signature.hpp"
#include "tensoracle/errors.hpp"
#include "text/bounded_json.hpp"
#include "text/canonical_json.hpp"
#include "text/json_excerpt.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace tensoracle::deploy {
namespace {

bool is_signature_hex(std::string const& text) {
    constexpr std::size_t kDigits = 2 * kSignatureBytes;
    return text.size() == kDigits && std::all_of(text.begin(), text.end(), [](char digit) {
               return (digit >= '0' && digit <= '9') || (digit >= 'a' && digit <= 'f');
           });
}

FleetObject fleet_of(Json const& value, JsonPlace const& place) {
    Fields const fields(value, place);
    FleetObject fleet{fields.text("key"), fields.text("url"), fields.optional_flag("signed"),
                      std::nullopt};
    if (auto const signature = fields.optional_text("signature")) {
        if (!is_signature_hex(*signature)) {
            fields.refuse("signature", *signature, "128 lowercase hex digits or null");
        }
        fleet.signature = signature;
    }
    return fleet;
}

// The members of an entry that repeat one of its conditions, and the condition each repeats
// (`tensoracle build --manifest` writes the recipe's name, which is the engine's name).
struct Repeated {
    char const* field;
    char const* condition;
};
constexpr std::array kRepeated{
    Repeated{"recipe", "name"},     Repeated{"graph_version", "graph_version"},
    Repeated{"backend", "backend"}, Repeated{"backend_version", "backend_version"},
    Repeated{"targets", "targets"}, Repeated{"hardware_compatibility", "hardware_compatibility"}};

// Each member an entry repeats from its conditions must be the conditions' own (null where they
// have none): the conditions are what the file name and the saved header vouch for, so an edited
// manifest cannot route a recipe to another engine, an older graph version or other targets.
// `subject` is the manifest's name, `entry` the entry's field ("entries[0]").
void check_repeated(Fields const& fields, Json const& conditions, std::string const& subject,
                    std::string const& entry) {
    for (Repeated const& repeated : kRepeated) {
        Json const& stated = fields.any(repeated.field);
        auto const found = conditions.find(repeated.condition);
        Json const recorded = found == conditions.end() ? Json(nullptr) : *found;
        if (stated != recorded) {
            throw InvalidArgument(fields.at(repeated.field) + " is " + shown(stated) +
                                      ", but its conditions record " + repeated.condition + " " +
                                      shown(recorded),
                                  Refusal{.subject = subject,
                                          .field = entry + "." + repeated.field,
                                          .observed = shown(stated),
                                          .expected = shown(recorded) + " (the conditions' " +
                                                      repeated.condition + ")"});
        }
    }
}

ManifestEntry entry_of(Json const& value, JsonPlace const& place) {
    Fields const fields(value, place);
    std::string const& subject = place.subject();
    std::string const& field = place.field();
    ManifestEntry entry;
    entry.recipe = fields.text("recipe");
    entry.graph_version = fields.text("graph_version");
    entry.file_name = fields.text("file_name");
    Json const& conditions = fields.any("conditions");
    entry.runs_on = conditions_from_json(conditions, fields.place("conditions"));
    std::string identity_name;
    try {
        identity_name = recorded_file_name(conditions);
    } catch (InvalidArgument const& error) {
        throw InvalidArgument(fields.at("conditions") +
                                  " are not an engine's identity: " + error.what(),
                              Refusal{.subject = subject,
                                      .field = field + ".conditions",
                                      .observed = error.what(),
                                      .expected = "an engine's identity"});
    }
    if (identity_name != entry.file_name) {
        throw InvalidArgument(
            fields.at("file_name") + " is " + shown(entry.file_name) +
                ", but the identity of its conditions is " + shown(identity_name),
            Refusal{.subject = subject,
                    .field = field + ".file_name",
                    .observed = shown(entry.file_name),
                    .expected = shown(identity_name) + " (the identity of its conditions)"});
    }
    check_repeated(fields, conditions, subject, field);
    entry.conditions_json = canonical_json(conditions);
    if (Json const& io = fields.any("io"); !io.is_null()) {
        entry.io = io_from_json(io, fields.place("io"));
        entry.io_json = canonical_json(io);
    }
    Fields const plan(fields.any("plan"), fields.place("plan"));
    entry.plan_size = plan.count("size");
    entry.plan_xxh3_128 = plan.text("xxh3_128");
    if (!is_plan_checksum_hex(entry.plan_xxh3_128)) {
        plan.refuse("xxh3_128", entry.plan_xxh3_128, "32 lowercase hex digits");
    }
    entry.engine_bytes = fields.count("engine_bytes");
    // The file's digests (absent from manifests written before they were recorded).
    for (auto [name, digest] :
         {std::pair{"sha256", &entry.sha256}, std::pair{"header_sha256", &entry.header_sha256}}) {
        if (Json const* found = fields.find(name); found != nullptr && !found->is_null()) {
            if (!found->is_string() || !is_sha256_hex(found->get<std::string>())) {
                fields.refuse(name, *found, "64 lowercase hex digits or null");
            }
            *digest = found->get<std::string>();
        }
    }
    if (Json const& fleet = fields.any("fleet"); !fleet.is_null()) {
        entry.fleet = fleet_of(fleet, fields.place("fleet"));
    }
    return entry;
}

} // namespace

Json manifest_json(std::string_view text, std::string const& name) {
    // As Python's json reads a text: a byte order mark is not JSON (build writes none).
    if (text.starts_with("\xEF\xBB\xBF")) {
        throw InvalidArgument(name + " is not a deployment manifest: it starts with a UTF-8 byte "
                                     "order mark (write it without one)");
    }
    Json document;
    try {
        document = parse_bounded_json(
            text, {.max_bytes = kMaxManifestFileBytes, .max_values = kMaxManifestValues});
    } catch (JsonLimitError const& error) { // JsonSyntaxError too
        throw InvalidArgument(name + " is not a deployment manifest: " + error.what());
    }
    return document;
}

bool is_envelope(Json const& document) {
    return document.is_object() && document.contains("payloadType");
}

Manifest manifest_of_document(Json const& document, JsonPlace const& place) {
    Fields const fields(document, place);
    fields.schema_version(kManifestSchemaVersion);
    Manifest manifest;
    manifest.spec = fields.text("spec");
    manifest.remote = fields.optional_text("remote");
    Json const& entries = fields.any("entries");
    if (!entries.is_array()) {
        fields.refuse("entries", entries, "an array");
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
        manifest.entries.push_back(entry_of(entries[i], fields.place("entries").index(i)));
    }
    return manifest;
}

Manifest parse_manifest(std::string_view text, std::string const& name) {
    Json const document = manifest_json(text, name);
    if (is_envelope(document)) {
        throw UntrustedEngineError(
            name + " is a signed deployment manifest (a DSSE envelope): read it with its trust "
                   "(read_manifest(path, options) with a verify key or trust policy)",
            Refusal{.subject = name,
                    .observed = "a signed deployment manifest (a DSSE envelope)",
                    .expected = "a plain deployment manifest",
                    .remedy = "read it with its trust (read_manifest(path, options) with a "
                              "verify key or trust policy)"});
    }
    return manifest_of_document(document, name);
}

std::string manifest_text(std::filesystem::path const& path) {
    auto const bytes = read_file_bytes(path, kMaxManifestFileBytes);
    if (!bytes) {
        throw InvalidArgument("deployment manifest '" + path.string() +
                              "' is larger than the limit of " +
                              std::to_string(kMaxManifestFileBytes) + " bytes");
    }
    return {bytes->data(), bytes->size()};
}

Manifest read_manifest(std::filesystem::path const& path) {
    return parse_manifest(manifest_text(path), path.string());
}

RecipeSelection select_recipe(Manifest const& manifest, std::string_view recipe,
                              DeviceDescription const& device, RuntimeBackend const& backend) {
    RecipeSelection result;
    std::vector<EntryConditions const*> conditions;
    for (std::size_t i = 0; i < manifest.entries.size(); ++i) {
        ManifestEntry const& entry = manifest.entries[i];
        if (entry.recipe == recipe) {
            result.indices.push_back(i);
            conditions.push_back(&entry.runs_on);
        }
    }
    // The choice first, without a reason per entry; the whole report only for a refusal.
    if (auto const chosen = choose_entry(conditions, device, backend)) {
        result.selection.chosen = chosen;
        result.selection.why = why_chosen(*conditions[*chosen], device);
        return result;
    }
    std::vector<Candidate> candidates;
    candidates.reserve(conditions.size());
    for (std::size_t const index : result.indices) {
        ManifestEntry const& entry = manifest.entries[index];
        candidates.push_back({entry.file_name, entry.runs_on});
    }
    result.selection = select_entry(candidates, device, backend);
    return result;
}

ManifestEntry const& select_for_device(Manifest const& manifest, std::string_view recipe,
                                       DeviceDescription const& device,
                                       RuntimeBackend const& backend) {
    return selected_entry(manifest, recipe, select_recipe(manifest, recipe, device, backend));
}

ManifestEntry const& selected_entry(Manifest const& manifest, std::string_view recipe,
                                    RecipeSelection const& found) {
    if (found.indices.empty()) {
        // The recipes in the manifest's order, each once (a set keeps this linear in the
        // entries), the first few by name and then their count.
        constexpr std::size_t kNamedRecipes = 10;
        std::set<std::string_view> seen;
        std::string held;
        for (ManifestEntry const& entry : manifest.entries) {
            if (seen.insert(entry.recipe).second && seen.size() <= kNamedRecipes) {
                held += (held.empty() ? "" : ", ") + shown(entry.recipe);
            }
        }
        if (seen.size() > kNamedRecipes) {
            held += " and " + std::to_string(seen.size() - kNamedRecipes) + " more";
        }
        throw InvalidArgument("the manifest (" + manifest.spec + ") has no entry of recipe " +
                              shown(std::string(recipe)) + "; its recipes are " +
                              (held.empty() ? std::string("none") : held));
    }
    if (!found.selection.chosen) {
        throw EngineTargetError("recipe " + shown(std::string(recipe)) + ": " +
                                found.selection.refusal);
    }
    return manifest.entries[found.indices[*found.selection.chosen]];
}

} // namespace tensoracle::deploy
