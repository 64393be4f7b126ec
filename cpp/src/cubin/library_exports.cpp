// Reading an ELF shared library's exported symbols from bytes in memory (elf_image.hpp).
#include "cubin/library_exports.hpp"

#include "elf_image.hpp"
#include "tensoracle/errors.hpp"

#include <functional>

namespace tensoracle {
namespace {

using detail::ElfImage;
using detail::ElfSymbol;

[[noreturn]] void refuse(std::string const& name, std::string const& why) {
    throw InvalidArgument("'" + name + "' is not a readable ELF shared library: " + why);
}

using SymbolVisitor = std::function<void(ElfImage const&, ElfSymbol const&, std::string_view)>;

// Reads `library` and calls `visit` for every defined global or weak symbol of its .dynsym.
void for_each_exported(std::span<std::byte const> library, std::string const& name,
                       bool require_elf64_le, SymbolVisitor const& visit) {
    try {
        ElfImage const elf(library);
        auto const& header = elf.header();
        if (require_elf64_le && (!header.is_64 || !header.little_endian)) {
            refuse(name, "not a 64-bit little-endian ELF file");
        }
        if (header.type != detail::kElfTypeSharedObject) {
            refuse(name, "not a shared object (ELF type " + std::to_string(header.type) + ")");
        }
        for (auto const& section : elf.sections()) {
            if (section.type != detail::kElfSectionDynamicSymbols || section.entry_size == 0) {
                continue;
            }
            std::size_t const count = elf.symbol_count(section);
            for (std::size_t i = 0; i < count; ++i) {
                ElfSymbol const symbol = elf.symbol(section, i);
                unsigned const binding = symbol.binding();
                if ((binding != detail::kElfBindGlobal && binding != detail::kElfBindWeak) ||
                    symbol.section == detail::kElfSectionUndefined) {
                    continue;
                }
                visit(elf, symbol, elf.string(section.link, symbol.name));
            }
        }
    } catch (detail::ElfFormatError const& error) {
        refuse(name, error.what());
    }
}

} // namespace

std::vector<std::string> elf_exported_functions(std::span<std::byte const> library,
                                                std::string const& name) {
    std::vector<std::string> functions;
    for_each_exported(library, name, false,
                      [&](ElfImage const&, ElfSymbol const& symbol, std::string_view text) {
                          if (symbol.kind() == detail::kElfTypeFunction) {
                              functions.emplace_back(text);
                          }
                      });
    return functions;
}

std::map<std::string, ExportedData> elf_exported_data(std::span<std::byte const> library,
                                                      std::string const& name) {
    std::map<std::string, ExportedData> symbols;
    for_each_exported(
        library, name, true,
        [&](ElfImage const& elf, ElfSymbol const& symbol, std::string_view text) {
            if (symbol.kind() != detail::kElfTypeObject ||
                symbol.section >= detail::kElfSectionReservedLow) {
                return;
            }
            if (symbol.section >= elf.sections().size() + 1) {
                refuse(name, "symbol '" + std::string{text} + "' names section " +
                                 std::to_string(symbol.section) + ", which does not exist");
            }
            auto const& section = elf.section(symbol.section);
            if (section.type == detail::kElfSectionNoBits) {
                return; // zero-initialised data: no bytes in the file
            }
            bool const inside_section =
                symbol.value >= section.address && symbol.value - section.address <= section.size &&
                symbol.size <= section.size - (symbol.value - section.address);
            std::uint64_t const offset = section.offset + (symbol.value - section.address);
            if (!inside_section || offset > library.size() ||
                symbol.size > library.size() - offset) {
                refuse(name, "the bytes of symbol '" + std::string{text} +
                                 "' lie outside its section or the file");
            }
            symbols[std::string{text}] = ExportedData{symbol.size, offset};
        });
    return symbols;
}

} // namespace tensoracle
