// Checks a cubin bundle directory against its manifest and a plugin library against the bundle.
#include "tensoracle/bundle_inspect.hpp"

#include "tensoracle/bundle_report.hpp"
#include "tensoracle/cubin_elf.hpp"
#include "tensoracle/errors.hpp"
#include "tensoracle/file_bytes.hpp"
#include "tensoracle/hash.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <string_view>

namespace tensoracle::cubin {
namespace {

// The hidden parameters Triton 3.x appends after the public ones; both must need zero bytes.
constexpr std::array<std::string_view, 2> supported_hidden = {"global_scratch", "profile_scratch"};

// A plugin library is searched whole for the bundle it embeds.
constexpr std::uint64_t kMaxPluginBytes = std::uint64_t{2} << 30;

void check_abi(ManifestKernel const& kernel, std::filesystem::path const& manifest_path) {
    bool const hidden_ok = std::equal(kernel.hidden_args.begin(), kernel.hidden_args.end(),
                                      supported_hidden.begin(), supported_hidden.end());
    if (!hidden_ok) {
        throw BundleAbiError("kernel '" + kernel.name + "' in '" + manifest_path.string() +
                                 "' declares hidden arguments other than global_scratch, "
                                 "profile_scratch",
                             manifest_path);
    }
    if (kernel.global_scratch_bytes != 0 || kernel.profile_scratch_bytes != 0) {
        throw BundleAbiError("kernel '" + kernel.name + "' in '" + manifest_path.string() +
                                 "' needs scratch memory (global " +
                                 std::to_string(kernel.global_scratch_bytes) + " B, profile " +
                                 std::to_string(kernel.profile_scratch_bytes) +
                                 " B); only zero scratch is supported",
                             manifest_path);
    }
}

// Judges the bytes of `cubin`, read by read_bundle_cubin, against its manifest entry.
CubinCheck check_cubin(std::filesystem::path const& directory, ManifestKernel const& kernel,
                       ManifestCubin const& cubin, std::vector<char> const& bytes) {
    std::filesystem::path const path = directory / cubin.path;
    std::string const shown = path.string();
    if (bytes.size() != cubin.size) {
        throw CorruptCubinError("cubin '" + shown + "' is " + std::to_string(bytes.size()) +
                                    " bytes, bundle.json records " + std::to_string(cubin.size),
                                path);
    }
    std::span<std::byte const> const view = std::as_bytes(std::span{bytes});
    CubinElf const elf = read_cubin_elf(view, shown);
    std::string const label = std::filesystem::path{cubin.path}.parent_path().string();
    if (elf.sm != cubin.sm || label != "sm" + std::to_string(cubin.sm)) {
        throw FalseSmClaimError("cubin '" + shown + "' of kernel '" + kernel.name +
                                    "' is filed as " + label + " and listed as sm" +
                                    std::to_string(cubin.sm) + ", but its ELF header says sm" +
                                    std::to_string(elf.sm),
                                path);
    }
    std::string const digest = sha256_hex(view);
    if (digest != cubin.sha256) {
        throw CorruptCubinError("cubin '" + shown + "' has SHA-256 " + digest +
                                    ", bundle.json records " + cubin.sha256,
                                path);
    }
    CubinFunction const* function = elf.function(kernel.function);
    if (function == nullptr) {
        throw CorruptCubinError("cubin '" + shown + "' has no function '" + kernel.function +
                                    "' for kernel '" + kernel.name + "'",
                                path);
    }
    std::size_t const expected = kernel.args.size() + kernel.hidden_args.size();
    if (function->params.size() != expected) {
        throw BundleAbiError(
            "cubin '" + shown + "' declares " + std::to_string(function->params.size()) +
                " parameters for kernel '" + kernel.name + "', bundle.json " +
                std::to_string(expected) + " (" + std::to_string(kernel.args.size()) +
                " public + " + std::to_string(kernel.hidden_args.size()) + " hidden)",
            path);
    }
    for (std::size_t i = 0; i < kernel.args.size(); ++i) {
        if (function->params[i].size != arg_size(kernel.args[i].kind)) {
            throw BundleAbiError("cubin '" + shown + "' parameter " + std::to_string(i) + " ('" +
                                     kernel.args[i].name + "') of kernel '" + kernel.name +
                                     "' is " + std::to_string(function->params[i].size) +
                                     " bytes, its type " + kernel.args[i].type + " needs " +
                                     std::to_string(arg_size(kernel.args[i].kind)),
                                 path);
        }
    }
    return CubinCheck{
        kernel.name, cubin.sm, cubin.path, digest, bytes.size(), function->params.size(), false};
}

bool contains(std::vector<char> const& haystack, std::string_view needle) {
    std::boyer_moore_horspool_searcher const searcher(needle.begin(), needle.end());
    return std::search(haystack.begin(), haystack.end(), searcher) != haystack.end();
}

// `contents[i]` holds the bytes of `cubins[i]`, as check_cubin judged them.
void check_plugin(std::filesystem::path const& directory, std::filesystem::path const& plugin,
                  BundleManifest const& manifest, std::vector<CubinCheck>& cubins,
                  std::vector<std::vector<char>> const& contents) {
    if (!std::filesystem::is_regular_file(plugin)) {
        throw PluginBundleMismatchError("plugin library '" + plugin.string() + "' does not exist",
                                        plugin);
    }
    auto const read = read_file_bytes(plugin, kMaxPluginBytes);
    if (!read) {
        throw PluginBundleMismatchError("plugin library '" + plugin.string() +
                                            "' is larger than the limit of " +
                                            std::to_string(kMaxPluginBytes) + " bytes",
                                        plugin);
    }
    std::vector<char> const& library = *read;
    std::string_view const view{library.data(), library.size()};
    // Every marker followed by 64 hex digits names an embedded bundle; the prefix alone (as in a
    // library that merely contains the inspector) names none.
    std::vector<std::string> embedded;
    for (std::size_t at = view.find(embedded_marker_prefix); at != std::string_view::npos;
         at = view.find(embedded_marker_prefix, at + 1)) {
        std::string_view const digest = view.substr(at + embedded_marker_prefix.size(), 64);
        if (digest.size() == 64 && digest.find_first_not_of("0123456789abcdef") == digest.npos) {
            embedded.emplace_back(digest);
        }
    }
    if (embedded.empty()) {
        throw PluginBundleMismatchError(
            "plugin library '" + plugin.string() + "' embeds no tensoracle cubin bundle", plugin);
    }
    if (std::find(embedded.begin(), embedded.end(), manifest.sha256) == embedded.end()) {
        throw PluginBundleMismatchError("plugin library '" + plugin.string() + "' embeds bundle " +
                                            embedded.front() + ", but '" +
                                            (directory / manifest_file_name).string() +
                                            "' is bundle " + manifest.sha256,
                                        plugin);
    }
    for (std::size_t i = 0; i < cubins.size(); ++i) {
        CubinCheck& cubin = cubins[i];
        std::vector<char> const& bytes = contents[i];
        if (!contains(library, std::string_view{bytes.data(), bytes.size()})) {
            throw PluginBundleMismatchError("plugin library '" + plugin.string() +
                                                "' does not embed the bytes of cubin '" +
                                                cubin.path + "'",
                                            plugin);
        }
        cubin.in_plugin = true;
    }
}

} // namespace

BundleInspection inspect_bundle(std::filesystem::path const& directory,
                                std::optional<std::filesystem::path> const& plugin) {
    BundleInspection result{directory, read_bundle_manifest(directory), {}, plugin};
    std::filesystem::path const manifest_path = directory / manifest_file_name;
    std::vector<std::vector<char>> contents; // each cubin read once, for both checks
    for (ManifestKernel const& kernel : result.manifest.kernels) {
        check_abi(kernel, manifest_path);
        for (std::uint32_t target : result.manifest.targets) {
            bool const listed = std::any_of(kernel.cubins.begin(), kernel.cubins.end(),
                                            [&](ManifestCubin const& c) { return c.sm == target; });
            if (!listed) {
                throw MissingCubinError("kernel '" + kernel.name + "' in '" +
                                            manifest_path.string() + "' has no cubin for sm" +
                                            std::to_string(target) + ", a target of the bundle",
                                        manifest_path);
            }
        }
        for (ManifestCubin const& cubin : kernel.cubins) {
            contents.push_back(read_bundle_cubin(directory, kernel, cubin));
            result.cubins.push_back(check_cubin(directory, kernel, cubin, contents.back()));
        }
    }
    if (plugin) {
        check_plugin(directory, *plugin, result.manifest, result.cubins, contents);
    }
    return result;
}

nlohmann::json BundleInspection::to_json() const {
    nlohmann::json cubin_list = nlohmann::json::array();
    for (CubinCheck const& cubin : cubins) {
        nlohmann::json entry = {{"kernel", cubin.kernel}, {"sm", cubin.sm},
                                {"elf_sm", cubin.sm},     {"path", cubin.path},
                                {"sha256", cubin.sha256}, {"bytes", cubin.size},
                                {"params", cubin.params}};
        if (plugin) {
            entry["in_plugin"] = cubin.in_plugin;
        }
        cubin_list.push_back(std::move(entry));
    }
    nlohmann::json kernel_list = nlohmann::json::array();
    for (ManifestKernel const& kernel : manifest.kernels) {
        nlohmann::json args = nlohmann::json::array();
        for (ManifestArg const& arg : kernel.args) {
            args.push_back(
                {{"name", arg.name}, {"type", arg.type}, {"divisibility", arg.divisibility}});
        }
        kernel_list.push_back({{"name", kernel.name},
                               {"function", kernel.function},
                               {"source_sha256", kernel.source_sha256},
                               {"num_warps", kernel.num_warps},
                               {"args", std::move(args)},
                               {"hidden_args", kernel.hidden_args},
                               {"global_scratch_bytes", kernel.global_scratch_bytes},
                               {"profile_scratch_bytes", kernel.profile_scratch_bytes}});
    }
    return {{"ok", true},
            {"directory", directory.string()},
            {"bundle_sha256", manifest.sha256},
            {"triton", manifest.triton_version},
            {"ptxas", manifest.ptxas_version},
            {"targets", manifest.targets},
            {"kernels", std::move(kernel_list)},
            {"cubins", std::move(cubin_list)},
            {"plugin", plugin ? nlohmann::json(plugin->string()) : nlohmann::json(nullptr)}};
}

} // namespace tensoracle::cubin

namespace tensoracle::cubin {

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

} // namespace tensoracle::cubin
