#define _GNU_SOURCE
#include "CCaskSupport.h"
#if defined(__linux__)
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

int cask_lower_thread_priority(int niceness) {
#if defined(__linux__)
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), niceness);
#else
    (void)niceness;
    return 0;
#endif
}

int cask_current_cpu_slowly(void) {
#if defined(__linux__)
    int cpu = sched_getcpu();
    return cpu < 0 ? 0 : cpu;
#else
    return 0;
#endif
}
