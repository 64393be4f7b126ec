// Which first-pass kernel compare_floating uses (see first_pass.hpp): AVX-512 or AVX2 on x86-64
// CPUs that have them, else none (the portable pass).
#include "first_pass.hpp"

#include "compare/element_readers.hpp"
#include "tensoracle/compare/compare.hpp"

#include <cstdlib>
#include <string_view>

#if defined(TENSORACLE_COMPARE_X86)
#include <cpuid.h>
#endif

namespace tensoracle::detail {

#if defined(TENSORACLE_COMPARE_X86)
FirstPassKernel first_pass_kernel_avx2(ElementType candidate, ElementType reference) noexcept;
FirstPassKernel first_pass_kernel_avx512(ElementType candidate, ElementType reference) noexcept;

namespace {

// F16C, from CPUID leaf 1 (ECX bit 29): the compilers' __builtin_cpu_supports do not all know it.
// It needs no operating system support beyond AVX's, which __builtin_cpu_supports("avx2") checks.
bool has_f16c() noexcept {
    unsigned eax = 0;
    unsigned ebx = 0;
    unsigned ecx = 0;
    unsigned edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

} // namespace
#endif

FirstPass first_pass_kernel(ElementType candidate, ElementType reference) noexcept {
    // Read at every call (a comparison costs far more): a test, or a user who doubts a kernel,
    // switches between two comparisons.
    std::string_view const chosen = [] {
        char const* value = std::getenv("TENSORACLE_COMPARE_KERNEL");
        return value == nullptr ? std::string_view() : std::string_view(value);
    }();
    if (chosen == "portable") {
        return {};
    }
#if defined(TENSORACLE_COMPARE_X86)
    static bool const avx2 = __builtin_cpu_supports("avx2") && has_f16c();
    static bool const avx512 = avx2 && __builtin_cpu_supports("avx512f");
    if (avx512 && chosen != "avx2") {
        if (FirstPassKernel const kernel = first_pass_kernel_avx512(candidate, reference)) {
            return {kernel, "avx512"};
        }
    }
    if (avx2) {
        if (FirstPassKernel const kernel = first_pass_kernel_avx2(candidate, reference)) {
            return {kernel, "avx2"};
        }
    }
#else
    (void)candidate;
    (void)reference;
#endif
    return {};
}

} // namespace tensoracle::detail

namespace tensoracle {

std::string_view compare_kernel(ArrayView const& candidate, ArrayView const& reference) noexcept {
    if (!is_contiguous(candidate) || !is_contiguous(reference)) {
        return "portable";
    }
    return detail::first_pass_kernel(candidate.type, reference.type).name;
}

} // namespace tensoracle
