// libFuzzer target: parse_bundle_manifest (schema version 1) must either accept the bytes or throw
// BundleError. What it accepts must hold exactly the JSON's values (no silent narrowing), name
// only safe relative cubin paths, each once, and carry the digest bundle_sha256() gives.
#include "cubin/bundle_reader.hpp"
#include "tensoracle/cubin/bundle_manifest.hpp"
#include "tensoracle/errors.hpp"
#include "text/bounded_json.hpp"

#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <span>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    namespace cubin = tensoracle::cubin;
    std::span<char const> const bytes(reinterpret_cast<char const*>(data), size);
    try {
        std::size_t visited = 0;
        auto const manifest = cubin::parse_bundle_manifest(
            bytes, "fuzz/bundle.json", [&](cubin::ManifestEntry const& entry) {
                if (entry.index != visited++) {
                    std::abort(); // entries visited out of order
                }
            });
        // An accepted manifest parsed within the limits once, so it does again.
        auto const document = tensoracle::parse_bounded_json(
            std::string_view(bytes.data(), bytes.size()),
            {.max_bytes = cubin::kMaxManifestBytes, .max_values = cubin::kMaxManifestValues});
        auto const& entries = document.at("entries");
        if (entries.size() != manifest.entries.size() || visited != entries.size() ||
            manifest.digest != cubin::bundle_sha256(document, "fuzz")) {
            std::abort();
        }
        std::set<std::string> files;
        for (std::size_t i = 0; i < entries.size(); ++i) {
            auto const& entry = manifest.entries[i];
            if (!cubin::is_safe_relative_path(entry.file) || !files.insert(entry.file).second ||
                entries[i].at("file") != entry.file ||
                entries[i].at("bytes").get<std::uint64_t>() != entry.bytes ||
                entries[i].at("target_sm") != "sm" + std::to_string(entry.sm) ||
                entry.signature.empty() || entry.signature.size() > cubin::kMaxSignatureArgs) {
                std::abort(); // a value changed on the way in, or an unsafe path passed
            }
        }
    } catch (tensoracle::BundleError const&) {
        // The expected outcome for a damaged manifest; every other exception is a finding.
    }
    return 0;
}
