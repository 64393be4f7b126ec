// Cubin ELF reading with libelf: SM from the header flags, kernels and their parameter tables.
#include "tensoracle/cubin_elf.hpp"

#include "tensoracle/errors.hpp"

#include <algorithm>
#include <cstring>
#include <gelf.h>
#include <libelf.h>
#include <memory>

namespace tensoracle::cubin {
namespace {

constexpr std::uint16_t machine_cuda = 190; // EM_CUDA
// Attribute formats and the one attribute we read from .nv.info.<kernel> sections.
constexpr unsigned char format_none = 0x01;
constexpr unsigned char format_byte = 0x02;
constexpr unsigned char format_half = 0x03;
constexpr unsigned char format_sized = 0x04;
constexpr unsigned char attribute_param_info = 0x17;
constexpr std::string_view text_prefix = ".text.";
constexpr std::string_view info_prefix = ".nv.info.";

[[noreturn]] void corrupt(std::string const& path, std::string const& why) {
    throw CorruptCubinError("cubin '" + path + "' is not a usable CUDA ELF image: " + why, path);
}

struct ElfCloser {
    void operator()(Elf* elf) const noexcept { elf_end(elf); }
};

std::uint32_t read_u16(unsigned char const* p) {
    return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8U);
}

std::uint32_t read_u32(unsigned char const* p) {
    return read_u16(p) | (read_u16(p + 2) << 16U);
}

// Walks the attribute list of one .nv.info.<kernel> section and collects its parameter entries.
std::vector<CubinParam> read_params(std::span<unsigned char const> info, std::string const& path,
                                    std::string const& section) {
    std::vector<CubinParam> params;
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
    return params;
}

} // namespace

CubinFunction const* CubinElf::function(std::string_view name) const noexcept {
    auto found = std::find_if(functions.begin(), functions.end(),
                              [&](CubinFunction const& f) { return f.name == name; });
    return found == functions.end() ? nullptr : &*found;
}

CubinElf read_cubin_elf(std::span<std::byte const> bytes, std::string const& path) {
    if (elf_version(EV_CURRENT) == EV_NONE) {
        corrupt(path, std::string{"libelf cannot start: "} + elf_errmsg(-1));
    }
    if (bytes.empty()) {
        corrupt(path, "the file is empty");
    }
    // libelf wants a mutable buffer; cubins are small, so a private copy is cheap.
    std::vector<char> image(bytes.size());
    std::memcpy(image.data(), bytes.data(), bytes.size());
    std::unique_ptr<Elf, ElfCloser> elf{elf_memory(image.data(), image.size())};
    if (!elf || elf_kind(elf.get()) != ELF_K_ELF) {
        corrupt(path, "no ELF header");
    }
    GElf_Ehdr header;
    if (gelf_getehdr(elf.get(), &header) == nullptr) {
        corrupt(path, std::string{"unreadable ELF header: "} + elf_errmsg(-1));
    }
    if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_machine != machine_cuda) {
        corrupt(path, "e_machine is " + std::to_string(header.e_machine) + ", not EM_CUDA (190)");
    }
    CubinElf result{};
    result.abi_version = header.e_ident[EI_ABIVERSION];
    // From CUDA ELF ABI version 8 on the SM sits in the second byte of e_flags; before, in the
    // first.
    result.sm = result.abi_version >= 8 ? (header.e_flags >> 8U) & 0xffU : header.e_flags & 0xffU;

    std::size_t names_index = 0;
    if (elf_getshdrstrndx(elf.get(), &names_index) != 0) {
        corrupt(path, "no section name table");
    }
    std::vector<std::pair<std::string, std::vector<CubinParam>>> infos;
    for (Elf_Scn* section = elf_nextscn(elf.get(), nullptr); section != nullptr;
         section = elf_nextscn(elf.get(), section)) {
        GElf_Shdr section_header;
        if (gelf_getshdr(section, &section_header) == nullptr) {
            corrupt(path, "unreadable section header");
        }
        char const* raw_name = elf_strptr(elf.get(), names_index, section_header.sh_name);
        if (raw_name == nullptr) {
            corrupt(path, "section name outside the name table");
        }
        std::string_view const name{raw_name};
        if (name.starts_with(text_prefix)) {
            result.functions.push_back(
                CubinFunction{std::string{name.substr(text_prefix.size())}, {}});
        } else if (name.starts_with(info_prefix)) {
            Elf_Data* data = elf_getdata(section, nullptr);
            if (data == nullptr || data->d_buf == nullptr) {
                corrupt(path, "section " + std::string{name} + " has no data");
            }
            std::span<unsigned char const> info{static_cast<unsigned char const*>(data->d_buf),
                                                data->d_size};
            infos.emplace_back(std::string{name.substr(info_prefix.size())},
                               read_params(info, path, std::string{name}));
        }
    }
    for (auto& info : infos) {
        auto found = std::find_if(result.functions.begin(), result.functions.end(),
                                  [&](CubinFunction const& f) { return f.name == info.first; });
        if (found != result.functions.end()) {
            found->params = std::move(info.second);
        }
    }
    if (result.functions.empty()) {
        corrupt(path, "no kernel code section (.text.<kernel>)");
    }
    return result;
}

} // namespace tensoracle::cubin
