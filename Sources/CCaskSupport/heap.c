#include "CCaskSupport.h"
#if defined(__GLIBC__)
#include <malloc.h>
#endif

void cask_release_free_heap(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

#if defined(__linux__)
#include <sys/mman.h>
#endif

void cask_advise_huge_pages(void *start, size_t length) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t first = ((uintptr_t)start + huge - 1) & ~(huge - 1);
    uintptr_t end = ((uintptr_t)start + length) & ~(huge - 1);
    if (end > first) (void)madvise((void *)first, end - first, MADV_HUGEPAGE);
#else
    (void)start;
    (void)length;
#endif
}
