// Reading an ELF shared library's exported symbols with libelf, from bytes in memory.
#include "tensoracle/cubin/library_exports.hpp"

#include "tensoracle/errors.hpp"

#include <functional>
#include <gelf.h>
#include <libelf.h>
#include <memory>

namespace tensoracle {
namespace {

struct ElfCloser {
    void operator()(Elf* elf) const noexcept { elf_end(elf); }
};

[[noreturn]] void refuse(std::string const& name, std::string const& why) {
    throw InvalidArgument("'" + name + "' is not a readable ELF shared library: " + why);
}

using SymbolVisitor = std::function<void(Elf*, GElf_Sym const&, char const*)>;

// Opens `library` and calls `visit` for every defined global or weak symbol of its .dynsym.
void for_each_exported(std::span<std::byte const> library, std::string const& name,
                       bool require_elf64_le, SymbolVisitor const& visit) {
    if (elf_version(EV_CURRENT) == EV_NONE) {
        refuse(name, "libelf is unusable");
    }
    // libelf reads the buffer in place and does not write it.
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): libelf takes a non-const image
    auto* image = const_cast<char*>(reinterpret_cast<char const*>(library.data()));
    std::unique_ptr<Elf, ElfCloser> const elf{elf_memory(image, library.size())};
    if (!elf || elf_kind(elf.get()) != ELF_K_ELF) {
        refuse(name, "no ELF header");
    }
    GElf_Ehdr header{};
    if (gelf_getehdr(elf.get(), &header) == nullptr) {
        refuse(name, elf_errmsg(-1));
    }
    if (require_elf64_le &&
        (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)) {
        refuse(name, "not a 64-bit little-endian ELF file");
    }
    if (header.e_type != ET_DYN) {
        refuse(name, "not a shared object (ELF type " + std::to_string(header.e_type) + ")");
    }
    for (Elf_Scn* section = elf_nextscn(elf.get(), nullptr); section != nullptr;
         section = elf_nextscn(elf.get(), section)) {
        GElf_Shdr section_header{};
        if (gelf_getshdr(section, &section_header) == nullptr) {
            refuse(name, elf_errmsg(-1));
        }
        if (section_header.sh_type != SHT_DYNSYM || section_header.sh_entsize == 0) {
            continue;
        }
        Elf_Data* data = elf_getdata(section, nullptr);
        if (data == nullptr) {
            refuse(name, elf_errmsg(-1));
        }
        std::size_t const count = section_header.sh_size / section_header.sh_entsize;
        for (std::size_t i = 0; i < count; ++i) {
            GElf_Sym symbol{};
            if (gelf_getsym(data, static_cast<int>(i), &symbol) == nullptr) {
                refuse(name, "symbol " + std::to_string(i) + " of .dynsym cannot be read");
            }
            unsigned const binding = GELF_ST_BIND(symbol.st_info);
            if ((binding != STB_GLOBAL && binding != STB_WEAK) || symbol.st_shndx == SHN_UNDEF) {
                continue;
            }
            char const* text = elf_strptr(elf.get(), section_header.sh_link, symbol.st_name);
            if (text == nullptr) {
                refuse(name, "a symbol name lies outside the string table");
            }
            visit(elf.get(), symbol, text);
        }
    }
}

} // namespace

std::vector<std::string> elf_exported_functions(std::span<std::byte const> library,
                                                std::string const& name) {
    std::vector<std::string> functions;
    for_each_exported(library, name, false, [&](Elf*, GElf_Sym const& symbol, char const* text) {
        if (GELF_ST_TYPE(symbol.st_info) == STT_FUNC) {
            functions.emplace_back(text);
        }
    });
    return functions;
}

std::map<std::string, ExportedData> elf_exported_data(std::span<std::byte const> library,
                                                      std::string const& name) {
    std::map<std::string, ExportedData> symbols;
    for_each_exported(library, name, true, [&](Elf* elf, GElf_Sym const& symbol, char const* text) {
        if (GELF_ST_TYPE(symbol.st_info) != STT_OBJECT || symbol.st_shndx >= SHN_LORESERVE) {
            return;
        }
        Elf_Scn* holder = elf_getscn(elf, symbol.st_shndx);
        GElf_Shdr section{};
        if (holder == nullptr || gelf_getshdr(holder, &section) == nullptr) {
            refuse(name, "symbol '" + std::string{text} + "' names section " +
                             std::to_string(symbol.st_shndx) + ", which does not exist");
        }
        if (section.sh_type == SHT_NOBITS) {
            return; // zero-initialised data: no bytes in the file
        }
        bool const inside_section =
            symbol.st_value >= section.sh_addr &&
            symbol.st_value - section.sh_addr <= section.sh_size &&
            symbol.st_size <= section.sh_size - (symbol.st_value - section.sh_addr);
        std::uint64_t const offset = section.sh_offset + (symbol.st_value - section.sh_addr);
        if (!inside_section || offset > library.size() ||
            symbol.st_size > library.size() - offset) {
            refuse(name, "the bytes of symbol '" + std::string{text} +
                             "' lie outside its section or the file");
        }
        symbols[text] = ExportedData{symbol.st_size, offset};
    });
    return symbols;
}

} // namespace tensoracle
