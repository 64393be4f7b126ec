// libFuzzer target: parse_bundle_manifest must either accept the bytes or throw BundleError.
// What it accepts must hold exactly the JSON's values (no silent narrowing) and name only cubin
// paths inside the bundle directory, filed under their own SM and kernel.
#include "tensoracle/bundle_manifest.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    std::span<char const> const bytes(reinterpret_cast<char const*>(data), size);
    try {
        auto const manifest = tensoracle::cubin::parse_bundle_manifest(bytes, "fuzz/bundle.json");
        auto const document = nlohmann::json::parse(bytes.begin(), bytes.end());
        auto const& targets = document.at("targets");
        if (targets.size() != manifest.targets.size()) {
            std::abort();
        }
        for (std::size_t i = 0; i < targets.size(); ++i) {
            if (targets[i].get<std::uint64_t>() != manifest.targets[i]) {
                std::abort(); // a target number changed on the way in
            }
        }
        for (auto const& kernel : manifest.kernels) {
            for (auto const& cubin : kernel.cubins) {
                std::filesystem::path const path{cubin.path};
                if (path.is_absolute() ||
                    std::any_of(path.begin(), path.end(),
                                [](auto const& part) { return part == ".." || part == "."; }) ||
                    cubin.path != "sm" + std::to_string(cubin.sm) + "/" + kernel.name + ".cubin") {
                    std::abort(); // a path that could lead outside the bundle directory
                }
            }
        }
    } catch (tensoracle::BundleError const&) {
        // The expected outcome for a damaged manifest; every other exception is a finding.
    }
    return 0;
}
