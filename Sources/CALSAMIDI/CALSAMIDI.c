#include "CALSAMIDI.h"
#include <alsa/asoundlib.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct stompbox_alsa_midi {
    snd_seq_t *seq;
    int client;
    int port;
    int connections;
};

static void quiet_errors(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

/// True for a port worth listening to: a hardware (or synth) MIDI output another client offers.
static int is_input_device(stompbox_alsa_midi *midi, snd_seq_port_info_t *info) {
    int client = snd_seq_port_info_get_client(info);
    if (client == midi->client || client == SND_SEQ_CLIENT_SYSTEM) return 0;
    unsigned caps = snd_seq_port_info_get_capability(info);
    if ((caps & (SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ)) != (SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ)) return 0;
    if (caps & SND_SEQ_PORT_CAP_NO_EXPORT) return 0;
    unsigned type = snd_seq_port_info_get_type(info);
    // "Midi Through" echoes what others send: listening there would double every message.
    if (!(type & (SND_SEQ_PORT_TYPE_HARDWARE | SND_SEQ_PORT_TYPE_PORT))) return 0;
    return (type & SND_SEQ_PORT_TYPE_MIDI_GENERIC) != 0;
}

/// Subscribes `midi_in` to a port; the count follows the announcements of subscriptions.
static void connect_from(stompbox_alsa_midi *midi, int client, int port) {
    snd_seq_connect_from(midi->seq, midi->port, client, port);
}

static void connect_all(stompbox_alsa_midi *midi) {
    snd_seq_client_info_t *cinfo;
    snd_seq_port_info_t *pinfo;
    snd_seq_client_info_alloca(&cinfo);
    snd_seq_port_info_alloca(&pinfo);
    snd_seq_client_info_set_client(cinfo, -1);
    while (snd_seq_query_next_client(midi->seq, cinfo) >= 0) {
        snd_seq_port_info_set_client(pinfo, snd_seq_client_info_get_client(cinfo));
        snd_seq_port_info_set_port(pinfo, -1);
        while (snd_seq_query_next_port(midi->seq, pinfo) >= 0) {
            if (is_input_device(midi, pinfo)) connect_from(midi, snd_seq_port_info_get_client(pinfo), snd_seq_port_info_get_port(pinfo));
        }
    }
}

static stompbox_alsa_midi *open_client(const char *name, int input, char *error, size_t error_size) {
    snd_lib_error_set_handler(quiet_errors);
    snd_seq_t *seq = NULL;
    int err = snd_seq_open(&seq, "default", input ? SND_SEQ_OPEN_INPUT | SND_SEQ_OPEN_OUTPUT : SND_SEQ_OPEN_OUTPUT, 0);
    if (err < 0) {
        snprintf(error, error_size, "the ALSA sequencer cannot be opened (%s%s)", snd_strerror(err),
                 access("/dev/snd/seq", F_OK) != 0 ? ": there is no /dev/snd/seq; load the snd-seq module" : "");
        return NULL;
    }
    snd_seq_set_client_name(seq, name);
    stompbox_alsa_midi *midi = calloc(1, sizeof *midi);
    midi->seq = seq;
    midi->client = snd_seq_client_id(seq);
    unsigned caps = input ? SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE : SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ;
    midi->port = snd_seq_create_simple_port(seq, input ? "midi_in" : "midi_out", caps,
                                            SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION);
    if (midi->port < 0) {
        snprintf(error, error_size, "the ALSA sequencer refused a port (%s)", snd_strerror(midi->port));
        snd_seq_close(seq);
        free(midi);
        return NULL;
    }
    return midi;
}

stompbox_alsa_midi *stompbox_alsa_midi_open(const char *client_name, char *error, size_t error_size) {
    stompbox_alsa_midi *midi = open_client(client_name, 1, error, error_size);
    if (!midi) return NULL;
    // Port announcements (System:Announce) tell of devices plugged in later.
    snd_seq_connect_from(midi->seq, midi->port, SND_SEQ_CLIENT_SYSTEM, SND_SEQ_PORT_SYSTEM_ANNOUNCE);
    connect_all(midi);
    return midi;
}

int stompbox_alsa_midi_client(const stompbox_alsa_midi *midi) { return midi->client; }
int stompbox_alsa_midi_port(const stompbox_alsa_midi *midi) { return midi->port; }
int stompbox_alsa_midi_connections(const stompbox_alsa_midi *midi) { return midi->connections; }

int stompbox_alsa_midi_read(stompbox_alsa_midi *midi, int timeout_ms, unsigned char *out, int capacity) {
    int count = snd_seq_poll_descriptors_count(midi->seq, POLLIN);
    if (count <= 0 || count > 8) return -1;
    struct pollfd fds[8];
    snd_seq_poll_descriptors(midi->seq, fds, (unsigned)count, POLLIN);
    if (snd_seq_event_input_pending(midi->seq, 0) == 0) {
        int ready = poll(fds, (nfds_t)count, timeout_ms);
        if (ready < 0) return errno == EINTR ? 0 : -1;
        if (ready == 0) return 0;
    }
    int n = 0;
    while (n < capacity) {
        snd_seq_event_t *ev = NULL;
        int err = snd_seq_event_input(midi->seq, &ev);
        if (err == -EAGAIN || ev == NULL) break;
        if (err < 0 && err != -ENOSPC) return n > 0 ? n : -1;
        unsigned char *m = out + 4 * n;
        switch (ev->type) {
        case SND_SEQ_EVENT_PGMCHANGE:
            m[0] = 2; m[1] = 0xC0 | (ev->data.control.channel & 15); m[2] = ev->data.control.value & 127; m[3] = 0; n++;
            break;
        case SND_SEQ_EVENT_CONTROLLER:
            m[0] = 3; m[1] = 0xB0 | (ev->data.control.channel & 15); m[2] = ev->data.control.param & 127;
            m[3] = ev->data.control.value & 127; n++;
            break;
        case SND_SEQ_EVENT_NOTEON:
        case SND_SEQ_EVENT_NOTEOFF:
            m[0] = 3; m[1] = (ev->type == SND_SEQ_EVENT_NOTEON ? 0x90 : 0x80) | (ev->data.note.channel & 15);
            m[2] = ev->data.note.note & 127; m[3] = ev->data.note.velocity & 127; n++;
            break;
        case SND_SEQ_EVENT_PORT_START: {
            snd_seq_port_info_t *info;
            snd_seq_port_info_alloca(&info);
            if (snd_seq_get_any_port_info(midi->seq, ev->data.addr.client, ev->data.addr.port, info) == 0 && is_input_device(midi, info)) {
                connect_from(midi, ev->data.addr.client, ev->data.addr.port);
            }
            break;
        }
        // Anything connected to midi_in (a device, aconnect, another program), the
        // announcements themselves left out.
        case SND_SEQ_EVENT_PORT_SUBSCRIBED:
            if (ev->data.connect.dest.client == midi->client && ev->data.connect.dest.port == midi->port
                && ev->data.connect.sender.client != SND_SEQ_CLIENT_SYSTEM) midi->connections++;
            break;
        case SND_SEQ_EVENT_PORT_UNSUBSCRIBED:
            if (ev->data.connect.dest.client == midi->client && ev->data.connect.dest.port == midi->port
                && ev->data.connect.sender.client != SND_SEQ_CLIENT_SYSTEM && midi->connections > 0) midi->connections--;
            break;
        default:
            break;
        }
        if (snd_seq_event_input_pending(midi->seq, 0) == 0) break;
    }
    return n;
}

void stompbox_alsa_midi_close(stompbox_alsa_midi *midi) {
    if (!midi) return;
    snd_seq_close(midi->seq);
    free(midi);
}

stompbox_alsa_midi *stompbox_alsa_midi_open_sender(const char *client_name, int dest_client, int dest_port, char *error, size_t error_size) {
    stompbox_alsa_midi *midi = open_client(client_name, 0, error, error_size);
    if (!midi) return NULL;
    int err = snd_seq_connect_to(midi->seq, midi->port, dest_client, dest_port);
    if (err < 0) {
        snprintf(error, error_size, "cannot connect to %d:%d (%s)", dest_client, dest_port, snd_strerror(err));
        stompbox_alsa_midi_close(midi);
        return NULL;
    }
    return midi;
}

int stompbox_alsa_midi_send(stompbox_alsa_midi *sender, int kind, int channel, int number, int value) {
    snd_seq_event_t ev;
    snd_seq_ev_clear(&ev);
    snd_seq_ev_set_source(&ev, sender->port);
    snd_seq_ev_set_subs(&ev);
    snd_seq_ev_set_direct(&ev);
    switch (kind) {
    case 0: snd_seq_ev_set_pgmchange(&ev, channel, number); break;
    case 1: snd_seq_ev_set_controller(&ev, channel, number, value); break;
    default: snd_seq_ev_set_noteon(&ev, channel, number, value); break;
    }
    int err = snd_seq_event_output_direct(sender->seq, &ev);
    return err < 0 ? err : 0;
}
