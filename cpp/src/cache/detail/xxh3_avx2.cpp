// XXH3-128 compiled for AVX2 from xxHash's own header, for builds whose xxHash library picks no
// vector width at run time (Debian's static archive is the SSE2 build). plan_checksum.cpp calls
// it only where the CPU reports AVX2; this file alone is compiled with -mavx2.
#include <cstddef>

// Every xxHash function becomes static in this file (no clash with the linked library), and
// -mavx2 makes xxhash.h select its AVX2 code path.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace tensoracle::detail {

XXH128_hash_t xxh3_128_avx2(void const* data, std::size_t size) noexcept {
    return XXH3_128bits(data, size);
}

// The streaming update on the state plan_checksum.cpp made (the same xxhash.h, the same layout).
void xxh3_128_update_avx2(XXH3_state_t* state, void const* data, std::size_t size) noexcept {
    (void)XXH3_128bits_update(state, data, size);
}

} // namespace tensoracle::detail
