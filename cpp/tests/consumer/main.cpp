// Uses the installed core: the cubin runtime's argument records, a bundle directory that is not
// there, and a comparison of two small arrays. Every public header of the core is included (the
// old name of the cubin runtime's header too), so that one missing from the install fails here.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <tensoracle/compare/compare.hpp>
#include <tensoracle/cubin/bundle.hpp>
#include <tensoracle/cubin/bundle_manifest.hpp>
#include <tensoracle/cubin/cubin_runtime.hpp>
#include <tensoracle/cubin/runtime.hpp>
#include <tensoracle/cuda/driver.hpp>
#include <tensoracle/cuda/gpu_properties.hpp>
#include <tensoracle/errors.hpp>

int main() {
    using namespace tensoracle;
    if (cubin::ArgValue::i32(7).integer_bits() != 7U ||
        cubin::arg_size(cubin::ArgType::f64) != 8U) {
        std::cerr << "unexpected argument records\n";
        return 1;
    }
    try {
        cubin::LoadedBundle const bundle{std::filesystem::path{"no-such-bundle"}};
        std::cerr << "a missing bundle directory was loaded\n";
        return 1;
    } catch (FileError const& error) {
        std::cout << error.what() << '\n';
    }
    std::array<std::int32_t, 3> const candidate{1, 2, 3};
    std::array<std::int32_t, 3> const reference{1, 2, 4};
    std::array<std::int64_t, 1> const shape{3};
    std::array<std::int64_t, 1> const strides{sizeof(std::int32_t)};
    auto view = [&](std::array<std::int32_t, 3> const& values) {
        return ArrayView{reinterpret_cast<std::byte const*>(values.data()), ElementType::int32,
                         shape, strides};
    };
    auto const mismatches = count_mismatches(view(candidate), view(reference));
    std::cout << "mismatches: " << mismatches << '\n';
    return mismatches == 1U ? 0 : 1;
}
