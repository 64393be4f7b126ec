// Reading bundle.json (schema version 1) into typed records, in the order of 1.x inspection.
// One concept, over 400 lines because every field has its own check and its own message naming
// the value expected; the loaded bundle is loaded_bundle.cpp.
#include "tensoracle/cubin/bundle_manifest.hpp"

#include "cubin/bundle_reader.hpp"
#include "cubin/elf.hpp"
#include "io/file_bytes.hpp"
#include "io/hash.hpp"
#include "tensoracle/errors.hpp"
#include "text/bounded_json.hpp"
#include "text/canonical_json.hpp"
#include "text/json_members.hpp"
#include "text/message_text.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <set>

namespace tensoracle::cubin {
namespace {

using nlohmann::json;

constexpr std::uint64_t kMaxDivisor = std::uint64_t{1} << 30;

// Typed access to one JSON object of bundle.json (the one reader of typed JSON members); every
// failure names the file, the field, the value found and what was expected.
class Fields : public JsonMembers<BundleError> {
public:
    Fields(json const& object, JsonPlace place) : JsonMembers(object, std::move(place)) {}

    JsonPlace where(std::string_view key) const { return place(key); }
    json const& at(std::string_view key, std::string const& expected) const {
        return any(key, expected);
    }
    // A string, or nothing where the member is absent.
    std::optional<std::string> optional_text(std::string_view key) const {
        json const* value = find(key);
        if (value == nullptr) {
            return std::nullopt;
        }
        return text(key, "a string");
    }
    // An exact JSON integer (never a boolean) of at least `minimum`.
    std::uint64_t integer(std::string_view key, std::uint64_t minimum,
                          std::string const& expected) const {
        return count(key, expected, minimum);
    }

    template <typename ErrorType>
    [[noreturn]] void fail_value(JsonPlace const& at, json const& value,
                                 std::string const& expected) const {
        refuse_at<ErrorType>(at, value, expected);
    }
    template <typename ErrorType>
    [[noreturn]] void fail(JsonPlace const& at, std::string const& found, std::string observed,
                           std::string const& expected) const {
        refuse_found<ErrorType>(at, found, std::move(observed), expected);
    }
};

std::string sm_names(std::span<std::uint32_t const> sms) {
    std::string names;
    for (std::uint32_t const sm : sms) {
        names += (names.empty() ? "sm" : ", sm") + std::to_string(sm);
    }
    return names;
}

// The argument types of the 1.x signature and how the runtime passes them.
std::optional<ArgType> argument_kind(std::string_view type) {
    if (type == "*fp16" || type == "*fp32" || type == "*i8" || type == "*i32") {
        return ArgType::pointer;
    }
    if (type == "i32") {
        return ArgType::i32;
    }
    if (type == "fp32") {
        return ArgType::f32;
    }
    return std::nullopt;
}

std::uint32_t check_target_sm(Fields const& entry) {
    std::string const expected = "one of " + sm_names(kSmsInspected);
    json const& value = entry.at("target_sm", "a string naming " + expected);
    if (value.is_string()) {
        for (std::uint32_t const sm : kSmsInspected) {
            if (value.get<std::string>() == "sm" + std::to_string(sm)) {
                return sm;
            }
        }
    }
    entry.fail_value<BundleError>(entry.where("target_sm"), value, expected);
}

void check_hidden_parameters(Fields const& entry) {
    static json const expected = json::parse(R"([{"name":"global_scratch","parameter_bytes":8},)"
                                             R"({"name":"profile_scratch","parameter_bytes":8}])");
    json const& value = entry.at("hidden_trailing_parameters", shown(expected));
    // Exact: 8 written as 8.0 or true is not the same parameter list.
    bool exact = value.is_array() && value.size() == expected.size();
    for (std::size_t i = 0; exact && i < value.size(); ++i) {
        json const& item = value[i];
        exact = item.is_object() && item.size() == 2 && item.contains("name") &&
                item.contains("parameter_bytes") && item["parameter_bytes"].is_number_integer() &&
                item == expected[i];
    }
    if (!exact) {
        entry.fail_value<BundleAbiError>(entry.where("hidden_trailing_parameters"), value,
                                         shown(expected));
    }
}

ManifestResources check_resources(Fields const& entry) {
    json const& value = entry.at("resources", "an object");
    if (!value.is_object()) {
        entry.fail_value<BundleError>(entry.where("resources"), value, "an object");
    }
    Fields const resources(value, entry.where("resources"));
    for (char const* scratch : {"global_scratch_bytes", "profile_scratch_bytes"}) {
        json const* size = resources.find(scratch);
        if (size == nullptr || !size->is_number_integer() || *size != 0) {
            std::string const observed = size == nullptr ? "missing" : shown(*size);
            resources.fail<BundleAbiError>(resources.where(scratch), "is " + observed, observed,
                                           "0: kernels that need scratch memory are not supported");
        }
    }
    ManifestResources result{};
    result.compiled_shared_memory_bytes =
        resources.integer("compiled_shared_memory_bytes", 0, "an integer >= 0");
    result.launch_dynamic_shared_memory_bytes =
        resources.integer("launch_dynamic_shared_memory_bytes", result.compiled_shared_memory_bytes,
                          "an integer >= compiled_shared_memory_bytes (" +
                              std::to_string(result.compiled_shared_memory_bytes) + ")");
    result.registers_per_thread = resources.integer("registers_per_thread", 1, "an integer >= 1");
    constexpr std::uint64_t u32_max = 0xffffffffU;
    for (auto const& [key, size] :
         {std::pair{"launch_dynamic_shared_memory_bytes",
                    result.launch_dynamic_shared_memory_bytes},
          std::pair{"registers_per_thread", result.registers_per_thread}}) {
        if (size > u32_max) {
            resources.fail<BundleError>(resources.where(key), "is " + std::to_string(size),
                                        std::to_string(size), "at most " + std::to_string(u32_max));
        }
    }
    return result;
}

std::vector<ManifestArg> check_signature(Fields const& entry) {
    json const& value = entry.at("signature", "an array of {name, type} arguments");
    if (!value.is_array()) {
        entry.fail_value<BundleError>(entry.where("signature"), value,
                                      "an array of {name, type} arguments");
    }
    if (value.empty() || value.size() > kMaxSignatureArgs) {
        entry.fail<BundleAbiError>(entry.where("signature"),
                                   "holds " + std::to_string(value.size()) + " arguments",
                                   std::to_string(value.size()) + " arguments",
                                   "1 to " + std::to_string(kMaxSignatureArgs) + " arguments");
    }
    std::vector<ManifestArg> args;
    std::set<std::string> names;
    for (std::size_t i = 0; i < value.size(); ++i) {
        JsonPlace const pointer = entry.where("signature").index(i);
        if (!value[i].is_object()) {
            entry.fail_value<BundleAbiError>(pointer, value[i], "an argument {name, type}");
        }
        Fields const arg(value[i], pointer);
        json const& name = arg.at("name", "the argument's name (a string)");
        if (!name.is_string() || name.get_ref<std::string const&>().empty()) {
            arg.fail_value<BundleAbiError>(arg.where("name"), name,
                                           "the argument's name (a non-empty string)");
        }
        if (!names.insert(name.get<std::string>()).second) {
            arg.fail_value<BundleAbiError>(arg.where("name"), name,
                                           "a name no other argument of the signature has");
        }
        std::string const types = "one of the argument types *fp16, *fp32, *i8, *i32, i32, fp32";
        json const& type = arg.at("type", types);
        std::optional<ArgType> const kind =
            type.is_string() ? argument_kind(type.get_ref<std::string const&>()) : std::nullopt;
        if (!kind) {
            arg.fail_value<BundleAbiError>(arg.where("type"), type, types);
        }
        args.push_back(ManifestArg{name.get<std::string>(), type.get<std::string>(), *kind, 1});
    }
    return args;
}

void check_specialization(Fields const& entry, std::vector<ManifestArg>& args) {
    std::string const expected = R"(an object with the one key "divisible_by")";
    json const& value = entry.at("specialization", expected);
    if (!value.is_object() || value.size() != 1 || !value.contains("divisible_by")) {
        entry.fail_value<BundleError>(entry.where("specialization"), value,
                                      expected + " (the specialization)");
    }
    json const& divisors = value["divisible_by"];
    JsonPlace const pointer = entry.where("specialization").member("divisible_by");
    if (!divisors.is_object()) {
        entry.fail_value<BundleError>(pointer, divisors,
                                      "an object {argument: divisor} (the specialization)");
    }
    for (auto const& item : divisors.items()) {
        std::string const& name = item.key();
        json const& divisor = item.value();
        JsonPlace const at_name = pointer.member(name);
        auto arg = std::find_if(args.begin(), args.end(),
                                [&](ManifestArg const& each) { return each.name == name; });
        if (arg == args.end()) {
            entry.fail<BundleError>(pointer, "names '" + name + "'", name,
                                    "argument names of the signature (the specialization)");
        }
        bool const power_of_two =
            divisor.is_number_unsigned() && divisor.get<std::uint64_t>() >= 1 &&
            divisor.get<std::uint64_t>() <= kMaxDivisor &&
            (divisor.get<std::uint64_t>() & (divisor.get<std::uint64_t>() - 1)) == 0;
        if (!power_of_two) {
            entry.fail_value<BundleError>(at_name, divisor,
                                          "an integer power of two from 1 to 2^30 (the "
                                          "specialization)");
        }
        if (arg->kind == ArgType::f32 && divisor != 1) {
            entry.fail_value<BundleError>(at_name, divisor,
                                          "1 for the fp32 argument (the specialization)");
        }
        arg->divisibility = divisor.get<std::uint32_t>();
    }
}

std::string check_file(Fields const& entry, std::set<std::string>& files) {
    json const& value = entry.at("file", "a relative path inside the bundle directory");
    if (!value.is_string() || !is_safe_relative_path(value.get_ref<std::string const&>())) {
        entry.fail_value<BundleError>(entry.where("file"), value,
                                      "a safe relative path inside the bundle directory (invalid "
                                      "cubin path)");
    }
    std::string file = value.get<std::string>();
    if (!files.insert(file).second) {
        entry.fail_value<BundleError>(entry.where("file"), value,
                                      "a file no earlier entry names (duplicate file)");
    }
    return file;
}

ManifestEntry check_entry(json const& value, std::size_t index, std::filesystem::path const& file,
                          std::set<std::string>& files) {
    JsonPlace const pointer = JsonPlace(file.string()).member("entries").index(index);
    Fields const entry(value, pointer);
    if (!value.is_object()) {
        entry.fail_value<BundleError>(pointer, value, "an entry object");
    }
    ManifestEntry result{};
    result.index = index;
    result.sm = check_target_sm(entry);
    result.target_sm = "sm" + std::to_string(result.sm);
    check_hidden_parameters(entry);
    result.resources = check_resources(entry);
    json const& symbol = entry.at("entry_symbol", "the kernel's symbol (a non-empty string)");
    if (!symbol.is_string() || symbol.get_ref<std::string const&>().empty()) {
        entry.fail_value<BundleError>(entry.where("entry_symbol"), symbol,
                                      "the kernel's symbol (a non-empty string)");
    }
    result.entry_symbol = symbol.get<std::string>();
    result.signature = check_signature(entry);
    check_specialization(entry, result.signature);
    result.file = check_file(entry, files);
    result.sha256 = entry.text("sha256", "the cubin's SHA-256 (64 lowercase hex digits)");
    if (!is_sha256_hex(result.sha256)) {
        entry.fail_value<BundleError>(entry.where("sha256"), json(result.sha256),
                                      "64 lowercase hex digits");
    }
    result.bytes = entry.integer("bytes", 0, "the cubin's length (an integer >= 0)");
    result.id = entry.optional_text("id");
    result.embedded_symbol = entry.optional_text("embedded_symbol");
    if (result.embedded_symbol && result.embedded_symbol->empty()) {
        entry.fail_value<BundleError>(entry.where("embedded_symbol"), json(""),
                                      "a symbol name (non-empty)");
    }
    result.source_sha256 = entry.optional_text("source_sha256");
    return result;
}

} // namespace

std::string ManifestEntry::kernel_name() const {
    std::string const prefix = target_sm + ".";
    if (id && id->starts_with(prefix) && id->size() > prefix.size()) {
        return id->substr(prefix.size());
    }
    return std::filesystem::path{file}.stem().string();
}

bool is_safe_relative_path(std::string_view path) noexcept {
    if (path.empty() || path.find('\0') != std::string_view::npos) {
        return false;
    }
    if (path.front() == '/' || path.front() == '\\') {
        return false; // POSIX root, Windows root or UNC share (\\srv\share, //srv/share)
    }
    if (path.size() >= 2 && path[1] == ':') {
        return false; // a Windows drive, with or without its root: C:x, C:/x, C:\x
    }
    // Under Windows rules both separators split; under POSIX only '/'. A ".." part in either
    // splitting is refused, so splitting at both covers the two.
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t end = path.find_first_of("/\\", start);
        if (end == std::string_view::npos) {
            end = path.size();
        }
        if (path.substr(start, end - start) == "..") {
            return false;
        }
        start = end + 1;
    }
    return true;
}

std::string bundle_sha256(nlohmann::json const& manifest, std::filesystem::path const& file) {
    if (!manifest.is_object()) {
        throw BundleError("bundle manifest '" + file.string() + "' is " + shown(manifest) +
                              ", expected an object",
                          file);
    }
    json without = manifest;
    without.erase("bundle_sha256");
    try {
        return sha256_hex(python_canonical_json(without));
    } catch (InvalidArgument const& error) {
        throw BundleError(
            "bundle manifest '" + file.string() + "' has no bundle digest: " + error.what(), file);
    }
}

BundleManifest parse_bundle_manifest(std::span<char const> bytes, std::filesystem::path const& file,
                                     EntryVisitor const& visit) {
    json document;
    try {
        document =
            parse_bounded_json(std::string_view(bytes.data(), bytes.size()),
                               {.max_bytes = kMaxManifestBytes, .max_values = kMaxManifestValues});
    } catch (JsonLimitError const& error) {
        throw BundleError("bundle manifest '" + file.string() + "' is not JSON: " + error.what(),
                          file);
    }
    Fields const root(document, file.string());
    if (!document.is_object()) {
        root.fail_value<BundleError>(root.place(), document, "an object with schema_version 1");
    }
    json const& version = root.at("schema_version", "the integer 1");
    if (!version.is_number_integer() || version != 1) {
        root.fail_value<BundleError>(root.where("schema_version"), version, "the integer 1");
    }
    json const& entries = root.at("entries", "a non-empty array of entries");
    if (!entries.is_array() || entries.empty()) {
        root.fail_value<BundleError>(root.where("entries"), entries,
                                     "a non-empty array of entries");
    }
    BundleManifest manifest;
    manifest.digest = bundle_sha256(document, file);
    if (json const* recorded = root.find("bundle_sha256"); recorded != nullptr) {
        if (!recorded->is_string() || *recorded != manifest.digest) {
            root.fail_value<BundleError>(root.where("bundle_sha256"), *recorded,
                                         "the manifest's digest " + manifest.digest);
        }
    }
    if (json const* producer = root.find("producer");
        producer != nullptr && producer->is_object()) {
        Fields const fields(*producer, root.where("producer"));
        manifest.triton_version = fields.optional_text("triton");
        manifest.ptxas_version = fields.optional_text("ptxas");
    }
    std::set<std::string> files;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        manifest.entries.push_back(check_entry(entries[i], i, file, files));
        if (visit) {
            visit(manifest.entries.back());
        }
    }
    return manifest;
}

BundleManifest read_bundle_manifest(std::filesystem::path const& directory,
                                    EntryVisitor const& visit) {
    std::filesystem::path const file = directory / manifest_file_name;
    if (!std::filesystem::is_regular_file(file)) {
        throw FileError("bundle directory '" + directory.string() + "' has no " +
                            manifest_file_name + " ('" + file.string() + "' does not exist)",
                        file, ENOENT);
    }
    auto const bytes = read_file_bytes(file, kMaxManifestBytes);
    if (!bytes) {
        throw BundleError("bundle manifest '" + file.string() + "' is larger than the limit of " +
                              std::to_string(kMaxManifestBytes) + " bytes",
                          file);
    }
    return parse_bundle_manifest(*bytes, file, visit);
}

std::vector<char> read_bundle_cubin(std::filesystem::path const& directory,
                                    ManifestEntry const& entry) {
    std::filesystem::path const path = directory / entry.file;
    std::string const where = "cubin '" + path.string() + "' of entry " +
                              std::to_string(entry.index) + " (field entries[" +
                              std::to_string(entry.index) + "].file)";
    if (!std::filesystem::is_regular_file(path)) {
        throw MissingCubinError(where + " does not exist", path);
    }
    if (!resolves_inside(path, directory)) {
        throw CorruptCubinError(where + " is a link to a file outside the bundle directory", path);
    }
    auto bytes = read_file_bytes(path, kMaxCubinBytes);
    if (!bytes) {
        throw CorruptCubinError(where + " is larger than the limit of " +
                                    std::to_string(kMaxCubinBytes) + " bytes",
                                path);
    }
    return std::move(*bytes);
}

} // namespace tensoracle::cubin
