// Private to the core: a read-only view of an ELF file in memory, with only what the cubin
// reader and the library export reader need (the file header, the section headers, section
// contents, string tables and symbols). ELF32 and ELF64, either byte order. Every offset and size
// read from the file is checked against the buffer before it is used; a violation throws
// ElfFormatError with the reason, which the callers wrap in their own error naming the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace tensoracle::detail {

class ElfFormatError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

inline constexpr std::uint32_t kElfSectionSymbols = 2;          // SHT_SYMTAB
inline constexpr std::uint32_t kElfSectionDynamicSymbols = 11;  // SHT_DYNSYM
inline constexpr std::uint32_t kElfSectionNoBits = 8;           // SHT_NOBITS
inline constexpr std::uint16_t kElfSectionUndefined = 0;        // SHN_UNDEF
inline constexpr std::uint16_t kElfSectionReservedLow = 0xff00; // SHN_LORESERVE
inline constexpr std::uint16_t kElfTypeSharedObject = 3;        // ET_DYN
inline constexpr unsigned kElfBindGlobal = 1;                   // STB_GLOBAL
inline constexpr unsigned kElfBindWeak = 2;                     // STB_WEAK
inline constexpr unsigned kElfTypeObject = 1;                   // STT_OBJECT
inline constexpr unsigned kElfTypeFunction = 2;                 // STT_FUNC

struct ElfHeader {
    bool is_64 = false;
    bool little_endian = false;
    std::uint8_t abi_version = 0; // e_ident[EI_ABIVERSION]
    std::uint16_t type = 0;       // e_type
    std::uint16_t machine = 0;    // e_machine
    std::uint32_t flags = 0;      // e_flags
};

struct ElfSection {
    std::size_t index = 0;
    std::uint32_t name = 0; // offset in the section name table
    std::uint32_t type = 0;
    std::uint64_t address = 0;
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
    std::uint32_t link = 0;
    std::uint64_t entry_size = 0;
};

struct ElfSymbol {
    std::uint32_t name = 0; // offset in the symbol table's linked string table
    std::uint8_t info = 0;
    std::uint16_t section = 0; // st_shndx
    std::uint64_t value = 0;
    std::uint64_t size = 0;

    unsigned binding() const noexcept { return static_cast<unsigned>(info) >> 4U; }
    unsigned kind() const noexcept { return static_cast<unsigned>(info) & 0xfU; }
};

class ElfImage {
public:
    // Reads the file header and the section header table. The bytes are not copied: they must
    // outlive the image.
    explicit ElfImage(std::span<std::byte const> bytes);

    ElfHeader const& header() const noexcept { return header_; }
    // Every section but the null section 0, in table order.
    std::span<ElfSection const> sections() const noexcept;
    // The section with index `index` (0 < index < the section count).
    ElfSection const& section(std::size_t index) const;
    // The section's bytes in the file; a SHT_NOBITS section has none.
    std::span<std::byte const> contents(ElfSection const& section) const;
    // The section's name from the section name table.
    std::string_view section_name(ElfSection const& section) const;
    // The NUL-terminated string at `offset` of the string table section `table_index`.
    std::string_view string(std::size_t table_index, std::uint32_t offset) const;
    // The number of symbols in a symbol table section, and symbol `index` of it.
    std::size_t symbol_count(ElfSection const& table) const;
    ElfSymbol symbol(ElfSection const& table, std::size_t index) const;

private:
    std::uint16_t u16(std::uint64_t offset) const;
    std::uint32_t u32(std::uint64_t offset) const;
    std::uint64_t u64(std::uint64_t offset) const;
    // A 32-bit value in ELF32 files, a 64-bit one in ELF64 files.
    std::uint64_t word(std::uint64_t offset) const;
    std::uint64_t unsigned_at(std::uint64_t offset, std::size_t width) const;

    std::span<std::byte const> bytes_;
    ElfHeader header_;
    std::vector<ElfSection> sections_; // index 0 is the null section
    std::size_t names_index_ = 0;
};

} // namespace tensoracle::detail
