#ifndef CSTOMPBOXSHIM_H
#define CSTOMPBOXSHIM_H
#include <gtk/gtk.h>

/// g_signal_connect is a macro; Swift needs a function.
gulong stompbox_signal_connect(gpointer instance, const gchar *signal, GCallback handler,
                               gpointer data, GClosureNotify destroy);

/// g_object_set is variadic: asks the theme for its dark variant.
void stompbox_prefer_dark_theme(void);

#endif
