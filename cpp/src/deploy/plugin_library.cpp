// Verified plugin libraries (see plugin_library.hpp).
#include "tensoracle/deploy/plugin_library.hpp"

#include "io/file_contents.hpp"
#include "io/hash.hpp"
#include "tensoracle/errors.hpp"
#include "text/bounded_json.hpp"
#include "text/json_excerpt.hpp"
#include "text/message_text.hpp"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <span>
#include <utility>

#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace tensoracle::deploy {
namespace {

#if defined(__linux__)
std::string listed(std::vector<std::string> const& digests) {
    if (digests.empty()) {
        return "none";
    }
    return joined(digests, ", ");
}

class Descriptor {
public:
    explicit Descriptor(int descriptor) noexcept : descriptor_(descriptor) {}
    Descriptor(Descriptor const&) = delete;
    Descriptor& operator=(Descriptor const&) = delete;
    Descriptor(Descriptor&&) = delete;
    Descriptor& operator=(Descriptor&&) = delete;
    ~Descriptor() {
        if (descriptor_ >= 0) {
            (void)::close(descriptor_);
        }
    }
    int get() const noexcept { return descriptor_; }
    int release() noexcept { return std::exchange(descriptor_, -1); }

private:
    int descriptor_;
};

// A sealed in-memory file holding `bytes`: nobody can write, grow or shrink it any more.
int sealed_copy(std::span<std::byte const> bytes, std::filesystem::path const& path) {
    Descriptor copy(::memfd_create("tensoracle-plugin", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (copy.get() < 0) {
        throw FileError("cannot make the in-memory copy of plugin library '" + path.string() + "'",
                        path, errno);
    }
    std::size_t written = 0;
    while (written < bytes.size()) {
        ssize_t const wrote = ::write(copy.get(), bytes.data() + written, bytes.size() - written);
        if (wrote < 0 && errno == EINTR) {
            continue;
        }
        if (wrote <= 0) {
            throw FileError("cannot write the in-memory copy of plugin library '" + path.string() +
                                "'",
                            path, errno);
        }
        written += static_cast<std::size_t>(wrote);
    }
    if (::fcntl(copy.get(), F_ADD_SEALS,
                F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
        throw FileError("cannot seal the in-memory copy of plugin library '" + path.string() + "'",
                        path, errno);
    }
    return copy.release();
}
#endif

} // namespace

std::vector<std::string> recorded_plugins(ManifestEntry const& entry) {
    nlohmann::json conditions;
    try {
        conditions =
            parse_bounded_json(entry.conditions_json, {.max_bytes = entry.conditions_json.size()});
    } catch (JsonLimitError const& error) {
        throw InvalidArgument(entry.file_name + ": conditions_json is not JSON: " + error.what());
    }
    if (!conditions.is_object()) {
        throw InvalidArgument(entry.file_name + ": conditions_json is " + json_excerpt(conditions) +
                              ", not a JSON object");
    }
    auto const found = conditions.find("plugins");
    if (found == conditions.end() || found->is_null()) {
        return {};
    }
    std::string const field = entry.file_name + ": conditions.plugins";
    if (!found->is_array()) {
        throw InvalidArgument(field + " is " + json_excerpt(*found) +
                              ", not a list of SHA-256 digests");
    }
    std::vector<std::string> digests;
    for (auto const& digest : *found) {
        if (!digest.is_string() || digest.get_ref<std::string const&>().size() != 64) {
            throw InvalidArgument(field + " holds " + json_excerpt(digest) +
                                  ", not a SHA-256 digest (64 hex digits)");
        }
        digests.push_back(digest.get<std::string>());
    }
    return digests;
}

VerifiedPluginLibrary VerifiedPluginLibrary::open(std::filesystem::path const& path,
                                                  ManifestEntry const& entry) {
#if defined(__linux__)
    std::vector<std::string> const recorded = recorded_plugins(entry);
    Descriptor const file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (file.get() < 0) {
        throw FileError("cannot open plugin library '" + path.string() + "'", path, errno);
    }
    struct stat status {};
    if (::fstat(file.get(), &status) != 0) {
        throw FileError("cannot stat plugin library '" + path.string() + "'", path, errno);
    }
    if (!S_ISREG(status.st_mode)) {
        throw FileError("plugin library '" + path.string() + "' is not a regular file", path);
    }
    Sha256 hash;
    FileContents const contents(file.get(), path,
                                [&hash](std::span<std::byte const> piece) { hash.update(piece); });
    std::string digest = hash.hex_digest();
    if (std::find(recorded.begin(), recorded.end(), digest) == recorded.end()) {
        throw EngineConditionError("plugin library '" + path.string() + "' has SHA-256 " + digest +
                                       ", which the entry " + entry.file_name +
                                       " was not built with (its plugins: " + listed(recorded) +
                                       "): pass the libraries it was built with",
                                   path);
    }
    return {path, std::move(digest), sealed_copy(contents.bytes(), path)};
#else
    (void)entry;
    throw Error("plugin library '" + path.string() +
                "': loading a verified copy needs a sealed in-memory file, which only Linux "
                "offers; on this system load the libraries yourself");
#endif
}

VerifiedPluginLibrary::VerifiedPluginLibrary(std::filesystem::path path, std::string sha256,
                                             int descriptor)
    : path_(std::move(path)), sha256_(std::move(sha256)),
      loader_path_("/proc/self/fd/" + std::to_string(descriptor)), descriptor_(descriptor) {}

VerifiedPluginLibrary::VerifiedPluginLibrary(VerifiedPluginLibrary&& other) noexcept
    : path_(std::move(other.path_)), sha256_(std::move(other.sha256_)),
      loader_path_(std::move(other.loader_path_)),
      descriptor_(std::exchange(other.descriptor_, -1)) {}

VerifiedPluginLibrary& VerifiedPluginLibrary::operator=(VerifiedPluginLibrary&& other) noexcept {
    if (this != &other) {
        VerifiedPluginLibrary released(std::move(*this));
        path_ = std::move(other.path_);
        sha256_ = std::move(other.sha256_);
        loader_path_ = std::move(other.loader_path_);
        descriptor_ = std::exchange(other.descriptor_, -1);
    }
    return *this;
}

VerifiedPluginLibrary::~VerifiedPluginLibrary() {
#if defined(__linux__)
    if (descriptor_ >= 0) {
        (void)::close(descriptor_);
    }
#endif
}

std::vector<VerifiedPluginLibrary> verify_plugins(ManifestEntry const& entry,
                                                  std::vector<std::filesystem::path> const& paths,
                                                  std::string_view passed_in) {
    std::vector<VerifiedPluginLibrary> verified;
    verified.reserve(paths.size());
    for (auto const& path : paths) {
        verified.push_back(VerifiedPluginLibrary::open(path, entry));
    }
    for (std::string const& digest : recorded_plugins(entry)) {
        bool const given = std::any_of(verified.begin(), verified.end(), [&](auto const& library) {
            return library.sha256() == digest;
        });
        if (!given) {
            throw EngineConditionError(
                "the entry " + entry.file_name + " was built with the plugin library of SHA-256 " +
                    digest + ", which none of the " + std::to_string(paths.size()) +
                    " libraries given is: pass it in " + std::string(passed_in),
                entry.file_name);
        }
    }
    return verified;
}

} // namespace tensoracle::deploy
