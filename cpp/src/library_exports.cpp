// Reading an ELF shared library's exported functions with libelf, from bytes in memory.
#include "tensoracle/library_exports.hpp"

#include "tensoracle/errors.hpp"

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

} // namespace

std::vector<std::string> elf_exported_functions(std::span<std::byte const> library,
                                                std::string const& name) {
    if (elf_version(EV_CURRENT) == EV_NONE) {
        refuse(name, "libelf is unusable");
    }
    // libelf reads the buffer in place; ELF_C_READ_MMAP is not needed for memory images.
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
    if (header.e_type != ET_DYN) {
        refuse(name, "not a shared object (ELF type " + std::to_string(header.e_type) + ")");
    }
    std::vector<std::string> functions;
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
            bool const exported = (binding == STB_GLOBAL || binding == STB_WEAK) &&
                                  GELF_ST_TYPE(symbol.st_info) == STT_FUNC &&
                                  symbol.st_shndx != SHN_UNDEF;
            if (!exported) {
                continue;
            }
            char const* text = elf_strptr(elf.get(), section_header.sh_link, symbol.st_name);
            if (text == nullptr) {
                refuse(name, "a symbol name lies outside the string table");
            }
            functions.emplace_back(text);
        }
    }
    return functions;
}

} // namespace tensoracle
