#define _GNU_SOURCE
#include "CCaskSupport.h"
#if defined(__linux__)
#include <sched.h>
#endif

int cask_current_cpu_slowly(void) {
#if defined(__linux__)
    int cpu = sched_getcpu();
    return cpu < 0 ? 0 : cpu;
#else
    return 0;
#endif
}
