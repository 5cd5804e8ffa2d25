#define _GNU_SOURCE
#include "CAudioShim.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#include <pmmintrin.h>
#endif

void stompbox_enable_flush_to_zero(void) {
#if defined(__x86_64__) || defined(__i386__)
    _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
    _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
#endif
}

int stompbox_request_realtime(int priority) {
    struct sched_param param = { .sched_priority = priority };
    return pthread_setschedparam(pthread_self(), SCHED_FIFO, &param);
}

int stompbox_pin_to_cpu(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

int stompbox_allowed_cpus(int *cpus, int capacity) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    int n = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && n < capacity; cpu++) {
        if (CPU_ISSET(cpu, &set)) cpus[n++] = cpu;
    }
    return n;
}

int stompbox_name_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

long long stompbox_thread_id(void) {
    return (long long)syscall(SYS_gettid);
}

int stompbox_limit_rttime(long long microseconds) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_RTTIME, &limit) != 0) return errno;
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max <= (rlim_t)microseconds
        && limit.rlim_cur <= (rlim_t)microseconds) return 0;
    limit.rlim_cur = limit.rlim_max = (rlim_t)microseconds;
    return setrlimit(RLIMIT_RTTIME, &limit) == 0 ? 0 : errno;
}
