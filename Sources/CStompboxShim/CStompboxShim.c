#include "CStompboxShim.h"
#include <gtk/gtk-a11y.h>
#include <gdk/gdkx.h>
#include <stdlib.h>
#include <string.h>

gulong stompbox_signal_connect(gpointer instance, const gchar *signal, GCallback handler,
                               gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, handler, data, destroy, 0);
}

void stompbox_prefer_dark_theme(void) {
    GtkSettings *settings = gtk_settings_get_default();
    if (settings) g_object_set(settings, "gtk-application-prefer-dark-theme", TRUE, NULL);
}

void stompbox_object_set_double(gpointer object, const char *property, double value) {
    g_object_set(object, property, value, NULL);
}

/* AtkValue for drawn controls: an accessible type that reads the model kept on its widget. */

typedef struct { GtkWidgetAccessible parent; } StompboxValueAccessible;
typedef struct { GtkWidgetAccessibleClass parent_class; } StompboxValueAccessibleClass;

static void stompbox_value_accessible_value_init(AtkValueIface *iface);
G_DEFINE_TYPE_WITH_CODE(StompboxValueAccessible, stompbox_value_accessible, GTK_TYPE_WIDGET_ACCESSIBLE,
                        G_IMPLEMENT_INTERFACE(ATK_TYPE_VALUE, stompbox_value_accessible_value_init))

static const char *model_key = "stompbox-value-model";

static StompboxValueModel *model_of(AtkValue *value) {
    GtkWidget *widget = gtk_accessible_get_widget(GTK_ACCESSIBLE(value));
    return widget ? g_object_get_data(G_OBJECT(widget), model_key) : NULL;
}

static void set_double(GValue *out, double v) {
    memset(out, 0, sizeof(GValue));
    g_value_init(out, G_TYPE_DOUBLE);
    g_value_set_double(out, v);
}

static void get_current_value(AtkValue *value, GValue *out) {
    StompboxValueModel *m = model_of(value);
    set_double(out, m ? m->get(m->context) : 0);
}

static void get_maximum_value(AtkValue *value, GValue *out) {
    StompboxValueModel *m = model_of(value);
    set_double(out, m ? m->maximum : 0);
}

static void get_minimum_value(AtkValue *value, GValue *out) {
    StompboxValueModel *m = model_of(value);
    set_double(out, m ? m->minimum : 0);
}

static void get_minimum_increment(AtkValue *value, GValue *out) {
    StompboxValueModel *m = model_of(value);
    set_double(out, m ? m->increment(m->context) : 0);
}

static gboolean set_current_value(AtkValue *value, const GValue *in) {
    StompboxValueModel *m = model_of(value);
    if (!m || !G_VALUE_HOLDS_DOUBLE(in)) return FALSE;
    m->set(m->context, g_value_get_double(in));
    return TRUE;
}

static void get_value_and_text(AtkValue *value, gdouble *current, gchar **text) {
    StompboxValueModel *m = model_of(value);
    double v = m ? m->get(m->context) : 0;
    if (current) *current = v;
    if (text) {
        char *t = m ? m->text(m->context, v) : NULL;
        *text = g_strdup(t ? t : "");
        free(t);
    }
}

static AtkRange *get_range(AtkValue *value) {
    StompboxValueModel *m = model_of(value);
    return m ? atk_range_new(m->minimum, m->maximum, NULL) : NULL;
}

static gdouble get_increment(AtkValue *value) {
    StompboxValueModel *m = model_of(value);
    return m ? m->increment(m->context) : 0;
}

static void set_value(AtkValue *value, gdouble v) {
    StompboxValueModel *m = model_of(value);
    if (m) m->set(m->context, v);
}

static void stompbox_value_accessible_value_init(AtkValueIface *iface) {
    iface->get_current_value = get_current_value;
    iface->get_maximum_value = get_maximum_value;
    iface->get_minimum_value = get_minimum_value;
    iface->get_minimum_increment = get_minimum_increment;
    iface->set_current_value = set_current_value;
    iface->get_value_and_text = get_value_and_text;
    iface->get_range = get_range;
    iface->get_increment = get_increment;
    iface->set_value = set_value;
}

/* The value as words in the "valuetext" attribute too (ARIA's aria-valuetext): what Orca reads
   for a dial or slider ("420 milliseconds") where the bridge has no Value.Text. */
static AtkAttributeSet *(*parent_get_attributes)(AtkObject *);

static AtkAttributeSet *get_attributes(AtkObject *object) {
    AtkAttributeSet *set = parent_get_attributes ? parent_get_attributes(object) : NULL;
    StompboxValueModel *m = model_of(ATK_VALUE(object));
    if (!m) return set;
    char *t = m->text(m->context, m->get(m->context));
    AtkAttribute *attribute = g_new(AtkAttribute, 1);
    attribute->name = g_strdup("valuetext");
    attribute->value = g_strdup(t ? t : "");
    free(t);
    return g_slist_append(set, attribute);
}

static void stompbox_value_accessible_class_init(StompboxValueAccessibleClass *klass) {
    AtkObjectClass *object_class = ATK_OBJECT_CLASS(klass);
    parent_get_attributes = object_class->get_attributes;
    object_class->get_attributes = get_attributes;
}
static void stompbox_value_accessible_init(StompboxValueAccessible *self) { (void)self; }

typedef struct { GtkDrawingArea parent; } StompboxValueArea;
typedef struct { GtkDrawingAreaClass parent_class; } StompboxValueAreaClass;
G_DEFINE_TYPE(StompboxValueArea, stompbox_value_area, GTK_TYPE_DRAWING_AREA)

static void stompbox_value_area_class_init(StompboxValueAreaClass *klass) {
    gtk_widget_class_set_accessible_type(GTK_WIDGET_CLASS(klass), stompbox_value_accessible_get_type());
}
static void stompbox_value_area_init(StompboxValueArea *self) { (void)self; }

GtkWidget *stompbox_value_area_new(void) {
    return GTK_WIDGET(g_object_new(stompbox_value_area_get_type(), NULL));
}

void stompbox_value_area_set_model(GtkWidget *area, const StompboxValueModel *model) {
    StompboxValueModel *copy = NULL;
    if (model) {
        copy = g_new(StompboxValueModel, 1);
        *copy = *model;
    }
    g_object_set_data_full(G_OBJECT(area), model_key, copy, g_free);
}

void stompbox_value_area_changed(GtkWidget *area) {
    StompboxValueModel *m = g_object_get_data(G_OBJECT(area), model_key);
    AtkObject *accessible = gtk_widget_get_accessible(area);
    if (!m || !accessible) return;
    double v = m->get(m->context);
    char *t = m->text(m->context, v);
    g_signal_emit_by_name(accessible, "value-changed", v, t ? t : "");
    free(t);
    g_object_notify(G_OBJECT(accessible), "accessible-value");
}

/* Synthetic touch for tests. */

static GdkDevice *test_touchscreen(GdkDisplay *display) {
    static GdkDevice *device;
    if (!device && GDK_IS_X11_DISPLAY(display)) {
        G_GNUC_BEGIN_IGNORE_DEPRECATIONS
        GdkDeviceManager *manager = gdk_display_get_device_manager(display);
        G_GNUC_END_IGNORE_DEPRECATIONS
        device = g_object_new(GDK_TYPE_X11_DEVICE_XI2, "name", "Stompbox test touchscreen",
                              "type", GDK_DEVICE_TYPE_SLAVE, "input-source", GDK_SOURCE_TOUCHSCREEN,
                              "input-mode", GDK_MODE_SCREEN, "has-cursor", FALSE, "display", display,
                              "device-manager", manager, "seat", gdk_display_get_default_seat(display),
                              "device-id", 4242, NULL);
    }
    return device;
}

/* The deepest visible window of `window`'s tree under (x, y) (relative to `window`);
   the point is made relative to the window found. */
static GdkWindow *window_at(GdkWindow *window, double *x, double *y) {
    for (GList *l = gdk_window_peek_children(window); l; l = l->next) {
        GdkWindow *child = l->data;
        if (!gdk_window_is_visible(child)) continue;
        int cx, cy, cw, ch;
        gdk_window_get_geometry(child, &cx, &cy, &cw, &ch);
        if (*x >= cx && *y >= cy && *x < cx + cw && *y < cy + ch) {
            *x -= cx;
            *y -= cy;
            return window_at(child, x, y);
        }
    }
    return window;
}

int stompbox_test_touch(GtkWidget *toplevel, GdkEventType type, unsigned sequence, double root_x, double root_y) {
    GdkWindow *top = gtk_widget_get_window(toplevel);
    if (!top) return 0;
    int ox, oy;
    gdk_window_get_origin(top, &ox, &oy);
    int scale = gdk_window_get_scale_factor(top);
    double x = root_x / scale - ox, y = root_y / scale - oy;
    /* A touch belongs to the window it began on until it lifts (X's implicit grab). */
    static GdkWindow *grabbed[16];
    unsigned slot = sequence % 16;
    GdkWindow *target;
    if (type == GDK_TOUCH_BEGIN || !grabbed[slot]) {
        if (x < 0 || y < 0 || x >= gdk_window_get_width(top) || y >= gdk_window_get_height(top)) return 0;
        target = window_at(top, &x, &y);
        g_clear_object(&grabbed[slot]);
        grabbed[slot] = g_object_ref(target);
    } else {
        target = grabbed[slot];
        int tx, ty;
        gdk_window_get_origin(target, &tx, &ty);
        x = root_x / scale - tx;
        y = root_y / scale - ty;
    }
    GdkDevice *device = test_touchscreen(gdk_window_get_display(top));
    if (!device) return 0;
    GdkEvent *event = gdk_event_new(type);
    event->touch.window = g_object_ref(target);
    event->touch.send_event = TRUE;
    event->touch.time = (guint32)(g_get_monotonic_time() / 1000);
    event->touch.x = x;
    event->touch.y = y;
    event->touch.x_root = root_x / scale;
    event->touch.y_root = root_y / scale;
    event->touch.sequence = GUINT_TO_POINTER(sequence);
    event->touch.emulating_pointer = sequence == 1;
    gdk_event_set_device(event, device);
    gdk_event_set_source_device(event, device);
    gtk_main_do_event(event);
    gdk_event_free(event);
    if (type == GDK_TOUCH_END || type == GDK_TOUCH_CANCEL) g_clear_object(&grabbed[slot]);
    return 1;
}
