#ifndef CSTOMPBOXSHIM_H
#define CSTOMPBOXSHIM_H
#include <gtk/gtk.h>

/// g_signal_connect is a macro; Swift needs a function.
gulong stompbox_signal_connect(gpointer instance, const gchar *signal, GCallback handler,
                               gpointer data, GClosureNotify destroy);

/// g_object_set is variadic: asks the theme for its dark variant.
void stompbox_prefer_dark_theme(void);
/// g_object_set of one double property (g_object_set is variadic).
void stompbox_object_set_double(gpointer object, const char *property, double value);

/// A control's value for screen readers (AtkValue): what a drawn knob hands its accessible.
/// `text` returns a malloc'd string (freed here with free()); `context` is the control's.
typedef struct {
    double (*get)(void *context);
    void (*set)(void *context, double value);
    char *(*text)(void *context, double value);
    double (*increment)(void *context);
    double minimum, maximum;
    void *context;
} StompboxValueModel;

/// A GtkDrawingArea whose accessible implements AtkValue through the model set on it.
GtkWidget *stompbox_value_area_new(void);
/// Sets (copies) or clears (NULL) the model; clear it before the context goes away.
void stompbox_value_area_set_model(GtkWidget *area, const StompboxValueModel *model);
/// Tells assistive technology the value changed (AtkValue's value-changed and accessible-value).
void stompbox_value_area_changed(GtkWidget *area);

/// Tests only (Xvfb has no touchscreen): feeds one touch event (GDK_TOUCH_BEGIN, _UPDATE or
/// _END) of sequence `sequence` at a point of the screen (root pixels) into GTK's event handling,
/// from a touchscreen device, to the window under the point, so the real gestures see it.
/// Returns 0 when the point is on none of `toplevel`'s windows.
int stompbox_test_touch(GtkWidget *toplevel, GdkEventType type, unsigned sequence, double root_x, double root_y);

#endif
