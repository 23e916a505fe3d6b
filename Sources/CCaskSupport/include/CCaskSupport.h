#ifndef CASK_SUPPORT_H
#define CASK_SUPPORT_H
#include <stddef.h>
#include <stdint.h>

/// Extends a CRC32C (Castagnoli, reflected polynomial 0x82F63B78) over `length` bytes.
/// Start with crc = 0. Uses the SSE4.2 / ARMv8 CRC instructions when the CPU has them.
uint32_t cask_crc32c_extend(uint32_t crc, const void *data, size_t length);

/// The CRC32C of A followed by B, from the CRC32C of A (`crc1`), that of B alone (`crc2`) and
/// B's length in bytes: O(log length2), so that sections read in parallel can be checked
/// against one checksum of the whole.
uint32_t cask_crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t length2);

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

/// Asks the kernel to back the whole 2 MiB pages inside `length` bytes at `start` with huge
/// pages when they are first touched (Linux `madvise(MADV_HUGEPAGE)`; a hint, ignored where
/// transparent huge pages are off or absent): for the index's large arrays, filled right after
/// they are allocated, so that a million-key open takes a few dozen page faults instead of
/// thousands. Elsewhere does nothing.
void cask_advise_huge_pages(void *start, size_t length);
#endif

#ifndef CASK_SUPPORT_ORDER_H
#define CASK_SUPPORT_ORDER_H
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#elif !defined(__aarch64__)
#include <time.h>
#endif
#if defined(__linux__) && defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#include <sys/rseq.h>
#define CASK_HAS_RSEQ 1
#endif
/// A reading of the processor's constant-rate counter (x86 `rdtsc`, ARMv8 `cntvct_el0`, else
/// CLOCK_MONOTONIC in nanoseconds), for ordering the memory cache's uses across threads without
/// a shared counter. Increases on every CPU; readings on different CPUs compare correctly where
/// the kernel keeps the counters synchronized (it then uses them as its clock source), else to
/// within their skew. Not a time of day, and no fence: a reading may be taken a few cycles
/// earlier or later than the instructions around it.
static inline __attribute__((always_inline)) uint64_t cask_use_stamp(void) {
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#elif defined(__aarch64__)
    uint64_t value;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(value));
    return value;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}
/// Tells the CPU that the thread is spinning on a lock (x86 `pause`, ARMv8 `yield`).
static inline __attribute__((always_inline)) void cask_spin_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}
/// Sets the calling thread's nice value (Linux; 0 to 19, higher yields the processor to other
/// threads). Returns 0, or -1 with errno set. Does nothing elsewhere.
int cask_lower_thread_priority(int niceness);

/// ``cask_current_cpu`` through `sched_getcpu`, or 0 where that is unknown.
int cask_current_cpu_slowly(void);
/// The CPU the calling thread runs on, or 0 where that is unknown. Only a hint: the thread may
/// move right after. With glibc 2.35 and later on Linux, a load from the thread's rseq area
/// (which the kernel keeps current), inline; else `sched_getcpu`.
static inline __attribute__((always_inline)) int cask_current_cpu(void) {
#if defined(CASK_HAS_RSEQ)
    if (__rseq_size != 0) {
        const struct rseq *area = (const struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
        return (int)__atomic_load_n(&area->cpu_id, __ATOMIC_RELAXED);
    }
#endif
    return cask_current_cpu_slowly();
}
#endif
