#ifndef CLV2HOST_H
#define CLV2HOST_H

/*
 * The host side of an LV2 plugin instance, in plain C: the features a plugin is given
 * (URID map/unmap, options, bounded block length, worker, log, state paths), the worker
 * thread, and the run call with its pause handshake.
 *
 * Nothing here exposes LV2's own types: the descriptor and handle travel as void pointers,
 * so Swift sees LV2's headers only once (through CLilv).
 *
 * Threads: `clv2_host_run` is the audio thread's only call (no allocation, no lock, no
 * logging). Everything else is called off the audio thread. The host thread (one per host)
 * runs the plugin's scheduled work and the deactivate/activate that a reset asks for.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CLV2Host CLV2Host;
typedef struct CLV2State CLV2State;

/* URID map shared by every instance in the process (thread-safe: a mutex, never taken on the
   audio thread by us; a plugin that maps in run() would take it, as in jalv). 0 = failure. */
uint32_t clv2_urid_map(const char *uri);
/* The URI of a URID, or NULL. The string lives as long as the process. */
const char *clv2_urid_unmap(uint32_t urid);

/* 1 if Stompbox provides this LV2 feature (for a plugin's lv2:requiredFeature). */
int clv2_feature_is_supported(const char *uri);
/* 1 if Stompbox passes this option (for a plugin's opts:requiredOption). */
int clv2_option_is_supported(const char *uri);

/* A host for one instance at `sample_rate` with blocks of at most `max_block` frames.
   Starts the host thread. NULL if memory or a thread cannot be had. */
CLV2Host *clv2_host_new(double sample_rate, uint32_t max_block);
/* Stops the host thread, deactivates (if active) and frees what the host owns. The plugin
   instance itself is freed by its owner after this. */
void clv2_host_free(CLV2Host *host);

/* The NULL-terminated `const LV2_Feature *const *` list for instantiate. */
const void *const *clv2_host_features(CLV2Host *host);

/* Attaches the instantiated plugin (`descriptor` is a `const LV2_Descriptor *`, `handle` its
   LV2_Handle) and looks up its worker and state interfaces. */
void clv2_host_attach(CLV2Host *host, const void *descriptor, void *handle);
int clv2_host_has_worker(const CLV2Host *host);
int clv2_host_has_state(const CLV2Host *host);

/* connect_port, passed through. */
void clv2_host_connect(CLV2Host *host, uint32_t port, void *data);
/* Gives an atom port a sequence buffer the host owns and re-primes every run
   (inputs: an empty sequence; outputs: a chunk of the full capacity). Off the audio thread,
   before the first run. Returns 0 on success. */
int clv2_host_connect_atom(CLV2Host *host, uint32_t port, int is_input);

/* activate / deactivate (Instantiation class: never while run may be called). */
void clv2_host_activate(CLV2Host *host);
void clv2_host_deactivate(CLV2Host *host);

/* Audio thread: runs the plugin for `frames` (<= max_block), then hands the worker's
   responses to the plugin and calls end_run. Returns 1 if it ran, 0 if the instance is paused
   (a reset or a state restore is under way: the caller leaves its block dry). */
int clv2_host_run(CLV2Host *host, uint32_t frames);

/* Any thread, audio thread included (allocation- and lock-free): asks the host thread to
   deactivate and activate the instance (LV2's way of clearing its state; both are
   Instantiation-class calls, so they cannot happen on the audio thread). Until that is done the
   instance is paused. Does nothing if the instance has not run since it was last activated. */
void clv2_host_request_reset(CLV2Host *host);
/* 1 while runs are paused (a reset or restore pending). */
int clv2_host_is_paused(const CLV2Host *host);

/* Off the audio thread: pause runs and wait until no run is in progress; resume. Nests. */
void clv2_host_pause(CLV2Host *host);
void clv2_host_resume(CLV2Host *host);

/* State. A CLV2State is a list of properties (key URID, type URID, flags, bytes). */
CLV2State *clv2_state_new(void);
void clv2_state_free(CLV2State *state);
uint32_t clv2_state_count(const CLV2State *state);
uint32_t clv2_state_key(const CLV2State *state, uint32_t i);
uint32_t clv2_state_type(const CLV2State *state, uint32_t i);
uint32_t clv2_state_flags(const CLV2State *state, uint32_t i);
size_t clv2_state_size(const CLV2State *state, uint32_t i);
const void *clv2_state_value(const CLV2State *state, uint32_t i);
/* Adds (or replaces) a property; returns 0 on success. */
int clv2_state_set(CLV2State *state, uint32_t key, uint32_t type, uint32_t flags,
                   const void *value, size_t size);

/* Off the audio thread. Calls the plugin's state save into `out` (emptied first); returns the
   plugin's LV2_State_Status (0 = success), or -1 when it has no state interface. */
int clv2_host_save(CLV2Host *host, CLV2State *out);
/* Off the audio thread. Pauses runs, calls the plugin's restore from `state` (work it schedules
   meanwhile runs at once on this thread, as jalv does; its responses reach the plugin in the next
   run), and resumes. Returns the plugin's status, or -1 without a state interface. */
int clv2_host_restore(CLV2Host *host, const CLV2State *state);

/* Counters for tests: work requests run, responses delivered, resets done, log lines dropped. */
uint64_t clv2_host_work_count(const CLV2Host *host);
uint64_t clv2_host_response_count(const CLV2Host *host);
uint64_t clv2_host_reset_count(const CLV2Host *host);

#ifdef __cplusplus
}
#endif

#endif
