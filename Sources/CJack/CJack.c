#include "CJack.h"

jack_client_t *stompbox_jack_open(const char *name, jack_status_t *status) {
    return jack_client_open(name, JackNoStartServer, status);
}

static void quiet(const char *message) { (void)message; }

void stompbox_jack_silence(void) {
    jack_set_error_function(quiet);
    jack_set_info_function(quiet);
}
