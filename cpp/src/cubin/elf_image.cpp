// A bounds-checked ELF reader over bytes in memory (see elf_image.hpp). The layouts are those of
// the System V ABI's ELF32 and ELF64 file, section header and symbol structures.
#include "elf_image.hpp"

#include <string>

namespace tensoracle::detail {
namespace {

constexpr std::size_t kIdentSize = 16;
constexpr std::uint16_t kExtendedIndex = 0xffff; // SHN_XINDEX

[[noreturn]] void fail(std::string const& why) {
    throw ElfFormatError(why);
}

// Whether [offset, offset + size) lies inside a buffer of `total` bytes.
bool inside(std::uint64_t offset, std::uint64_t size, std::size_t total) noexcept {
    return offset <= total && size <= total - offset;
}

} // namespace

ElfImage::ElfImage(std::span<std::byte const> bytes) : bytes_(bytes) {
    auto const at = [&](std::size_t i) { return std::to_integer<unsigned>(bytes_[i]); };
    if (bytes_.size() < kIdentSize || at(0) != 0x7fU || at(1) != 'E' || at(2) != 'L' ||
        at(3) != 'F' || (at(4) != 1 && at(4) != 2) || (at(5) != 1 && at(5) != 2) || at(6) != 1) {
        fail("no ELF header");
    }
    header_.is_64 = at(4) == 2;
    header_.little_endian = at(5) == 1;
    header_.abi_version = static_cast<std::uint8_t>(at(8));
    std::size_t const header_size = header_.is_64 ? 64 : 52;
    if (bytes_.size() < header_size) {
        fail("the file is " + std::to_string(bytes_.size()) + " bytes, shorter than its " +
             std::to_string(header_size) + "-byte ELF header");
    }
    header_.type = u16(16);
    header_.machine = u16(18);
    std::uint64_t const table = header_.is_64 ? u64(40) : u32(32);
    header_.flags = u32(header_.is_64 ? 48 : 36);
    std::size_t const fields = header_.is_64 ? 58 : 46; // e_shentsize, e_shnum, e_shstrndx
    std::uint16_t const entry_size = u16(fields);
    std::uint64_t count = u16(fields + 2);
    std::uint64_t names = u16(fields + 4);
    if (table == 0) {
        return; // no section header table
    }
    std::size_t const expected_entry = header_.is_64 ? 64 : 40;
    if (entry_size != expected_entry) {
        fail("section headers are " + std::to_string(entry_size) + " bytes, expected " +
             std::to_string(expected_entry));
    }
    if (!inside(table, expected_entry, bytes_.size())) {
        fail("the section header table lies outside the file");
    }
    // Extended numbering: section 0 holds the count (sh_size) and the name table's index
    // (sh_link) when they do not fit the file header.
    if (count == 0) {
        count = word(table + (header_.is_64 ? 32 : 20));
    }
    if (names == kExtendedIndex) {
        names = u32(table + (header_.is_64 ? 40 : 24));
    }
    if (count > (bytes_.size() - table) / expected_entry) {
        fail("the section header table (" + std::to_string(count) +
             " entries) runs past the end of the file");
    }
    sections_.reserve(static_cast<std::size_t>(count));
    for (std::uint64_t i = 0; i < count; ++i) {
        std::uint64_t const base = table + i * expected_entry;
        ElfSection section;
        section.index = static_cast<std::size_t>(i);
        section.name = u32(base);
        section.type = u32(base + 4);
        if (header_.is_64) {
            section.address = u64(base + 16);
            section.offset = u64(base + 24);
            section.size = u64(base + 32);
            section.link = u32(base + 40);
            section.entry_size = u64(base + 56);
        } else {
            section.address = u32(base + 12);
            section.offset = u32(base + 16);
            section.size = u32(base + 20);
            section.link = u32(base + 24);
            section.entry_size = u32(base + 36);
        }
        sections_.push_back(section);
    }
    if (names >= sections_.size() && sections_.size() > 1) {
        fail("the section name table index " + std::to_string(names) + " names no section");
    }
    names_index_ = static_cast<std::size_t>(names);
}

std::span<ElfSection const> ElfImage::sections() const noexcept {
    if (sections_.empty()) {
        return {};
    }
    return std::span<ElfSection const>(sections_).subspan(1);
}

ElfSection const& ElfImage::section(std::size_t index) const {
    if (index == 0 || index >= sections_.size()) {
        fail("section " + std::to_string(index) + " does not exist");
    }
    return sections_[index];
}

std::span<std::byte const> ElfImage::contents(ElfSection const& section) const {
    if (section.type == kElfSectionNoBits) {
        return {};
    }
    if (!inside(section.offset, section.size, bytes_.size())) {
        fail("section " + std::to_string(section.index) + " lies outside the file");
    }
    return bytes_.subspan(static_cast<std::size_t>(section.offset),
                          static_cast<std::size_t>(section.size));
}

std::string_view ElfImage::section_name(ElfSection const& section) const {
    if (names_index_ == 0) {
        fail("no section name table");
    }
    return string(names_index_, section.name);
}

std::string_view ElfImage::string(std::size_t table_index, std::uint32_t offset) const {
    auto const table = contents(this->section(table_index));
    if (offset >= table.size()) {
        fail("a name lies outside its string table");
    }
    auto const* const begin = reinterpret_cast<char const*>(table.data());
    std::string_view const rest(begin + offset, table.size() - offset);
    auto const end = rest.find('\0');
    if (end == std::string_view::npos) {
        fail("a name in a string table is not NUL-terminated");
    }
    return rest.substr(0, end);
}

std::size_t ElfImage::symbol_count(ElfSection const& table) const {
    std::size_t const expected = header_.is_64 ? 24 : 16;
    if (table.entry_size != expected) {
        fail("symbol table entries are " + std::to_string(table.entry_size) + " bytes, expected " +
             std::to_string(expected));
    }
    return contents(table).size() / expected;
}

ElfSymbol ElfImage::symbol(ElfSection const& table, std::size_t index) const {
    if (index >= symbol_count(table)) {
        fail("symbol " + std::to_string(index) + " lies outside its table");
    }
    std::uint64_t const base = table.offset + index * table.entry_size;
    ElfSymbol symbol;
    symbol.name = u32(base);
    if (header_.is_64) {
        symbol.info = std::to_integer<std::uint8_t>(bytes_[static_cast<std::size_t>(base + 4)]);
        symbol.section = u16(base + 6);
        symbol.value = u64(base + 8);
        symbol.size = u64(base + 16);
    } else {
        symbol.value = u32(base + 4);
        symbol.size = u32(base + 8);
        symbol.info = std::to_integer<std::uint8_t>(bytes_[static_cast<std::size_t>(base + 12)]);
        symbol.section = u16(base + 14);
    }
    return symbol;
}

std::uint64_t ElfImage::unsigned_at(std::uint64_t offset, std::size_t width) const {
    if (!inside(offset, width, bytes_.size())) {
        fail("a field at byte " + std::to_string(offset) + " lies outside the file");
    }
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < width; ++i) {
        std::size_t const shift = header_.little_endian ? i : width - 1 - i;
        value |= std::uint64_t{std::to_integer<std::uint8_t>(
                     bytes_[static_cast<std::size_t>(offset) + i])}
                 << (8U * shift);
    }
    return value;
}

std::uint16_t ElfImage::u16(std::uint64_t offset) const {
    return static_cast<std::uint16_t>(unsigned_at(offset, 2));
}

std::uint32_t ElfImage::u32(std::uint64_t offset) const {
    return static_cast<std::uint32_t>(unsigned_at(offset, 4));
}

std::uint64_t ElfImage::u64(std::uint64_t offset) const {
    return unsigned_at(offset, 8);
}

std::uint64_t ElfImage::word(std::uint64_t offset) const {
    return header_.is_64 ? u64(offset) : u32(offset);
}

} // namespace tensoracle::detail
