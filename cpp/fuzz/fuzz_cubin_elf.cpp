// libFuzzer target: read_cubin_elf must either accept the bytes or throw CorruptCubinError; what
// it accepts names at least one kernel, and each kernel's parameters are numbered 0..n-1.
#include "cubin/elf.hpp"
#include "tensoracle/errors.hpp"

#include <cstdint>
#include <cstdlib>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
    auto const bytes = std::as_bytes(std::span(data, size));
    try {
        auto const elf = tensoracle::cubin::read_cubin_elf(bytes, "fuzz.cubin");
        if (elf.functions.empty()) {
            std::abort();
        }
        for (auto const& function : elf.functions) {
            for (std::size_t i = 0; i < function.params.size(); ++i) {
                if (function.params[i].ordinal != i) {
                    std::abort();
                }
            }
            if (elf.function(function.name) == nullptr) {
                std::abort();
            }
        }
    } catch (tensoracle::CorruptCubinError const&) {
        // The expected outcome for a damaged image; every other exception is a finding.
    }
    return 0;
}
