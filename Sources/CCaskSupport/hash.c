// Multiply-fold hashing: each 16-byte block is folded into the state with a 64x64->128-bit
// multiply whose halves are xored. Small keys (the common case) take one or two multiplies.
#include "CCaskSupport.h"
#include <string.h>

static const uint64_t P0 = 0xa0761d6478bd642full, P1 = 0xe7037ed1a0b428dbull,
                      P2 = 0x8ebc6af09c88c6e3ull, P3 = 0x589965cc75374cc3ull;

static inline uint64_t fold(uint64_t a, uint64_t b) {
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t load64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

uint64_t cask_hash64(const void *data, size_t length, uint64_t seed) {
    const uint8_t *p = (const uint8_t *)data;
    size_t n = length;
    uint64_t h = fold(seed ^ P0, (uint64_t)length ^ P1);
    while (n > 16) {
        h = fold(load64(p) ^ P1 ^ h, load64(p + 8) ^ P2);
        p += 16;
        n -= 16;
    }
    uint64_t a = 0, b = 0;
    if (n > 8) {
        a = load64(p);
        memcpy(&b, p + 8, n - 8);
    } else {
        memcpy(&a, p, n);
    }
    h = fold(a ^ P2 ^ h, b ^ P3);
    return fold(h ^ P0, (uint64_t)length ^ P3);
}
