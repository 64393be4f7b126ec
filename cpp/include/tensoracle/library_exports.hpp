// The symbols a shared library exports, read from its file without loading it: a plugin library
// is checked for TensorRT's entry point before any of its code (constructors included) can run.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace tensoracle {

// The defined, global or weak function symbols of an ELF shared library's dynamic symbol table
// (.dynsym), in table order. Throws InvalidArgument naming `name` when the bytes are not an ELF
// shared object or its table cannot be read.
std::vector<std::string> elf_exported_functions(std::span<std::byte const> library,
                                                std::string const& name);

} // namespace tensoracle
