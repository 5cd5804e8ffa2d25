import CGtk
import Foundation

/// A vertical LED-ladder peak meter (−60…0 dBFS) with peak hold and a clip light that stays
/// lit until clicked. Fed about 30 times a second from the engine's status. The output meter
/// also shows the limiter's gain reduction: a cyan bar hanging from the top of the ladder,
/// 2 dB a segment, and in its accessible description.
final class LevelMeter {
    let widget: UnsafeMutablePointer<GtkWidget>
    let title: String
    private var level = -120.0
    private var hold = -120.0
    private var holdAge = 0
    private(set) var clipped = false
    /// The limiter's gain reduction shown (dB, ≥ 0), falling back at ~30 dB/s.
    private(set) var reduction = 0.0
    private var gestures: [OpaquePointer] = []

    init(title: String, accessibleName: String) {
        self.title = title
        widget = gtk_drawing_area_new()
        gtk_widget_set_size_request(widget, 34, 300)
        gtk_widget_add_events(widget, Int32(bitPattern: GDK_BUTTON_PRESS_MASK.rawValue | GDK_BUTTON_RELEASE_MASK.rawValue))
        gtk_widget_set_tooltip_text(widget, "\(accessibleName) (click to reset the clip light)")
        setAccessible(widget, name: accessibleName, description: "no signal", role: ATK_ROLE_LEVEL_BAR)
        onEvent(raw(widget), "draw") { [unowned self] cr in draw(OpaquePointer(cr!)); return true }
        let press = gtk_gesture_multi_press_new(widget)!
        gestures = [press]
        onPress(raw(press), "pressed") { [unowned self] _, _, _ in clipped = false; gtk_widget_queue_draw(widget) }
        onSignal(raw(widget), "destroy") { [unowned self] in
            for g in gestures { g_object_unref(raw(g)) }
            gestures = []
        }
    }

    /// The peak (dBFS) since the previous call; `clip` lights the clip indicator; `reductionDB`
    /// is how far the limiter turned the output down since then.
    func feed(peakDB: Double, clip: Bool, reductionDB: Double = 0) {
        let before = (level, hold, clipped, reduction)
        level = max(peakDB, level - 1.5)   // ~45 dB/s fall
        if level >= hold { hold = level; holdAge = 0 } else {
            holdAge += 1
            if holdAge > 45 { hold = max(level, hold - 1.0) }
        }
        if clip { clipped = true }
        reduction = max(reductionDB, reduction - 1.0)
        if reduction < 0.05 { reduction = 0 }
        if before != (level, hold, clipped, reduction) {
            if let accessible = gtk_widget_get_accessible(widget) {
                var text = level <= -60 ? "no signal" : String(format: "%.0f dB", level) + (clipped ? ", clipped" : "")
                if reduction > 0 { text += String(format: ", limiter −%.1f dB", reduction) }
                atk_object_set_description(accessible, text)
            }
            gtk_widget_queue_draw(widget)
        }
    }

    private func draw(_ cr: OpaquePointer) {
        let w = Double(gtk_widget_get_allocated_width(widget)), h = Double(gtk_widget_get_allocated_height(widget))
        let top = 30.0, bottom = h - 18, x = 9.0, barW = w - 18
        // Housing.
        cairo_set_source_rgb(cr, 0.07, 0.07, 0.08)
        roundedRectangle(cr, 2, 0, w - 4, h, 6)
        cairo_fill(cr)
        // Clip light.
        if clipped { cairo_set_source_rgb(cr, 1, 0.15, 0.1) } else { cairo_set_source_rgb(cr, 0.25, 0.05, 0.05) }
        roundedRectangle(cr, x, 8, barW, 14, 3)
        cairo_fill(cr)
        // Segments.
        let segments = 30
        let segH = (bottom - top) / Double(segments)
        for i in 0..<segments {
            let db = -60 + 60 * Double(i + 1) / Double(segments)
            let lit = level >= db - 60.0 / Double(segments) / 2
            let (r, g, b) = db > -3 ? (1.0, 0.2, 0.12) : db > -12 ? (1.0, 0.78, 0.1) : (0.25, 0.95, 0.35)
            cairo_set_source_rgba(cr, r, g, b, lit ? 1 : 0.13)
            cairo_rectangle(cr, x, bottom - Double(i + 1) * segH + 1, barW, segH - 2)
            cairo_fill(cr)
        }
        if reduction > 0 {
            // Gain reduction from the top down, 2 dB a segment.
            let length = min(reduction / 2 * segH, bottom - top)
            cairo_set_source_rgb(cr, 0.05, 0.05, 0.06)
            cairo_rectangle(cr, x + barW / 2 - 4, top, 8, length + 1)
            cairo_fill(cr)
            cairo_set_source_rgb(cr, 0.25, 0.8, 1)
            cairo_rectangle(cr, x + barW / 2 - 3, top, 6, length)
            cairo_fill(cr)
        }
        if hold > -60 {
            let y = bottom - (hold + 60) / 60 * (bottom - top)
            cairo_set_source_rgb(cr, 1, 1, 1)
            cairo_rectangle(cr, x, max(top, y), barW, 2)
            cairo_fill(cr)
        }
        cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD)
        cairo_set_font_size(cr, 9)
        var extents = cairo_text_extents_t()
        cairo_text_extents(cr, title, &extents)
        cairo_set_source_rgb(cr, 0.85, 0.85, 0.85)
        cairo_move_to(cr, w / 2 - extents.width / 2 - extents.x_bearing, h - 5)
        cairo_show_text(cr, title)
    }
}
