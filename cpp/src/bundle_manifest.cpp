// Reading bundle.json into typed records, and loading a whole bundle directory into memory.
#include "tensoracle/bundle_manifest.hpp"

#include "tensoracle/bounded_json.hpp"
#include "tensoracle/cubin_elf.hpp"
#include "tensoracle/errors.hpp"
#include "tensoracle/file_bytes.hpp"
#include "tensoracle/hash.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

namespace tensoracle::cubin {
namespace {

using nlohmann::json;

std::string limit_text(std::uint64_t bytes) {
    return std::to_string(bytes) + " bytes";
}

// Typed access to one JSON object, with errors naming the file and the field's JSON pointer.
class Fields {
public:
    Fields(json const& object, std::string pointer, std::filesystem::path const& file)
        : object_(object), pointer_(std::move(pointer)), file_(file) {
        if (!object_.is_object()) {
            fail(pointer_, "is not an object");
        }
    }

    json const& at(char const* key) const {
        auto found = object_.find(key);
        if (found == object_.end()) {
            fail(pointer_ + "/" + key, "is missing");
        }
        return *found;
    }
    std::string text(char const* key) const {
        json const& value = at(key);
        if (!value.is_string()) {
            fail(pointer_ + "/" + key, "is not a string");
        }
        return value.get<std::string>();
    }
    std::uint64_t number(char const* key) const {
        json const& value = at(key);
        if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<long>() >= 0)) {
            fail(pointer_ + "/" + key, "is not a non-negative integer");
        }
        return value.get<std::uint64_t>();
    }
    std::uint32_t small(char const* key) const {
        std::uint64_t const value = number(key);
        if (value > 0xffffffffU) {
            fail(pointer_ + "/" + key, "is out of range");
        }
        return static_cast<std::uint32_t>(value);
    }
    json const& array(char const* key) const {
        json const& value = at(key);
        if (!value.is_array()) {
            fail(pointer_ + "/" + key, "is not an array");
        }
        return value;
    }
    std::string const& pointer() const noexcept { return pointer_; }

    [[noreturn]] void fail(std::string const& where, std::string const& why) const {
        throw BundleError("bundle manifest '" + file_.string() + "': field " + where + " " + why,
                          file_);
    }

private:
    json const& object_;
    std::string pointer_;
    std::filesystem::path const& file_;
};

bool is_identifier(std::string_view name) noexcept {
    auto const letter = [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    };
    if (name.empty() || !letter(name.front())) {
        return false;
    }
    return std::all_of(name.begin(), name.end(),
                       [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

} // namespace

ArgType parse_arg_type(std::string const& triton_type, std::filesystem::path const& where) {
    if (triton_type.starts_with("*")) {
        return ArgType::pointer;
    }
    if (triton_type == "i32") {
        return ArgType::i32;
    }
    if (triton_type == "i64") {
        return ArgType::i64;
    }
    if (triton_type == "fp32") {
        return ArgType::f32;
    }
    if (triton_type == "fp64") {
        return ArgType::f64;
    }
    throw BundleAbiError("argument type '" + triton_type + "' in '" + where.string() +
                             "' is not supported (use a pointer, i32, i64, fp32 or fp64)",
                         where);
}

BundleManifest read_bundle_manifest(std::filesystem::path const& directory) {
    std::filesystem::path const file = directory / manifest_file_name;
    if (!std::filesystem::is_regular_file(file)) {
        throw BundleError(
            "bundle directory '" + directory.string() + "' has no " + manifest_file_name, file);
    }
    auto const bytes = read_file_bytes(file, kMaxManifestBytes);
    if (!bytes) {
        throw BundleError("bundle manifest '" + file.string() + "' is larger than the limit of " +
                              limit_text(kMaxManifestBytes),
                          file);
    }
    return parse_bundle_manifest(*bytes, file);
}

BundleManifest parse_bundle_manifest(std::span<char const> bytes,
                                     std::filesystem::path const& file) {
    json document;
    try {
        document = parse_bounded_json(std::string_view(bytes.data(), bytes.size()),
                                      {.max_bytes = kMaxManifestBytes});
    } catch (JsonLimitError const& error) {
        throw BundleError("bundle manifest '" + file.string() + "' is not JSON: " + error.what(),
                          file);
    }
    Fields const root(document, "", file);
    BundleManifest manifest;
    manifest.sha256 = sha256_hex(std::as_bytes(bytes));
    if (root.text("format") != "tensoracle-cubin-bundle" || root.number("version") != 1) {
        root.fail("/format", "is not tensoracle-cubin-bundle version 1");
    }
    Fields const producer(root.at("producer"), "/producer", file);
    manifest.triton_version = producer.text("triton");
    manifest.ptxas_version = producer.text("ptxas");
    for (json const& target : root.array("targets")) {
        if (!target.is_number_unsigned() || target.get<std::uint64_t>() > 0xffffffffU) {
            root.fail("/targets", "holds a value that is not an SM number");
        }
        auto const sm = target.get<std::uint32_t>();
        if (std::find(manifest.targets.begin(), manifest.targets.end(), sm) !=
            manifest.targets.end()) {
            root.fail("/targets", "names sm" + std::to_string(sm) + " twice");
        }
        manifest.targets.push_back(sm);
    }
    if (manifest.targets.empty()) {
        root.fail("/targets", "is empty: a bundle is built for at least one SM");
    }
    json const& kernels = root.array("kernels");
    if (kernels.empty()) {
        root.fail("/kernels", "is empty: a bundle holds at least one kernel");
    }
    std::set<std::string> kernel_names;
    for (std::size_t k = 0; k < kernels.size(); ++k) {
        Fields const entry(kernels[k], "/kernels/" + std::to_string(k), file);
        ManifestKernel kernel;
        kernel.name = entry.text("name");
        if (!is_identifier(kernel.name)) {
            entry.fail(entry.pointer() + "/name", "is not a C identifier");
        }
        if (!kernel_names.insert(kernel.name).second) {
            entry.fail(entry.pointer() + "/name", "repeats the kernel name '" + kernel.name + "'");
        }
        kernel.function = entry.text("function");
        kernel.source_sha256 = entry.text("source_sha256");
        kernel.num_warps = entry.small("num_warps");
        kernel.global_scratch_bytes = entry.number("global_scratch_bytes");
        kernel.profile_scratch_bytes = entry.number("profile_scratch_bytes");
        for (json const& hidden : entry.array("hidden_args")) {
            if (!hidden.is_string()) {
                entry.fail(entry.pointer() + "/hidden_args", "holds a value that is not a string");
            }
            kernel.hidden_args.push_back(hidden.get<std::string>());
        }
        json const& args = entry.array("args");
        for (std::size_t a = 0; a < args.size(); ++a) {
            Fields const arg(args[a], entry.pointer() + "/args/" + std::to_string(a), file);
            std::string type = arg.text("type");
            ArgType const kind = parse_arg_type(type, file);
            std::uint32_t const divisibility = arg.small("divisibility");
            if (divisibility == 0) {
                arg.fail(arg.pointer() + "/divisibility", "is 0");
            }
            kernel.args.push_back(
                ManifestArg{arg.text("name"), std::move(type), kind, divisibility});
        }
        json const& cubins = entry.array("cubins");
        for (std::size_t c = 0; c < cubins.size(); ++c) {
            Fields const cubin(cubins[c], entry.pointer() + "/cubins/" + std::to_string(c), file);
            ManifestCubin record{cubin.small("sm"),        cubin.text("path"),
                                 cubin.text("sha256"),     cubin.number("bytes"),
                                 cubin.small("registers"), cubin.small("shared_bytes")};
            // The one layout the producer writes; anything else could name a file outside the
            // bundle directory.
            std::string const expected =
                "sm" + std::to_string(record.sm) + "/" + kernel.name + ".cubin";
            if (record.path != expected) {
                cubin.fail(cubin.pointer() + "/path", "is not " + expected);
            }
            bool const repeated =
                std::any_of(kernel.cubins.begin(), kernel.cubins.end(),
                            [&](ManifestCubin const& other) { return other.sm == record.sm; });
            if (repeated) {
                cubin.fail(cubin.pointer() + "/sm", "lists a second cubin for sm" +
                                                        std::to_string(record.sm) + " of kernel '" +
                                                        kernel.name + "'");
            }
            kernel.cubins.push_back(std::move(record));
        }
        manifest.kernels.push_back(std::move(kernel));
    }
    return manifest;
}

std::vector<char> read_bundle_cubin(std::filesystem::path const& directory,
                                    ManifestKernel const& kernel, ManifestCubin const& cubin) {
    std::filesystem::path const path = directory / cubin.path;
    std::string const shown = path.string();
    if (!std::filesystem::is_regular_file(path)) {
        throw MissingCubinError("cubin '" + shown + "' of kernel '" + kernel.name + "' (sm" +
                                    std::to_string(cubin.sm) + ") is missing",
                                path);
    }
    if (!resolves_inside(path, directory)) {
        throw CorruptCubinError("cubin '" + shown + "' of kernel '" + kernel.name +
                                    "' is a link to a file outside the bundle directory",
                                path);
    }
    auto bytes = read_file_bytes(path, kMaxCubinBytes);
    if (!bytes) {
        throw CorruptCubinError("cubin '" + shown + "' is larger than the limit of " +
                                    limit_text(kMaxCubinBytes),
                                path);
    }
    return std::move(*bytes);
}

LoadedBundle::LoadedBundle(std::filesystem::path const& directory)
    : manifest_(read_bundle_manifest(directory)) {
    for (ManifestKernel const& kernel : manifest_.kernels) {
        std::vector<ArgSpec> args;
        for (ManifestArg const& arg : kernel.args) {
            args.push_back(ArgSpec{arg.name, arg.type, arg.kind, arg.divisibility});
        }
        args_.push_back(std::move(args));
        std::vector<CubinImage> images;
        for (ManifestCubin const& cubin : kernel.cubins) {
            std::vector<char> const raw = read_bundle_cubin(directory, kernel, cubin);
            bytes_.emplace_back(raw.begin(), raw.end());
            images.push_back(
                CubinImage{cubin.sm, cubin.sha256, std::span{bytes_.back()}, cubin.shared_bytes});
        }
        images_.push_back(std::move(images));
    }
    // Spans into the vectors are taken only now that none of them grows any more.
    std::size_t image_index = 0;
    for (std::size_t k = 0; k < manifest_.kernels.size(); ++k) {
        ManifestKernel const& kernel = manifest_.kernels[k];
        for (CubinImage& image : images_[k]) {
            image.bytes = std::span{bytes_[image_index++]};
        }
        kernels_.push_back(KernelRecord{kernel.name, kernel.function, kernel.source_sha256,
                                        kernel.num_warps,
                                        static_cast<std::uint32_t>(kernel.hidden_args.size()),
                                        std::span{args_[k]}, std::span{images_[k]}});
    }
    record_ = BundleRecord{manifest_.sha256, std::span{kernels_}};
}

} // namespace tensoracle::cubin
