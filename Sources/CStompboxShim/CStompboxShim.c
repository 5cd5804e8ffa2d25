#include "CStompboxShim.h"

gulong stompbox_signal_connect(gpointer instance, const gchar *signal, GCallback handler,
                               gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, handler, data, destroy, 0);
}
