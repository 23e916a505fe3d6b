#ifndef CASK_SUPPORT_H
#define CASK_SUPPORT_H
#include <stddef.h>
#include <stdint.h>

/// Extends a CRC32C (Castagnoli, reflected polynomial 0x82F63B78) over `length` bytes.
/// Start with crc = 0. Uses the SSE4.2 / ARMv8 CRC instructions when the CPU has them.
uint32_t cask_crc32c_extend(uint32_t crc, const void *data, size_t length);

#endif

#ifndef CASK_SUPPORT_HASH_H
#define CASK_SUPPORT_HASH_H
/// A fast seeded 64-bit hash of `length` bytes for the in-memory index (not cryptographic; the
/// seed is random per index so that colliding keys cannot be prepared in advance).
uint64_t cask_hash64(const void *data, size_t length, uint64_t seed);
#endif

#ifndef CASK_SUPPORT_PREFETCH_H
#define CASK_SUPPORT_PREFETCH_H
/// Asks the CPU to start loading the cache line at `address` (a hint: no effect on results).
static inline void cask_prefetch(const void *address) { __builtin_prefetch(address); }
#endif

#ifndef CASK_SUPPORT_WRITEBACK_H
#define CASK_SUPPORT_WRITEBACK_H
/// Asks the kernel to start writing `count` bytes at `offset` of `fd` to the device without
/// waiting (Linux `sync_file_range` with `SYNC_FILE_RANGE_WRITE`: nothing becomes durable, and a
/// write error is left for the next `fdatasync` to report). Returns 0, or -1 with errno set;
/// elsewhere does nothing and returns 0.
int cask_start_writeback(int fd, int64_t offset, int64_t count);
#endif

#ifndef CASK_SUPPORT_HEAP_H
#define CASK_SUPPORT_HEAP_H
/// Gives the heap's free pages back to the system (glibc `malloc_trim(0)`): after an open that
/// sized arrays for every hinted record and then trimmed them, so that the freed memory stops
/// counting. Elsewhere does nothing.
void cask_release_free_heap(void);
#endif
