#include "CCaskSupport.h"
#if defined(__GLIBC__)
#include <malloc.h>
#endif

void cask_release_free_heap(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}
