import CGtk
import Foundation
import StompboxDSP

/// A track's face in the tracks panel: its peaks over its length, where it plays, a state light
/// and its title, drawn in one drawing area that is also the track's tap target (mouse, finger,
/// Space or Return when focused).
final class TrackWaveform {
    let widget: UnsafeMutablePointer<GtkWidget>
    /// Peak values 0…1 over the track's length (empty: nothing recorded).
    var peaks: [Float] = [] { didSet { if peaks != oldValue { redraw() } } }
    /// Where it plays, 0…1 (nil: no play head).
    var position: Double? { didSet { if position != oldValue { redraw() } } }
    var light: (Double, Double, Double)? { didSet { if light.map({ [$0.0, $0.1, $0.2] }) != oldValue.map({ [$0.0, $0.1, $0.2] }) { redraw() } } }
    var title = "" { didSet { if title != oldValue { redraw() } } }
    var selected = false { didSet { if selected != oldValue { redraw() } } }
    var onTap: (() -> Void)?
    private var gestures: [OpaquePointer] = []

    static let height: Int32 = 34

    init(accessibleName: String) {
        widget = gtk_drawing_area_new()
        gtk_widget_set_size_request(widget, 176, Self.height)
        gtk_widget_set_can_focus(widget, 1)
        gtk_widget_add_events(widget, Int32(bitPattern: GDK_BUTTON_PRESS_MASK.rawValue | GDK_BUTTON_RELEASE_MASK.rawValue
            | GDK_TOUCH_MASK.rawValue | GDK_KEY_PRESS_MASK.rawValue | GDK_FOCUS_CHANGE_MASK.rawValue))
        setAccessible(widget, name: accessibleName, role: ATK_ROLE_PUSH_BUTTON)
        let press = gtk_gesture_multi_press_new(widget)!
        gestures = [press]
        onPress(raw(press), "pressed") { [unowned self] _, _, _ in
            gtk_widget_grab_focus(widget)
            onTap?()
        }
        onEvent(raw(widget), "key-press-event") { [unowned self] event in
            let e: UnsafeMutablePointer<GdkEventKey> = cast(event)
            switch Int32(e.pointee.keyval) {
            case GDK_KEY_space, GDK_KEY_Return, GDK_KEY_KP_Enter: onTap?(); return onTap != nil
            default: return false
            }
        }
        onEvent(raw(widget), "draw") { [unowned self] cr in draw(OpaquePointer(cr!)); return true }
        onEvent(raw(widget), "focus-in-event") { [unowned self] _ in redraw(); return false }
        onEvent(raw(widget), "focus-out-event") { [unowned self] _ in redraw(); return false }
        onSignal(raw(widget), "destroy") { [unowned self] in
            for g in gestures { g_object_unref(raw(g)) }
            gestures = []
        }
    }

    /// What a screen reader reads as the track's value (its state, length, selection).
    func describe(_ text: String) {
        guard let accessible = gtk_widget_get_accessible(widget),
              atk_object_get_description(accessible).map({ String(cString: $0) }) != text else { return }
        atk_object_set_description(accessible, text)
    }

    private func redraw() { gtk_widget_queue_draw(widget) }

    private func draw(_ cr: OpaquePointer) {
        let w = Double(gtk_widget_get_allocated_width(widget)), h = Double(gtk_widget_get_allocated_height(widget))
        cairo_set_source_rgb(cr, 0.10, 0.10, 0.12)
        roundedRectangle(cr, 0.5, 0.5, w - 1, h - 1, 4)
        cairo_fill_preserve(cr)
        if selected || gtk_widget_has_focus(widget) != 0 {
            cairo_set_source_rgba(cr, 1.0, 0.85, 0.3, selected ? 0.95 : 0.6)
            cairo_set_line_width(cr, selected ? 2 : 1)
            cairo_stroke(cr)
        } else {
            cairo_new_path(cr)
        }
        // Peaks mirrored about the middle, left of the light's column.
        let left = 22.0, right = w - 4, mid = h / 2 + 4, half = h / 2 - 7
        if !peaks.isEmpty {
            cairo_set_source_rgba(cr, 0.55, 0.78, 1.0, 0.85)
            let step = (right - left) / Double(peaks.count)
            for (i, p) in peaks.enumerated() {
                let v = Double(min(1, max(0, p.isFinite ? p : 0))) * half
                cairo_rectangle(cr, left + Double(i) * step, mid - v, max(1, step), max(0.5, 2 * v))
            }
            cairo_fill(cr)
        }
        if let position {
            cairo_set_source_rgba(cr, 1, 1, 1, 0.9)
            let x = left + (right - left) * min(1, max(0, position))
            cairo_rectangle(cr, x - 0.75, 3, 1.5, h - 6)
            cairo_fill(cr)
        }
        let (r, g, b) = light ?? (0.3, 0.3, 0.3)
        cairo_set_source_rgb(cr, r, g, b)
        cairo_arc(cr, 11, h / 2, 5, 0, 2 * .pi)
        cairo_fill(cr)
        cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD)
        cairo_set_font_size(cr, 9)
        cairo_set_source_rgba(cr, 1, 0.94, 0.9, 0.95)
        cairo_move_to(cr, left, 10)
        cairo_show_text(cr, title)
    }
}

/// Looper colours the pedal's LED uses, by state.
func trackLight(_ state: LooperState, waiting: Bool) -> (Double, Double, Double)? {
    switch state {
    case .recording, .overdubbing: waiting ? (0.6, 0.3, 0.1) : (1.0, 0.16, 0.08)
    case .playing: (0.2, 1.0, 0.3)
    case .stopped: waiting ? (0.6, 0.3, 0.1) : nil
    }
}
