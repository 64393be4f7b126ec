// A bundle directory loaded into the runtime's records: entries grouped by kernel, one image per
// SM, with the launch needs each entry's resources and cubin record.
#include "cubin/bundle_reader.hpp"
#include "cubin/elf.hpp"
#include "tensoracle/cubin/bundle_manifest.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>

namespace tensoracle::cubin {
namespace {

// Threads per block when a cubin records none: the 1.x producer compiles with num_warps=4.
constexpr std::uint32_t kDefaultBlockThreads = 4 * 32;

bool same_signature(std::vector<ArgSpec> const& a, std::vector<ManifestArg> const& b) {
    return std::equal(
        a.begin(), a.end(), b.begin(), b.end(), [](ArgSpec const& x, ManifestArg const& y) {
            return x.name == y.name && x.triton_type == y.type && x.divisibility == y.divisibility;
        });
}

} // namespace

LoadedBundle::LoadedBundle(std::filesystem::path const& directory)
    : manifest_(read_bundle_manifest(directory)) {
    std::filesystem::path const file = directory / manifest_file_name;
    std::vector<std::string> names;
    for (ManifestEntry const& entry : manifest_.entries) {
        std::vector<char> const raw = read_bundle_cubin(directory, entry);
        bytes_.emplace_back(raw.begin(), raw.end());
        CubinElf const elf = read_cubin_elf(std::as_bytes(std::span{raw}), entry.file);
        CubinFunction const* function = elf.function(entry.entry_symbol);
        std::string const name = entry.kernel_name();
        auto group = std::find_if(groups_.begin(), groups_.end(),
                                  [&](Kernel const& kernel) { return kernel.name == name; });
        if (group == groups_.end()) {
            Kernel kernel{name, {}, {}};
            for (ManifestArg const& arg : entry.signature) {
                kernel.args.push_back(ArgSpec{arg.name, arg.type, arg.kind, arg.divisibility});
            }
            groups_.push_back(std::move(kernel));
            group = groups_.end() - 1;
        } else if (!same_signature(group->args, entry.signature)) {
            throw BundleError("bundle manifest '" + file.string() + "': entry " +
                                  std::to_string(entry.index) + " of kernel '" + name +
                                  "' has another signature or specialization than the "
                                  "kernel's first entry",
                              file);
        }
        bool const repeated = std::any_of(group->images.begin(), group->images.end(),
                                          [&](CubinImage const& i) { return i.sm == entry.sm; });
        if (repeated) {
            throw BundleError("bundle manifest '" + file.string() + "': entry " +
                                  std::to_string(entry.index) + " is a second " + entry.target_sm +
                                  " image of kernel '" + name + "'",
                              file);
        }
        std::uint32_t const threads = function != nullptr && function->block_threads
                                          ? *function->block_threads
                                          : kDefaultBlockThreads;
        group->images.push_back(CubinImage{
            entry.sm,
            entry.sha256,
            {},
            static_cast<std::uint32_t>(entry.resources.launch_dynamic_shared_memory_bytes),
            entry.entry_symbol,
            static_cast<std::uint32_t>(entry.resources.registers_per_thread),
            threads});
    }
    // Spans into the vectors are taken only now that none of them grows any more. Images are
    // filled in manifest order, so the n-th image over all groups in entry order is bytes_[n].
    std::vector<std::size_t> taken(groups_.size(), 0);
    for (std::size_t e = 0; e < manifest_.entries.size(); ++e) {
        std::string const name = manifest_.entries[e].kernel_name();
        auto const g = static_cast<std::size_t>(
            std::find_if(groups_.begin(), groups_.end(),
                         [&](Kernel const& kernel) { return kernel.name == name; }) -
            groups_.begin());
        groups_[g].images[taken[g]++].bytes = std::span{bytes_[e]};
    }
    for (Kernel& group : groups_) {
        ManifestEntry const* first = nullptr;
        for (ManifestEntry const& entry : manifest_.entries) {
            if (first == nullptr && entry.kernel_name() == group.name) {
                first = &entry;
            }
        }
        std::string_view const source = first != nullptr && first->source_sha256
                                            ? std::string_view{*first->source_sha256}
                                            : std::string_view{};
        kernels_.push_back(
            KernelRecord{group.name, source, 2, std::span{group.args}, std::span{group.images}});
    }
    record_ = BundleRecord{manifest_.digest, std::span{kernels_}};
}

} // namespace tensoracle::cubin
