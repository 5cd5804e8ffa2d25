#ifndef STOMPBOX_CJACK_H
#define STOMPBOX_CJACK_H
#include <jack/jack.h>
#include <jack/types.h>
#include <jack/midiport.h>
#include <jack/thread.h>

/// jack_client_open without its variadic tail (Swift cannot call a variadic C function): opens
/// a client on the default server (JACK_DEFAULT_SERVER, else "default"), never starting one.
jack_client_t *stompbox_jack_open(const char *name, jack_status_t *status);

/// The port buffer of `port` for this cycle as floats (JACK's default audio type).
static inline float *stompbox_jack_buffer(jack_port_t *port, jack_nframes_t frames) {
    return (float *)jack_port_get_buffer(port, frames);
}

/// Errors and info lines from libjack go nowhere (it prints to stderr by default, which a
/// headless run would mix into its status lines); the caller reports what went wrong.
void stompbox_jack_silence(void);

#endif
