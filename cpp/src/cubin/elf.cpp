// Cubin ELF reading: SM from the header flags, kernels and their parameter tables.
#include "cubin/elf.hpp"

#include "elf_image.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>

namespace tensoracle::cubin {
namespace {

constexpr std::uint16_t machine_cuda = 190;    // EM_CUDA
constexpr unsigned char elf_class_64 = 2;      // ELFCLASS64
constexpr unsigned char elf_little_endian = 1; // ELFDATA2LSB
// Attribute formats and the one attribute we read from .nv.info.<kernel> sections.
constexpr unsigned char format_none = 0x01;
constexpr unsigned char format_byte = 0x02;
constexpr unsigned char format_half = 0x03;
constexpr unsigned char format_sized = 0x04;
constexpr unsigned char attribute_max_threads = 0x05;      // .maxntid x, y, z
constexpr unsigned char attribute_required_threads = 0x10; // .reqntid x, y, z
constexpr unsigned char attribute_param_info = 0x17;
constexpr std::string_view text_prefix = ".text.";
constexpr std::string_view info_prefix = ".nv.info.";

[[noreturn]] void corrupt(std::string const& path, std::string const& why) {
    throw CorruptCubinError("cubin '" + path + "' is not a usable CUDA ELF image: " + why, path);
}

std::uint32_t read_u16(unsigned char const* p) {
    return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8U);
}

std::uint32_t read_u32(unsigned char const* p) {
    return read_u16(p) | (read_u16(p + 2) << 16U);
}

struct KernelInfo {
    std::vector<CubinParam> params;
    std::optional<std::uint32_t> block_threads;
};

// Walks the attribute list of one .nv.info.<kernel> section and collects its parameter entries
// and the block size it was compiled for.
KernelInfo read_info(std::span<unsigned char const> info, std::string const& path,
                     std::string const& section) {
    KernelInfo result;
    std::vector<CubinParam>& params = result.params;
    std::size_t pos = 0;
    while (pos < info.size()) {
        if (info.size() - pos < 4) {
            corrupt(path, "truncated attribute at byte " + std::to_string(pos) + " of " + section);
        }
        unsigned char const format = info[pos];
        unsigned char const attribute = info[pos + 1];
        if (format == format_none || format == format_byte || format == format_half) {
            pos += 4;
            continue;
        }
        if (format != format_sized) {
            corrupt(path, "unknown attribute format " + std::to_string(format) + " in " + section);
        }
        std::size_t const size = read_u16(info.data() + pos + 2);
        if (info.size() - pos - 4 < size) {
            corrupt(path, "attribute at byte " + std::to_string(pos) + " of " + section +
                              " runs past the section");
        }
        unsigned char const* payload = info.data() + pos + 4;
        if (attribute == attribute_param_info) {
            if (size < 12) {
                corrupt(path, "parameter entry shorter than 12 bytes in " + section);
            }
            params.push_back(CubinParam{read_u16(payload + 4), read_u16(payload + 6),
                                        (read_u32(payload + 8) >> 18U) & 0x3fffU});
        } else if ((attribute == attribute_required_threads ||
                    (attribute == attribute_max_threads && !result.block_threads)) &&
                   size >= 12) {
            std::uint64_t const threads =
                std::uint64_t{read_u32(payload)} * read_u32(payload + 4) * read_u32(payload + 8);
            if (threads == 0 || threads > 0xffffffffU) {
                corrupt(path, "block size " + std::to_string(threads) + " in " + section);
            }
            result.block_threads = static_cast<std::uint32_t>(threads);
        }
        pos += 4 + size;
    }
    std::sort(params.begin(), params.end(),
              [](CubinParam const& a, CubinParam const& b) { return a.ordinal < b.ordinal; });
    for (std::size_t i = 0; i < params.size(); ++i) {
        if (params[i].ordinal != i) {
            corrupt(path, "parameter ordinals of " + section + " are not 0.." +
                              std::to_string(params.size() - 1));
        }
    }
    return result;
}

// Attaches each .nv.info.<kernel> section's parameters to its kernel.
CubinElf with_infos(CubinElf result, std::vector<std::pair<std::string, KernelInfo>>& infos,
                    std::string const& path) {
    for (auto& info : infos) {
        auto found = std::find_if(result.functions.begin(), result.functions.end(),
                                  [&](CubinFunction const& f) { return f.name == info.first; });
        if (found != result.functions.end()) {
            found->params = std::move(info.second.params);
            found->block_threads = info.second.block_threads;
        }
    }
    if (result.functions.empty()) {
        corrupt(path, "no kernel code section (.text.<kernel>)");
    }
    return result;
}

} // namespace

std::uint32_t cubin_sm(std::span<std::byte const> bytes, std::span<std::uint32_t const> allowed,
                       std::string const& path) {
    auto const refuse = [&](std::string const& why) {
        throw CubinArchitectureError("cubin '" + path + "': " + why, path);
    };
    if (bytes.size() < 64) {
        refuse("is " + std::to_string(bytes.size()) +
               " bytes, shorter than a 64-byte ELF64 header");
    }
    auto const* p = reinterpret_cast<unsigned char const*>(bytes.data());
    if (p[0] != 0x7f || p[1] != 'E' || p[2] != 'L' || p[3] != 'F' || p[4] != elf_class_64 ||
        p[5] != elf_little_endian) {
        refuse("is not a 64-bit little-endian ELF image");
    }
    std::uint32_t const machine = read_u16(p + 18);
    if (machine != machine_cuda) {
        refuse("has e_machine " + std::to_string(machine) + ", expected 190 (EM_CUDA)");
    }
    std::uint32_t const abi = p[8]; // e_ident[EI_ABIVERSION]
    std::uint32_t const flags = read_u32(p + 48);
    std::uint32_t sm = 0;
    if (abi == 7) {
        sm = (flags >> 16U) & 0xffU;
    } else if (abi == 8) {
        sm = (flags >> 8U) & 0xffU;
    } else {
        refuse("has EI_ABIVERSION " + std::to_string(abi) + ", expected 7 or 8");
    }
    if (std::find(allowed.begin(), allowed.end(), sm) == allowed.end()) {
        std::string names;
        for (std::uint32_t const each : allowed) {
            names += (names.empty() ? "sm" : ", sm") + std::to_string(each);
        }
        refuse("is built for sm" + std::to_string(sm) + ", expected one of " + names);
    }
    return sm;
}

CubinFunction const* CubinElf::function(std::string_view name) const noexcept {
    auto found = std::find_if(functions.begin(), functions.end(),
                              [&](CubinFunction const& f) { return f.name == name; });
    return found == functions.end() ? nullptr : &*found;
}

CubinElf read_cubin_elf(std::span<std::byte const> bytes, std::string const& path) {
    if (bytes.empty()) {
        corrupt(path, "the file is empty");
    }
    try {
        detail::ElfImage const elf(bytes);
        auto const& header = elf.header();
        if (!header.is_64 || header.machine != machine_cuda) {
            corrupt(path, "e_machine is " + std::to_string(header.machine) + ", not EM_CUDA (190)");
        }
        CubinElf result{};
        result.abi_version = header.abi_version;
        // The same rule as cubin_sm(): ABI 8 keeps the SM in the second byte of e_flags, ABI 7
        // in the third.
        result.sm = result.abi_version == 8   ? (header.flags >> 8U) & 0xffU
                    : result.abi_version == 7 ? (header.flags >> 16U) & 0xffU
                                              : 0;
        std::vector<std::pair<std::string, KernelInfo>> infos;
        for (auto const& section : elf.sections()) {
            std::string_view const name = elf.section_name(section);
            if (name.starts_with(text_prefix)) {
                result.functions.push_back(
                    CubinFunction{std::string{name.substr(text_prefix.size())}, {}, std::nullopt});
            } else if (name.starts_with(info_prefix)) {
                auto const data = elf.contents(section);
                if (section.type == detail::kElfSectionNoBits) {
                    corrupt(path, "section " + std::string{name} + " has no data");
                }
                std::span<unsigned char const> const info{
                    reinterpret_cast<unsigned char const*>(data.data()), data.size()};
                infos.emplace_back(std::string{name.substr(info_prefix.size())},
                                   read_info(info, path, std::string{name}));
            }
        }
        return with_infos(std::move(result), infos, path);
    } catch (detail::ElfFormatError const& error) {
        corrupt(path, error.what());
    }
}

} // namespace tensoracle::cubin
