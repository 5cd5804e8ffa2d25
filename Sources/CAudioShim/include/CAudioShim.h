#ifndef CAUDIOSHIM_H
#define CAUDIOSHIM_H

/// Sets flush-to-zero and denormals-are-zero on the calling thread (x86 SSE; no-op elsewhere).
/// Called once by the audio thread: denormal feedback tails would otherwise cost 100× CPU.
void stompbox_enable_flush_to_zero(void);

/// Asks for SCHED_FIFO at the given priority for the calling thread. Returns 0 on success,
/// otherwise the errno value (EPERM when the user may not have real-time priority).
int stompbox_request_realtime(int priority);

/// Keeps the calling thread on one CPU. Returns 0 on success, otherwise the errno value.
int stompbox_pin_to_cpu(int cpu);

/// The CPUs this process may run on (its affinity, as `taskset` set it), up to `capacity` of
/// them, into `cpus`; returns how many.
int stompbox_allowed_cpus(int *cpus, int capacity);

/// Names the calling thread as `top -H` and /proc show it (15 characters at most).
int stompbox_name_thread(const char *name);

/// The calling thread's kernel id (gettid), as RealtimeKit names threads.
long long stompbox_thread_id(void);

/// Lowers RLIMIT_RTTIME (CPU time a real-time thread may use without blocking, µs) to at most
/// `microseconds`, as RealtimeKit requires. Returns 0 on success, otherwise the errno value.
int stompbox_limit_rttime(long long microseconds);

#endif
