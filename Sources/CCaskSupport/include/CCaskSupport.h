#ifndef CASK_SUPPORT_H
#define CASK_SUPPORT_H
#include <stddef.h>
#include <stdint.h>

/// Extends a CRC32C (Castagnoli, reflected polynomial 0x82F63B78) over `length` bytes.
/// Start with crc = 0. Uses the SSE4.2 / ARMv8 CRC instructions when the CPU has them.
uint32_t cask_crc32c_extend(uint32_t crc, const void *data, size_t length);

#endif
