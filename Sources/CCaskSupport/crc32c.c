// CRC32C (Castagnoli). Hardware path on x86_64 (SSE4.2) and aarch64 (CRC extension),
// chosen once at run time; a slicing-by-8 table path everywhere else.
#include "CCaskSupport.h"
#include <string.h>

static uint32_t table[8][256];
static int table_ready = 0;

static void build_table(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++) {
        for (int t = 1; t < 8; t++) table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xFF];
    }
    __atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

static uint32_t crc_software(uint32_t crc, const uint8_t *p, size_t n) {
    if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE)) build_table();
    crc = ~crc;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        w ^= crc;
        crc = table[7][w & 0xFF] ^ table[6][(w >> 8) & 0xFF] ^ table[5][(w >> 16) & 0xFF] ^
              table[4][(w >> 24) & 0xFF] ^ table[3][(w >> 32) & 0xFF] ^ table[2][(w >> 40) & 0xFF] ^
              table[1][(w >> 48) & 0xFF] ^ table[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n--) crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xFF];
    return ~crc;
}

#if defined(__x86_64__)
#include <nmmintrin.h>

// The crc32 instruction has a latency of 3 cycles and a throughput of 1 a cycle: one chain of
// them runs at a third of the unit's speed. Three interleaved chains over consecutive 256-byte
// blocks keep it busy; their registers are then joined with `shift_block`, the linear map
// that appends 256 zero bytes to a CRC register (built once from the bit-wise definition).
#define CRC_BLOCK 256
static uint32_t shift_block[4][256];
static int shift_ready = 0;

static uint32_t append_zero_bytes(uint32_t c, size_t n) {
    while (n--) for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    return c;
}

static void build_shift(void) {
    uint32_t basis[32];
    for (int bit = 0; bit < 32; bit++) basis[bit] = append_zero_bytes(1u << bit, CRC_BLOCK);
    for (int b = 0; b < 4; b++) {
        for (uint32_t v = 0; v < 256; v++) {
            uint32_t image = 0;
            for (int k = 0; k < 8; k++) if (v & (1u << k)) image ^= basis[8 * b + k];
            shift_block[b][v] = image;
        }
    }
    __atomic_store_n(&shift_ready, 1, __ATOMIC_RELEASE);
}

static inline uint32_t shifted(uint32_t c) {
    return shift_block[0][c & 0xFF] ^ shift_block[1][(c >> 8) & 0xFF] ^
           shift_block[2][(c >> 16) & 0xFF] ^ shift_block[3][c >> 24];
}

__attribute__((target("sse4.2")))
static uint32_t crc_hardware(uint32_t crc, const uint8_t *p, size_t n) {
    uint64_t c = ~crc;
    if (n >= 3 * CRC_BLOCK) {
        if (!__atomic_load_n(&shift_ready, __ATOMIC_ACQUIRE)) build_shift();
        while (n >= 3 * CRC_BLOCK) {
            uint64_t c1 = 0, c2 = 0;
            for (size_t i = 0; i < CRC_BLOCK; i += 8) {
                uint64_t w0, w1, w2;
                memcpy(&w0, p + i, 8);
                memcpy(&w1, p + CRC_BLOCK + i, 8);
                memcpy(&w2, p + 2 * CRC_BLOCK + i, 8);
                c = _mm_crc32_u64(c, w0);
                c1 = _mm_crc32_u64(c1, w1);
                c2 = _mm_crc32_u64(c2, w2);
            }
            c = shifted((uint32_t)c) ^ (uint32_t)c1;
            c = shifted((uint32_t)c) ^ (uint32_t)c2;
            p += 3 * CRC_BLOCK;
            n -= 3 * CRC_BLOCK;
        }
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = _mm_crc32_u64(c, w);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n--) c32 = _mm_crc32_u8(c32, *p++);
    return ~c32;
}
static int has_hardware(void) {
    static int cached = -1;
    int v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("sse4.2") ? 1 : 0;
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return v;
}
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
static uint32_t crc_hardware(uint32_t crc, const uint8_t *p, size_t n) {
    uint32_t c = ~crc;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __crc32cd(c, w);
        p += 8;
        n -= 8;
    }
    while (n--) c = __crc32cb(c, *p++);
    return ~c;
}
static int has_hardware(void) { return 1; }
#else
static uint32_t crc_hardware(uint32_t crc, const uint8_t *p, size_t n) { return crc_software(crc, p, n); }
static int has_hardware(void) { return 0; }
#endif

uint32_t cask_crc32c_extend(uint32_t crc, const void *data, size_t length) {
    const uint8_t *p = (const uint8_t *)data;
    return has_hardware() ? crc_hardware(crc, p, length) : crc_software(crc, p, length);
}

// Combining: the CRC register of A followed by B is the register of A advanced over len(B)
// zero bytes, xored with the CRC of B alone (the pre- and post-inversions cancel out). Advancing
// over n zero bytes multiplies by x^(8n) modulo the polynomial; x^(2^k) is found by squaring.
// Polynomials are bit-reflected: bit 31 is x^0.
static uint32_t multiply_mod_p(uint32_t a, uint32_t b) {
    uint32_t product = 0;
    for (uint32_t m = 1u << 31; m != 0; m >>= 1) {
        if (a & m) product ^= b;
        b = (b & 1) ? (b >> 1) ^ 0x82F63B78u : b >> 1;
    }
    return product;
}

uint32_t cask_crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t length2) {
    uint32_t power = 1u << 30;        // x^1
    uint32_t shift = 1u << 31;        // x^0
    uint64_t bits = length2 * 8;      // advance by x^bits
    while (bits != 0) {
        if (bits & 1) shift = multiply_mod_p(power, shift);
        power = multiply_mod_p(power, power);
        bits >>= 1;
    }
    return multiply_mod_p(shift, crc1) ^ crc2;
}
