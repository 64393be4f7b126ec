// The symbols a shared library exports, read from its file without loading it: a plugin library
// is checked for TensorRT's entry point, and against the bundle it embeds, before any of its code
// (constructors included) can run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace tensoracle {

// The defined, global or weak function symbols of an ELF shared library's dynamic symbol table
// (.dynsym), in table order. Throws InvalidArgument naming `name` when the bytes are not an ELF
// shared object or its table cannot be read.
std::vector<std::string> elf_exported_functions(std::span<std::byte const> library,
                                                std::string const& name);

// Where the bytes of an exported data symbol lie in the library file.
struct ExportedData {
    std::uint64_t size;   // st_size
    std::uint64_t offset; // file offset: the holding section's sh_offset + (st_value - sh_addr)
};

// The defined, global or weak data (STT_OBJECT) symbols of a 64-bit little-endian ELF shared
// library's .dynsym whose bytes lie in the file (not in a NOBITS section such as .bss), by name.
// Every returned range lies inside `library`. Throws InvalidArgument naming `name` when the bytes
// are not such a library or its table cannot be read.
std::map<std::string, ExportedData> elf_exported_data(std::span<std::byte const> library,
                                                      std::string const& name);

} // namespace tensoracle
