// The host side of one LV2 instance: features, worker thread, pause handshake, state callbacks.
// See include/CLV2Host.h for the thread contract of each call.

#include "CLV2Host.h"

#include <lv2/atom/atom.h>
#include <lv2/buf-size/buf-size.h>
#include <lv2/core/lv2.h>
#include <lv2/log/log.h>
#include <lv2/options/options.h>
#include <lv2/parameters/parameters.h>
#include <lv2/state/state.h>
#include <lv2/urid/urid.h>
#include <lv2/worker/worker.h>

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// MARK: URID map (one table for the process)

static pthread_mutex_t urid_lock = PTHREAD_MUTEX_INITIALIZER;
static char **urid_uris = NULL; // urid_uris[i] is the URI of URID i + 1
static uint32_t urid_count = 0;
static uint32_t urid_capacity = 0;

uint32_t clv2_urid_map(const char *uri) {
    if (!uri) return 0;
    pthread_mutex_lock(&urid_lock);
    for (uint32_t i = 0; i < urid_count; ++i) {
        if (!strcmp(urid_uris[i], uri)) {
            pthread_mutex_unlock(&urid_lock);
            return i + 1;
        }
    }
    uint32_t urid = 0;
    if (urid_count == urid_capacity) {
        uint32_t capacity = urid_capacity ? urid_capacity * 2 : 256;
        char **grown = realloc(urid_uris, capacity * sizeof(char *));
        if (grown) {
            urid_uris = grown;
            urid_capacity = capacity;
        }
    }
    if (urid_count < urid_capacity) {
        char *copy = strdup(uri);
        if (copy) {
            urid_uris[urid_count++] = copy;
            urid = urid_count;
        }
    }
    pthread_mutex_unlock(&urid_lock);
    return urid;
}

const char *clv2_urid_unmap(uint32_t urid) {
    const char *uri = NULL;
    pthread_mutex_lock(&urid_lock);
    if (urid > 0 && urid <= urid_count) uri = urid_uris[urid - 1];
    pthread_mutex_unlock(&urid_lock);
    return uri;
}

static LV2_URID map_uri(LV2_URID_Map_Handle handle, const char *uri) {
    (void)handle;
    return clv2_urid_map(uri);
}

static const char *unmap_uri(LV2_URID_Unmap_Handle handle, LV2_URID urid) {
    (void)handle;
    return clv2_urid_unmap(urid);
}

// MARK: What we provide

static const char *const supported_features[] = {
    LV2_URID__map,
    LV2_URID__unmap,
    LV2_OPTIONS__options,
    LV2_BUF_SIZE__boundedBlockLength,
    LV2_WORKER__schedule,
    LV2_LOG__log,
    LV2_STATE__mapPath,
    LV2_STATE__freePath,
    LV2_CORE__isLive,
    // Promises a plugin makes, which a host honours by doing nothing special: we never run
    // in place (inputs and outputs are separate buffers) and never restore during run.
    LV2_CORE__inPlaceBroken,
    LV2_CORE__hardRTCapable,
    LV2_STATE__threadSafeRestore,
    NULL,
};

static const char *const supported_options[] = {
    LV2_PARAMETERS__sampleRate,
    LV2_BUF_SIZE__minBlockLength,
    LV2_BUF_SIZE__maxBlockLength,
    LV2_BUF_SIZE__nominalBlockLength,
    LV2_BUF_SIZE__sequenceSize,
    NULL,
};

static int in_list(const char *const *list, const char *uri) {
    if (!uri) return 0;
    for (const char *const *p = list; *p; ++p) {
        if (!strcmp(*p, uri)) return 1;
    }
    return 0;
}

int clv2_feature_is_supported(const char *uri) { return in_list(supported_features, uri); }
int clv2_option_is_supported(const char *uri) { return in_list(supported_options, uri); }

// MARK: Single-producer single-consumer ring of size-prefixed packets

#define RING_CAPACITY 16384u        // bytes, a power of two
#define PACKET_CAPACITY 8192u       // the largest request or response body
#define ATOM_CAPACITY 8192u         // bytes of an atom port's sequence body
#define MAX_ATOM_PORTS 16u

typedef struct {
    uint8_t *data;
    _Atomic uint32_t head; // written by the producer: bytes ever written
    _Atomic uint32_t tail; // written by the consumer: bytes ever read
} Ring;

static void ring_copy_in(Ring *r, uint32_t at, const void *src, uint32_t n) {
    uint32_t i = at & (RING_CAPACITY - 1);
    uint32_t first = RING_CAPACITY - i < n ? RING_CAPACITY - i : n;
    memcpy(r->data + i, src, first);
    if (n > first) memcpy(r->data, (const uint8_t *)src + first, n - first);
}

static void ring_copy_out(const Ring *r, uint32_t at, void *dst, uint32_t n) {
    uint32_t i = at & (RING_CAPACITY - 1);
    uint32_t first = RING_CAPACITY - i < n ? RING_CAPACITY - i : n;
    memcpy(dst, r->data + i, first);
    if (n > first) memcpy((uint8_t *)dst + first, r->data, n - first);
}

// Producer. 0 on success, -1 when it does not fit (the packet is dropped whole).
static int ring_write(Ring *r, uint32_t size, const void *body) {
    if (size > PACKET_CAPACITY) return -1;
    uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    uint32_t free_bytes = RING_CAPACITY - (head - tail);
    if (free_bytes < sizeof(uint32_t) + size) return -1;
    ring_copy_in(r, head, &size, sizeof(uint32_t));
    if (size) ring_copy_in(r, head + sizeof(uint32_t), body, size);
    atomic_store_explicit(&r->head, head + (uint32_t)sizeof(uint32_t) + size, memory_order_release);
    return 0;
}

// Consumer. Returns 1 and the packet's size (body in `out`, which holds PACKET_CAPACITY), or 0.
static int ring_read(Ring *r, void *out, uint32_t *size) {
    uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    if (head - tail < sizeof(uint32_t)) return 0;
    uint32_t n = 0;
    ring_copy_out(r, tail, &n, sizeof(uint32_t));
    if (n) ring_copy_out(r, tail + sizeof(uint32_t), out, n);
    atomic_store_explicit(&r->tail, tail + (uint32_t)sizeof(uint32_t) + n, memory_order_release);
    *size = n;
    return 1;
}

// MARK: The host

typedef struct {
    uint32_t port;
    int is_input;
    LV2_Atom_Sequence *sequence;
} AtomPort;

struct CLV2Host {
    // Values the options point at.
    float sample_rate;
    int32_t min_block, max_block, sequence_size;

    // Features.
    LV2_URID_Map map;
    LV2_URID_Unmap unmap;
    LV2_Options_Option options[6];
    LV2_Worker_Schedule schedule;      // threaded: what instantiate gets
    LV2_Worker_Schedule sync_schedule; // runs work at once: what save/restore get
    LV2_Log_Log log;
    LV2_State_Map_Path map_path;
    LV2_State_Free_Path free_path;
    LV2_Feature f_map, f_unmap, f_options, f_bounded, f_schedule, f_sync_schedule, f_log,
        f_live, f_map_path, f_free_path;
    const LV2_Feature *features[11];
    const LV2_Feature *state_features[9];
    int log_to_stderr;

    // The instance.
    const LV2_Descriptor *descriptor;
    LV2_Handle handle;
    const LV2_Worker_Interface *worker;
    const LV2_State_Interface *state;
    _Atomic int active;
    _Atomic int ran; // run since the last activate

    // Atom ports.
    AtomPort atoms[MAX_ATOM_PORTS];
    uint32_t atom_count;
    LV2_URID atom_Sequence, atom_Chunk;

    // Worker.
    Ring requests, responses;
    void *work_buffer;     // host thread only
    void *response_buffer; // audio thread only
    pthread_mutex_t work_lock; // around work(), save, restore, activate, deactivate
    sem_t wake;
    pthread_t thread;
    int thread_started;
    int sync_ready; // work_lock and wake initialised
    _Atomic int must_exit;

    // Pausing.
    _Atomic int pause_count;
    _Atomic int in_run;
    _Atomic int reset_requested;

    // Counters.
    _Atomic uint64_t work_count, response_count, reset_count;
};

// MARK: Worker and log callbacks

static LV2_Worker_Status respond(LV2_Worker_Respond_Handle handle, uint32_t size, const void *data) {
    CLV2Host *host = (CLV2Host *)handle;
    return ring_write(&host->responses, size, data) ? LV2_WORKER_ERR_NO_SPACE : LV2_WORKER_SUCCESS;
}

// Audio thread (from the plugin's run): queue the request, wake the host thread.
static LV2_Worker_Status schedule_work(LV2_Worker_Schedule_Handle handle, uint32_t size, const void *data) {
    CLV2Host *host = (CLV2Host *)handle;
    if (!host->worker) return LV2_WORKER_ERR_UNKNOWN;
    if (ring_write(&host->requests, size, data)) return LV2_WORKER_ERR_NO_SPACE;
    sem_post(&host->wake);
    return LV2_WORKER_SUCCESS;
}

// During save or restore (off the audio thread, work lock held): run the work at once.
static LV2_Worker_Status schedule_work_now(LV2_Worker_Schedule_Handle handle, uint32_t size, const void *data) {
    CLV2Host *host = (CLV2Host *)handle;
    if (!host->worker) return LV2_WORKER_ERR_UNKNOWN;
    atomic_fetch_add(&host->work_count, 1);
    return host->worker->work(host->handle, respond, host, size, data);
}

static int log_vprintf(LV2_Log_Handle handle, LV2_URID type, const char *fmt, va_list args) {
    CLV2Host *host = (CLV2Host *)handle;
    (void)type;
    // Never from the audio thread: a message sent while the instance runs is dropped.
    if (!host->log_to_stderr || atomic_load_explicit(&host->in_run, memory_order_relaxed)) return 0;
    fputs("lv2: ", stderr);
    return vfprintf(stderr, fmt, args);
}

static int log_printf(LV2_Log_Handle handle, LV2_URID type, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    int n = log_vprintf(handle, type, fmt, args);
    va_end(args);
    return n;
}

// Paths are kept as they are (absolute): the state is stored for this machine.
static char *abstract_path(LV2_State_Map_Path_Handle handle, const char *absolute) {
    (void)handle;
    return strdup(absolute ? absolute : "");
}

static char *absolute_path(LV2_State_Map_Path_Handle handle, const char *abstract) {
    (void)handle;
    return strdup(abstract ? abstract : "");
}

static void free_path(LV2_State_Free_Path_Handle handle, char *path) {
    (void)handle;
    free(path);
}

// MARK: Pausing

static void wait_until_not_running(CLV2Host *host) {
    while (atomic_load_explicit(&host->in_run, memory_order_seq_cst)) {
        struct timespec t = {0, 50000};
        nanosleep(&t, NULL);
    }
}

void clv2_host_pause(CLV2Host *host) {
    atomic_fetch_add_explicit(&host->pause_count, 1, memory_order_seq_cst);
    wait_until_not_running(host);
}

void clv2_host_resume(CLV2Host *host) {
    atomic_fetch_sub_explicit(&host->pause_count, 1, memory_order_seq_cst);
}

int clv2_host_is_paused(const CLV2Host *host) {
    return atomic_load_explicit(&((CLV2Host *)host)->pause_count, memory_order_relaxed) > 0;
}

// MARK: The host thread

static void reset_now(CLV2Host *host) {
    // The request already paused runs; wait for one that may still be finishing.
    wait_until_not_running(host);
    pthread_mutex_lock(&host->work_lock);
    if (atomic_load(&host->active)) {
        if (host->descriptor->deactivate) host->descriptor->deactivate(host->handle);
        if (host->descriptor->activate) host->descriptor->activate(host->handle);
    }
    atomic_store(&host->ran, 0);
    pthread_mutex_unlock(&host->work_lock);
    atomic_fetch_add(&host->reset_count, 1);
    clv2_host_resume(host);
}

static void *host_thread(void *arg) {
    CLV2Host *host = (CLV2Host *)arg;
    for (;;) {
        while (sem_wait(&host->wake) && errno == EINTR) {}
        if (atomic_load(&host->must_exit)) break;
        if (atomic_exchange(&host->reset_requested, 0)) reset_now(host);
        uint32_t size = 0;
        while (ring_read(&host->requests, host->work_buffer, &size)) {
            pthread_mutex_lock(&host->work_lock);
            if (host->worker) {
                atomic_fetch_add(&host->work_count, 1);
                host->worker->work(host->handle, respond, host, size, host->work_buffer);
            }
            pthread_mutex_unlock(&host->work_lock);
        }
    }
    return NULL;
}

// MARK: Life

CLV2Host *clv2_host_new(double sample_rate, uint32_t max_block) {
    CLV2Host *host = calloc(1, sizeof(CLV2Host));
    if (!host) return NULL;
    host->requests.data = calloc(1, RING_CAPACITY);
    host->responses.data = calloc(1, RING_CAPACITY);
    host->work_buffer = calloc(1, PACKET_CAPACITY);
    host->response_buffer = calloc(1, PACKET_CAPACITY);
    if (!host->requests.data || !host->responses.data || !host->work_buffer || !host->response_buffer) {
        clv2_host_free(host);
        return NULL;
    }
    pthread_mutex_init(&host->work_lock, NULL);
    sem_init(&host->wake, 0, 0);
    host->sync_ready = 1;

    host->sample_rate = (float)sample_rate;
    host->min_block = 1;
    host->max_block = (int32_t)max_block;
    host->sequence_size = (int32_t)ATOM_CAPACITY;
    host->atom_Sequence = clv2_urid_map(LV2_ATOM__Sequence);
    host->atom_Chunk = clv2_urid_map(LV2_ATOM__Chunk);
    const char *log_env = getenv("STOMPBOX_LV2_LOG");
    host->log_to_stderr = log_env && *log_env && strcmp(log_env, "0");

    LV2_URID atom_Int = clv2_urid_map(LV2_ATOM__Int);
    LV2_URID atom_Float = clv2_urid_map(LV2_ATOM__Float);
    LV2_Options_Option options[6] = {
        {LV2_OPTIONS_INSTANCE, 0, clv2_urid_map(LV2_PARAMETERS__sampleRate), sizeof(float), atom_Float, &host->sample_rate},
        {LV2_OPTIONS_INSTANCE, 0, clv2_urid_map(LV2_BUF_SIZE__minBlockLength), sizeof(int32_t), atom_Int, &host->min_block},
        {LV2_OPTIONS_INSTANCE, 0, clv2_urid_map(LV2_BUF_SIZE__maxBlockLength), sizeof(int32_t), atom_Int, &host->max_block},
        {LV2_OPTIONS_INSTANCE, 0, clv2_urid_map(LV2_BUF_SIZE__nominalBlockLength), sizeof(int32_t), atom_Int, &host->max_block},
        {LV2_OPTIONS_INSTANCE, 0, clv2_urid_map(LV2_BUF_SIZE__sequenceSize), sizeof(int32_t), atom_Int, &host->sequence_size},
        {LV2_OPTIONS_INSTANCE, 0, 0, 0, 0, NULL},
    };
    memcpy(host->options, options, sizeof(options));

    host->map = (LV2_URID_Map){NULL, map_uri};
    host->unmap = (LV2_URID_Unmap){NULL, unmap_uri};
    host->schedule = (LV2_Worker_Schedule){host, schedule_work};
    host->sync_schedule = (LV2_Worker_Schedule){host, schedule_work_now};
    host->log = (LV2_Log_Log){host, log_printf, log_vprintf};
    host->map_path = (LV2_State_Map_Path){NULL, abstract_path, absolute_path};
    host->free_path = (LV2_State_Free_Path){NULL, free_path};

    host->f_map = (LV2_Feature){LV2_URID__map, &host->map};
    host->f_unmap = (LV2_Feature){LV2_URID__unmap, &host->unmap};
    host->f_options = (LV2_Feature){LV2_OPTIONS__options, host->options};
    host->f_bounded = (LV2_Feature){LV2_BUF_SIZE__boundedBlockLength, NULL};
    host->f_schedule = (LV2_Feature){LV2_WORKER__schedule, &host->schedule};
    host->f_sync_schedule = (LV2_Feature){LV2_WORKER__schedule, &host->sync_schedule};
    host->f_log = (LV2_Feature){LV2_LOG__log, &host->log};
    host->f_live = (LV2_Feature){LV2_CORE__isLive, NULL};
    host->f_map_path = (LV2_Feature){LV2_STATE__mapPath, &host->map_path};
    host->f_free_path = (LV2_Feature){LV2_STATE__freePath, &host->free_path};

    const LV2_Feature *features[11] = {
        &host->f_map, &host->f_unmap, &host->f_options, &host->f_bounded, &host->f_schedule,
        &host->f_log, &host->f_live, &host->f_map_path, &host->f_free_path, NULL, NULL,
    };
    memcpy(host->features, features, sizeof(features));
    const LV2_Feature *state_features[9] = {
        &host->f_map, &host->f_unmap, &host->f_map_path, &host->f_free_path,
        &host->f_sync_schedule, &host->f_log, &host->f_options, NULL, NULL,
    };
    memcpy(host->state_features, state_features, sizeof(state_features));

    if (pthread_create(&host->thread, NULL, host_thread, host)) {
        clv2_host_free(host);
        return NULL;
    }
    host->thread_started = 1;
    return host;
}

void clv2_host_free(CLV2Host *host) {
    if (!host) return;
    if (host->thread_started) {
        atomic_store(&host->must_exit, 1);
        sem_post(&host->wake);
        pthread_join(host->thread, NULL);
        host->thread_started = 0;
    }
    clv2_host_deactivate(host);
    for (uint32_t i = 0; i < host->atom_count; ++i) free(host->atoms[i].sequence);
    if (host->sync_ready) {
        pthread_mutex_destroy(&host->work_lock);
        sem_destroy(&host->wake);
    }
    free(host->requests.data);
    free(host->responses.data);
    free(host->work_buffer);
    free(host->response_buffer);
    free(host);
}

const void *const *clv2_host_features(CLV2Host *host) { return (const void *const *)host->features; }

void clv2_host_attach(CLV2Host *host, const void *descriptor, void *handle) {
    host->descriptor = (const LV2_Descriptor *)descriptor;
    host->handle = handle;
    host->worker = NULL;
    host->state = NULL;
    if (host->descriptor && host->descriptor->extension_data) {
        const LV2_Worker_Interface *worker = host->descriptor->extension_data(LV2_WORKER__interface);
        if (worker && worker->work && worker->work_response) host->worker = worker;
        const LV2_State_Interface *state = host->descriptor->extension_data(LV2_STATE__interface);
        if (state && state->save && state->restore) host->state = state;
    }
}

int clv2_host_has_worker(const CLV2Host *host) { return host->worker != NULL; }
int clv2_host_has_state(const CLV2Host *host) { return host->state != NULL; }

void clv2_host_connect(CLV2Host *host, uint32_t port, void *data) {
    host->descriptor->connect_port(host->handle, port, data);
}

static void prime_atoms(CLV2Host *host) {
    for (uint32_t i = 0; i < host->atom_count; ++i) {
        LV2_Atom_Sequence *seq = host->atoms[i].sequence;
        if (host->atoms[i].is_input) {
            seq->atom.size = sizeof(LV2_Atom_Sequence_Body);
            seq->atom.type = host->atom_Sequence;
        } else {
            seq->atom.size = ATOM_CAPACITY;
            seq->atom.type = host->atom_Chunk;
        }
        seq->body.unit = 0;
        seq->body.pad = 0;
    }
}

int clv2_host_connect_atom(CLV2Host *host, uint32_t port, int is_input) {
    AtomPort *slot = NULL;
    for (uint32_t i = 0; i < host->atom_count; ++i) {
        if (host->atoms[i].port == port) slot = &host->atoms[i];
    }
    if (!slot) {
        if (host->atom_count == MAX_ATOM_PORTS) return -1;
        LV2_Atom_Sequence *seq = calloc(1, sizeof(LV2_Atom) + ATOM_CAPACITY);
        if (!seq) return -1;
        slot = &host->atoms[host->atom_count++];
        slot->port = port;
        slot->sequence = seq;
    }
    slot->is_input = is_input;
    prime_atoms(host);
    clv2_host_connect(host, port, slot->sequence);
    return 0;
}

void clv2_host_activate(CLV2Host *host) {
    pthread_mutex_lock(&host->work_lock);
    if (!atomic_load(&host->active)) {
        if (host->descriptor->activate) host->descriptor->activate(host->handle);
        atomic_store(&host->active, 1);
        atomic_store(&host->ran, 0);
    }
    pthread_mutex_unlock(&host->work_lock);
}

void clv2_host_deactivate(CLV2Host *host) {
    if (!host->descriptor || !host->sync_ready) return;
    clv2_host_pause(host);
    pthread_mutex_lock(&host->work_lock);
    if (atomic_load(&host->active)) {
        if (host->descriptor->deactivate) host->descriptor->deactivate(host->handle);
        atomic_store(&host->active, 0);
    }
    pthread_mutex_unlock(&host->work_lock);
    clv2_host_resume(host);
}

// MARK: The audio thread

int clv2_host_run(CLV2Host *host, uint32_t frames) {
    atomic_store_explicit(&host->in_run, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&host->pause_count, memory_order_seq_cst) > 0 ||
        !atomic_load_explicit(&host->active, memory_order_relaxed)) {
        atomic_store_explicit(&host->in_run, 0, memory_order_release);
        return 0;
    }
    prime_atoms(host);
    host->descriptor->run(host->handle, frames);
    if (host->worker) {
        uint32_t size = 0;
        while (ring_read(&host->responses, host->response_buffer, &size)) {
            host->worker->work_response(host->handle, size, host->response_buffer);
            atomic_fetch_add_explicit(&host->response_count, 1, memory_order_relaxed);
        }
        if (host->worker->end_run) host->worker->end_run(host->handle);
    }
    if (!atomic_load_explicit(&host->ran, memory_order_relaxed)) {
        atomic_store_explicit(&host->ran, 1, memory_order_relaxed);
    }
    atomic_store_explicit(&host->in_run, 0, memory_order_release);
    return 1;
}

void clv2_host_request_reset(CLV2Host *host) {
    if (!atomic_load_explicit(&host->ran, memory_order_relaxed)) return;
    if (atomic_exchange_explicit(&host->reset_requested, 1, memory_order_acq_rel) == 0) {
        atomic_fetch_add_explicit(&host->pause_count, 1, memory_order_seq_cst);
        sem_post(&host->wake);
    }
}

// MARK: State

typedef struct {
    uint32_t key, type, flags;
    size_t size;
    void *value;
} Property;

struct CLV2State {
    Property *properties;
    uint32_t count, capacity;
};

CLV2State *clv2_state_new(void) { return calloc(1, sizeof(CLV2State)); }

static void state_clear(CLV2State *state) {
    for (uint32_t i = 0; i < state->count; ++i) free(state->properties[i].value);
    state->count = 0;
}

void clv2_state_free(CLV2State *state) {
    if (!state) return;
    state_clear(state);
    free(state->properties);
    free(state);
}

uint32_t clv2_state_count(const CLV2State *state) { return state->count; }
uint32_t clv2_state_key(const CLV2State *state, uint32_t i) { return state->properties[i].key; }
uint32_t clv2_state_type(const CLV2State *state, uint32_t i) { return state->properties[i].type; }
uint32_t clv2_state_flags(const CLV2State *state, uint32_t i) { return state->properties[i].flags; }
size_t clv2_state_size(const CLV2State *state, uint32_t i) { return state->properties[i].size; }
const void *clv2_state_value(const CLV2State *state, uint32_t i) { return state->properties[i].value; }

int clv2_state_set(CLV2State *state, uint32_t key, uint32_t type, uint32_t flags, const void *value, size_t size) {
    void *copy = malloc(size ? size : 1);
    if (!copy) return -1;
    if (size) memcpy(copy, value, size);
    for (uint32_t i = 0; i < state->count; ++i) {
        Property *p = &state->properties[i];
        if (p->key == key) {
            free(p->value);
            *p = (Property){key, type, flags, size, copy};
            return 0;
        }
    }
    if (state->count == state->capacity) {
        uint32_t capacity = state->capacity ? state->capacity * 2 : 16;
        Property *grown = realloc(state->properties, capacity * sizeof(Property));
        if (!grown) {
            free(copy);
            return -1;
        }
        state->properties = grown;
        state->capacity = capacity;
    }
    state->properties[state->count++] = (Property){key, type, flags, size, copy};
    return 0;
}

static LV2_State_Status store_property(LV2_State_Handle handle, uint32_t key, const void *value, size_t size,
                                       uint32_t type, uint32_t flags) {
    if (!key || !type) return LV2_STATE_ERR_BAD_TYPE;
    return clv2_state_set((CLV2State *)handle, key, type, flags, value, size) ? LV2_STATE_ERR_UNKNOWN
                                                                            : LV2_STATE_SUCCESS;
}

static const void *retrieve_property(LV2_State_Handle handle, uint32_t key, size_t *size, uint32_t *type,
                                     uint32_t *flags) {
    const CLV2State *state = (const CLV2State *)handle;
    for (uint32_t i = 0; i < state->count; ++i) {
        const Property *p = &state->properties[i];
        if (p->key == key) {
            if (size) *size = p->size;
            if (type) *type = p->type;
            if (flags) *flags = p->flags;
            return p->value;
        }
    }
    return NULL;
}

int clv2_host_save(CLV2Host *host, CLV2State *out) {
    if (!host->state) return -1;
    state_clear(out);
    // Save may run alongside run() (its own threading class), but not alongside work().
    pthread_mutex_lock(&host->work_lock);
    int status = host->state->save(host->handle, store_property, out,
                                   LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE, host->state_features);
    pthread_mutex_unlock(&host->work_lock);
    return status;
}

int clv2_host_restore(CLV2Host *host, const CLV2State *state) {
    if (!host->state) return -1;
    // Restore is an Instantiation-class call: no run, no work meanwhile.
    clv2_host_pause(host);
    pthread_mutex_lock(&host->work_lock);
    int status = host->state->restore(host->handle, retrieve_property, (LV2_State_Handle)state,
                                      LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE, host->state_features);
    pthread_mutex_unlock(&host->work_lock);
    clv2_host_resume(host);
    return status;
}

uint64_t clv2_host_work_count(const CLV2Host *host) { return atomic_load(&((CLV2Host *)host)->work_count); }
uint64_t clv2_host_response_count(const CLV2Host *host) { return atomic_load(&((CLV2Host *)host)->response_count); }
uint64_t clv2_host_reset_count(const CLV2Host *host) { return atomic_load(&((CLV2Host *)host)->reset_count); }
