// Checks a cubin bundle directory against its manifest and a plugin library against the bundle.
#include "cubin/bundle_inspect.hpp"

#include "cubin/bundle_reader.hpp"
#include "cubin/bundle_report.hpp"
#include "cubin/elf.hpp"
#include "cubin/library_exports.hpp"
#include "io/file_bytes.hpp"
#include "io/hash.hpp"
#include "tensoracle/errors.hpp"
#include "text/bounded_json.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace tensoracle::cubin {
namespace {

// A plugin library is read whole to find its exported symbols.
constexpr std::uint64_t kMaxPluginBytes = std::uint64_t{2} << 30;
constexpr char const* digest_symbol = "tensoracle_bundle_sha256";
constexpr std::size_t digest_symbol_bytes = 65; // 64 hex digits and a NUL
constexpr std::uint32_t hidden_parameter_bytes = 8;

std::string entry_label(ManifestEntry const& entry) {
    return "entry " + std::to_string(entry.index) + " ('" + entry.file + "')";
}

// The 1.x checks of one entry's cubin bytes: length, SHA-256, then the SM of its ELF header.
void check_cubin_bytes(std::filesystem::path const& directory, ManifestEntry const& entry,
                       std::vector<char> const& bytes) {
    std::filesystem::path const path = directory / entry.file;
    std::string const where = "cubin '" + path.string() + "' of entry " +
                              std::to_string(entry.index) + " (field entries[" +
                              std::to_string(entry.index) + "]";
    // The refusal's field: the entry's member in bundle.json.
    std::string const field = "entries[" + std::to_string(entry.index) + "].";
    if (bytes.size() != entry.bytes) {
        throw CorruptCubinError(where + ".bytes) is " + std::to_string(bytes.size()) +
                                    " bytes long, expected " + std::to_string(entry.bytes),
                                Refusal{.subject = path.string(),
                                        .field = field + "bytes",
                                        .observed = std::to_string(bytes.size()),
                                        .expected = std::to_string(entry.bytes)});
    }
    std::span<std::byte const> const view = std::as_bytes(std::span{bytes});
    std::string const digest = sha256_hex(view);
    if (digest != entry.sha256) {
        throw CorruptCubinError(where + ".sha256) has SHA-256 " + digest + ", expected " +
                                    entry.sha256,
                                Refusal{.subject = path.string(),
                                        .field = field + "sha256",
                                        .observed = digest,
                                        .expected = entry.sha256});
    }
    std::uint32_t const sm = cubin_sm(view, kSmsInspected, path.string());
    if (sm != entry.sm) {
        throw CubinArchitectureError(where + ".target_sm) is built for sm" + std::to_string(sm) +
                                         ", expected " + entry.target_sm,
                                     Refusal{.subject = path.string(),
                                             .field = field + "target_sm",
                                             .observed = "sm" + std::to_string(sm),
                                             .expected = entry.target_sm});
    }
}

// What 1.x does not check: the kernel is in the cubin, with the manifest's parameter layout.
std::size_t check_cubin_kernel(std::filesystem::path const& directory, ManifestEntry const& entry,
                               std::vector<char> const& bytes) {
    std::filesystem::path const path = directory / entry.file;
    std::string const shown = path.string();
    CubinElf const elf = read_cubin_elf(std::as_bytes(std::span{bytes}), shown);
    CubinFunction const* function = elf.function(entry.entry_symbol);
    if (function == nullptr) {
        throw CorruptCubinError(
            "cubin '" + shown + "' of entry " + std::to_string(entry.index) +
                " has no kernel function '" + entry.entry_symbol + "' (field entries[" +
                std::to_string(entry.index) + "].entry_symbol)",
            Refusal{.subject = path.string(),
                    .field = "entries[" + std::to_string(entry.index) + "].entry_symbol",
                    .observed = "no kernel function '" + entry.entry_symbol + "'",
                    .expected = "a kernel function '" + entry.entry_symbol + "'"});
    }
    std::size_t const expected = entry.signature.size() + 2;
    if (function->params.size() != expected) {
        throw BundleAbiError(
            "cubin '" + shown + "' declares " + std::to_string(function->params.size()) +
                " parameters for kernel '" + entry.entry_symbol + "', expected " +
                std::to_string(expected) + " (" + std::to_string(entry.signature.size()) +
                " signature arguments and 2 scratch pointers)",
            path);
    }
    for (std::size_t i = 0; i < expected; ++i) {
        bool const hidden = i >= entry.signature.size();
        std::uint32_t const size =
            hidden ? hidden_parameter_bytes : arg_size(entry.signature[i].kind);
        if (function->params[i].size != size) {
            std::string const what = hidden ? "hidden scratch parameter"
                                            : "argument '" + entry.signature[i].name + "' (" +
                                                  entry.signature[i].type + ")";
            std::string message = "cubin '" + shown + "' parameter " + std::to_string(i) + ", ";
            message += what;
            throw BundleAbiError(message + " of kernel '" + entry.entry_symbol + "', is " +
                                     std::to_string(function->params[i].size) +
                                     " bytes, expected " + std::to_string(size),
                                 path);
        }
    }
    return function->params.size();
}

[[noreturn]] void mismatch(std::filesystem::path const& plugin, std::string const& why) {
    throw PluginBundleMismatchError("plugin library '" + plugin.string() + "' " + why, plugin);
}

void check_plugin(BundleInspection& result, std::vector<std::vector<char>> const& contents) {
    std::filesystem::path const& plugin = *result.plugin;
    if (!std::filesystem::is_regular_file(plugin)) {
        mismatch(plugin, "does not exist or is not a file");
    }
    std::optional<std::vector<char>> read;
    try {
        read = read_file_bytes(plugin, kMaxPluginBytes);
    } catch (FileError const& error) {
        mismatch(plugin, std::string{"cannot be read: "} + error.what());
    }
    if (!read) {
        mismatch(plugin,
                 "is larger than the limit of " + std::to_string(kMaxPluginBytes) + " bytes");
    }
    std::span<std::byte const> const library = std::as_bytes(std::span{*read});
    std::map<std::string, ExportedData> symbols;
    try {
        symbols = elf_exported_data(library, plugin.string());
    } catch (InvalidArgument const& error) {
        mismatch(plugin, std::string{"has no readable bundle identity: "} + error.what() +
                             " (only ELF .dynsym tables are read; PE export tables are not "
                             "supported)");
    }
    auto const bytes_of = [&](ExportedData const& data) {
        return library.subspan(static_cast<std::size_t>(data.offset),
                               static_cast<std::size_t>(data.size));
    };
    auto const identity = symbols.find(digest_symbol);
    if (identity == symbols.end() || identity->second.size != digest_symbol_bytes) {
        mismatch(plugin, std::string{"does not export the bundle identity '"} + digest_symbol +
                             "' (" + std::to_string(digest_symbol_bytes) + " bytes): found " +
                             (identity == symbols.end()
                                  ? std::string{"no such data symbol"}
                                  : std::to_string(identity->second.size) + " bytes"));
    }
    auto const raw = bytes_of(identity->second);
    std::string value(reinterpret_cast<char const*>(raw.data()), raw.size());
    while (!value.empty() && value.back() == '\0') {
        value.pop_back();
    }
    if (value != result.digest()) {
        mismatch(plugin, std::string{"exports "} + digest_symbol + " = '" + value +
                             "', expected the digest of '" +
                             (result.directory / manifest_file_name).string() +
                             "': " + result.digest());
    }
    for (EntryCheck& check : result.entries) {
        ManifestEntry const& entry = result.manifest.entries[check.index];
        if (!entry.embedded_symbol) {
            continue;
        }
        std::vector<char> const& cubin = contents[check.index];
        auto const found = symbols.find(*entry.embedded_symbol);
        std::string const label =
            "the embedded cubin '" + *entry.embedded_symbol + "' of " + entry_label(entry);
        if (found == symbols.end()) {
            mismatch(plugin, "does not export " + label + " (field entries[" +
                                 std::to_string(entry.index) + "].embedded_symbol)");
        }
        if (found->second.size != cubin.size()) {
            mismatch(plugin, "exports " + label + " with " + std::to_string(found->second.size) +
                                 " bytes, expected " + std::to_string(cubin.size()));
        }
        auto const embedded = bytes_of(found->second);
        if (!std::equal(embedded.begin(), embedded.end(),
                        reinterpret_cast<std::byte const*>(cubin.data()))) {
            mismatch(plugin, "exports " + label + " with other bytes than the cubin file");
        }
        check.in_plugin = true;
    }
    for (EntryCheck& check : result.entries) {
        if (!check.in_plugin) {
            check.in_plugin = false;
        }
    }
}

} // namespace

BundleInspection inspect_bundle(std::filesystem::path const& directory,
                                std::optional<std::filesystem::path> const& plugin) {
    std::vector<std::vector<char>> contents; // each cubin read once, for every check
    BundleInspection result{directory, {}, {}, plugin};
    result.manifest = read_bundle_manifest(directory, [&](ManifestEntry const& entry) {
        contents.push_back(read_bundle_cubin(directory, entry));
        check_cubin_bytes(directory, entry, contents.back());
    });
    for (ManifestEntry const& entry : result.manifest.entries) {
        std::size_t const params = check_cubin_kernel(directory, entry, contents[entry.index]);
        result.entries.push_back(EntryCheck{entry.index, params, std::nullopt});
    }
    if (plugin) {
        check_plugin(result, contents);
    }
    return result;
}

nlohmann::json BundleInspection::to_json() const {
    nlohmann::json list = nlohmann::json::array();
    auto const optional = [](std::optional<std::string> const& value) {
        return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
    };
    for (EntryCheck const& check : entries) {
        ManifestEntry const& entry = manifest.entries[check.index];
        nlohmann::json signature = nlohmann::json::array();
        for (ManifestArg const& arg : entry.signature) {
            signature.push_back(
                {{"name", arg.name}, {"type", arg.type}, {"divisibility", arg.divisibility}});
        }
        list.push_back(
            {{"index", entry.index},
             {"id", optional(entry.id)},
             {"kernel", entry.kernel_name()},
             {"target_sm", entry.target_sm},
             {"file", entry.file},
             {"bytes", entry.bytes},
             {"sha256", entry.sha256},
             {"entry_symbol", entry.entry_symbol},
             {"embedded_symbol", optional(entry.embedded_symbol)},
             {"signature", std::move(signature)},
             {"params", check.params},
             {"registers_per_thread", entry.resources.registers_per_thread},
             {"compiled_shared_memory_bytes", entry.resources.compiled_shared_memory_bytes},
             {"launch_dynamic_shared_memory_bytes",
              entry.resources.launch_dynamic_shared_memory_bytes},
             {"source_sha256", optional(entry.source_sha256)},
             {"in_plugin",
              check.in_plugin ? nlohmann::json(*check.in_plugin) : nlohmann::json(nullptr)}});
    }
    return {{"ok", true},
            {"directory", directory.string()},
            {"bundle_sha256", manifest.digest},
            {"schema_version", 1},
            {"producer",
             {{"triton", optional(manifest.triton_version)},
              {"ptxas", optional(manifest.ptxas_version)}}},
            {"plugin", plugin ? nlohmann::json(plugin->string()) : nlohmann::json(nullptr)},
            {"entries", std::move(list)}};
}

std::string inspect_bundle_report(std::string const& directory,
                                  std::optional<std::string> const& plugin) {
    std::optional<std::filesystem::path> library;
    if (plugin) {
        library = *plugin;
    }
    // Paths are bytes on POSIX: one that is not UTF-8 is shown with U+FFFD, never refused.
    return inspect_bundle(directory, library)
        .to_json()
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string bundle_sha256_of_text(std::string const& manifest) {
    std::filesystem::path const where{"<manifest>"};
    nlohmann::json document;
    try {
        document = parse_bounded_json(
            manifest, {.max_bytes = kMaxManifestBytes, .max_values = kMaxManifestValues});
    } catch (JsonLimitError const& error) {
        throw BundleError(std::string{"bundle manifest is not JSON: "} + error.what(), where);
    }
    return bundle_sha256(document, where);
}

} // namespace tensoracle::cubin
