#ifndef STOMPBOX_CALSAMIDI_H
#define STOMPBOX_CALSAMIDI_H
#include <stddef.h>

/// Stompbox's MIDI input on the ALSA sequencer: a client (named as asked) with one input port
/// `midi_in`, connected from every hardware MIDI output there is and from each one that
/// appears later (a USB foot controller plugged in while playing).
typedef struct stompbox_alsa_midi stompbox_alsa_midi;

/// Opens the client; NULL with a sentence in `error` when there is no sequencer
/// (`/dev/snd/seq` missing: the snd-seq module not loaded, or a container without it).
stompbox_alsa_midi *stompbox_alsa_midi_open(const char *client_name, char *error, size_t error_size);

/// The client and port numbers ("client:port", as aconnect names them).
int stompbox_alsa_midi_client(const stompbox_alsa_midi *midi);
int stompbox_alsa_midi_port(const stompbox_alsa_midi *midi);

/// How many ports are connected to the input (as announced so far).
int stompbox_alsa_midi_connections(const stompbox_alsa_midi *midi);

/// Waits up to `timeout_ms` for events and decodes them as MIDI bytes: up to `capacity`
/// messages of 4 bytes each into `out` (byte 0 the message's length, 1-3 the message).
/// Program changes, controllers and notes only; a new port announced is connected when it is
/// hardware. Returns the number of messages, 0 on a timeout, -1 when the sequencer failed.
int stompbox_alsa_midi_read(stompbox_alsa_midi *midi, int timeout_ms, unsigned char *out, int capacity);

void stompbox_alsa_midi_close(stompbox_alsa_midi *midi);

/// For tests: a second client with an output port that sends to `client:port`.
stompbox_alsa_midi *stompbox_alsa_midi_open_sender(const char *client_name, int dest_client, int dest_port, char *error, size_t error_size);
/// Sends one program change (kind 0), controller (1) or note on (2) on `channel` (0-15).
int stompbox_alsa_midi_send(stompbox_alsa_midi *sender, int kind, int channel, int number, int value);

#endif
