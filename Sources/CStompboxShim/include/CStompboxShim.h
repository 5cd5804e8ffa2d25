#ifndef CSTOMPBOXSHIM_H
#define CSTOMPBOXSHIM_H
#include <gtk/gtk.h>

/// g_signal_connect is a macro; Swift needs a function.
gulong stompbox_signal_connect(gpointer instance, const gchar *signal, GCallback handler,
                               gpointer data, GClosureNotify destroy);

#endif
