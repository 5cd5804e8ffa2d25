import CGtk
import Foundation
import StompboxDSP

/// The small parts of a pedal's face that are not knobs, drawn in the pedal's style over its
/// artwork: a toggle (a bat lever with an LED and its printed name), a labelled mini-menu (its
/// name and the choice it stands at, a drop-down of the choices on a press), and a printed push
/// button. Each is a real GTK button underneath (focus, keys, touch, accessibility, MIDI learn),
/// whose own drawing is replaced; each draws in the pedal's coordinates at the board's zoom.
enum FaceControl {
    /// A GTK button that draws nothing of its own: `draw` paints it (given the button), in the
    /// pedal's coordinates (`width` × `height` at `zoom`).
    static func button(toggle: Bool, width: Int, height: Int, zoom: Double,
                       draw: @escaping (OpaquePointer, UnsafeMutablePointer<GtkWidget>) -> Void) -> UnsafeMutablePointer<GtkWidget> {
        let widget = toggle ? gtk_toggle_button_new()! : gtk_button_new()!
        addClass(widget, "face-control")
        gtk_widget_set_size_request(widget, zoomed(width, zoom), zoomed(height, zoom))
        onEvent(raw(widget), "draw") { cr in
            let cr = OpaquePointer(cr!)
            cairo_scale(cr, zoom, zoom)
            draw(cr, widget)
            return true
        }
        return widget
    }

    static func isFocused(_ widget: UnsafeMutablePointer<GtkWidget>) -> Bool { gtk_widget_has_visible_focus(widget) != 0 }
    static func isPressed(_ widget: UnsafeMutablePointer<GtkWidget>) -> Bool {
        gtk_widget_get_state_flags(widget).rawValue & GTK_STATE_FLAG_ACTIVE.rawValue != 0
    }

    /// A toggle: the lever up and the LED lit when on, its name printed under it (bright when on).
    static func drawToggle(_ cr: OpaquePointer, width: Int, on: Bool, name: String, ink: PedalInk, focused: Bool) {
        let cx = Double(width) / 2, cy = 15.0
        // The LED beside the lever.
        let ledX = cx + 17
        if on {
            let glow = cairo_pattern_create_radial(ledX, cy, 0.5, ledX, cy, 7)
            cairo_pattern_add_color_stop_rgba(glow, 0, 1, 0.35, 0.2, 0.9)
            cairo_pattern_add_color_stop_rgba(glow, 1, 1, 0.2, 0.1, 0)
            cairo_set_source(cr, glow)
            cairo_arc(cr, ledX, cy, 7, 0, 2 * .pi)
            cairo_fill(cr)
            cairo_pattern_destroy(glow)
            cairo_set_source_rgb(cr, 1, 0.3, 0.15)
        } else {
            cairo_set_source_rgb(cr, 0.25, 0.06, 0.05)
        }
        cairo_arc(cr, ledX, cy, 2.6, 0, 2 * .pi)
        cairo_fill(cr)
        // The nut the lever stands in.
        let nut = cairo_pattern_create_radial(cx - 2, cy - 2, 1, cx, cy, 8)
        cairo_pattern_add_color_stop_rgb(nut, 0, 0.97, 0.97, 0.98)
        cairo_pattern_add_color_stop_rgb(nut, 0.6, 0.62, 0.65, 0.68)
        cairo_pattern_add_color_stop_rgb(nut, 1, 0.28, 0.30, 0.32)
        cairo_set_source(cr, nut)
        cairo_arc(cr, cx, cy, 7.5, 0, 2 * .pi)
        cairo_fill(cr)
        cairo_pattern_destroy(nut)
        cairo_set_source_rgb(cr, 0.12, 0.12, 0.13)
        cairo_arc(cr, cx, cy, 3.2, 0, 2 * .pi)
        cairo_fill(cr)
        // The bat lever, towards "on" (up) or "off" (down), with its shadow.
        let tip = on ? cy - 12.5 : cy + 12.5
        cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND)
        cairo_set_source_rgba(cr, 0, 0, 0, 0.35)
        cairo_set_line_width(cr, 4)
        cairo_move_to(cr, cx + 1.5, cy + 1.5)
        cairo_line_to(cr, cx + 1.5, tip + 1.5)
        cairo_stroke(cr)
        let lever = cairo_pattern_create_linear(cx - 3, 0, cx + 3, 0)
        cairo_pattern_add_color_stop_rgb(lever, 0, 0.55, 0.58, 0.61)
        cairo_pattern_add_color_stop_rgb(lever, 0.4, 0.98, 0.98, 0.99)
        cairo_pattern_add_color_stop_rgb(lever, 1, 0.45, 0.48, 0.51)
        cairo_set_source(cr, lever)
        cairo_set_line_width(cr, 3.6)
        cairo_move_to(cr, cx, cy)
        cairo_line_to(cr, cx, tip)
        cairo_stroke(cr)
        cairo_arc(cr, cx, tip, 3.3, 0, 2 * .pi)
        cairo_fill(cr)
        cairo_pattern_destroy(lever)
        // Its name.
        cairo_set_source_rgba(cr, ink.red, ink.green, ink.blue, on ? 1 : 0.6)
        printed(cr, name, centreX: cx, baseline: 40, size: 8.5, maxWidth: Double(width) - 2)
        if focused { focusRing(cr, width: Double(width), height: Double(PedalFace.toggleHeight)) }
    }

    /// A mini-menu: a dark window with the menu's name (if any) and the choice it stands at,
    /// and a ▾ that says it opens.
    static func drawMenu(_ cr: OpaquePointer, width: Int, caption: String?, value: String, ink: PedalInk, focused: Bool) {
        let w = Double(width), h = Double(PedalFace.menuHeight)
        window(cr, width: w, height: h, ink: ink)
        var x = 7.0
        if let caption {
            cairo_set_source_rgba(cr, ink.red, ink.green, ink.blue, 0.8)
            x += printed(cr, caption, left: x, baseline: h / 2 + 3.2, size: 8, maxWidth: w / 2) + 6
        }
        cairo_set_source_rgb(cr, 0.55, 1, 0.82)
        printed(cr, value, left: x, baseline: h / 2 + 4, size: 10.5, maxWidth: w - x - 16, bold: true)
        // ▾
        cairo_set_source_rgba(cr, ink.red, ink.green, ink.blue, 0.85)
        cairo_move_to(cr, w - 13, h / 2 - 2)
        cairo_line_to(cr, w - 6, h / 2 - 2)
        cairo_line_to(cr, w - 9.5, h / 2 + 2.5)
        cairo_close_path(cr)
        cairo_fill(cr)
        if focused { focusRing(cr, width: w, height: h) }
    }

    /// A push button printed on the face: its words on a small dark plate, darker while pressed.
    static func drawButton(_ cr: OpaquePointer, width: Int, height: Int, title: String, pressed: Bool, ink: PedalInk, focused: Bool) {
        let w = Double(width), h = Double(height)
        window(cr, width: w, height: h, ink: ink, depth: pressed ? 0.95 : 0.7)
        cairo_set_source_rgba(cr, ink.red, ink.green, ink.blue, 0.95)
        printed(cr, title, centreX: w / 2, baseline: h / 2 + 3, size: 8.5, maxWidth: w - 10, bold: true)
        if focused { focusRing(cr, width: w, height: h) }
    }

    /// A recessed dark window with a thin rim in the pedal's ink.
    private static func window(_ cr: OpaquePointer, width w: Double, height h: Double, ink: PedalInk, depth: Double = 0.85) {
        roundedRectangle(cr, 0.5, 0.5, w - 1, h - 1, 5)
        cairo_set_source_rgba(cr, 0.03, 0.035, 0.04, depth)
        cairo_fill_preserve(cr)
        cairo_set_source_rgba(cr, ink.red, ink.green, ink.blue, 0.45)
        cairo_set_line_width(cr, 1)
        cairo_stroke(cr)
        // Glass: a faint light along the top.
        roundedRectangle(cr, 2, 1.5, w - 4, h / 2 - 2, 4)
        cairo_set_source_rgba(cr, 1, 1, 1, 0.06)
        cairo_fill(cr)
    }

    private static func focusRing(_ cr: OpaquePointer, width: Double, height: Double) {
        cairo_set_source_rgba(cr, 1.0, 0.85, 0.3, 0.9)
        cairo_set_line_width(cr, 1.5)
        roundedRectangle(cr, 1, 1, width - 2, height - 2, 5)
        cairo_stroke(cr)
    }

    /// Selects the pedals' printed type at `size`, shrunk so `text` is at most `maxWidth`
    /// wide; returns its extents at the size chosen. Every name printed on a face goes through
    /// it, so a long one (a plugin's port name, a cabinet's) never runs into its neighbour.
    @discardableResult
    static func fitFont(_ cr: OpaquePointer, _ text: String, size: Double, maxWidth: Double, bold: Bool = true) -> cairo_text_extents_t {
        cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(cr, size)
        var extents = cairo_text_extents_t()
        cairo_text_extents(cr, text, &extents)
        let width = max(extents.width, extents.x_advance)
        if width > maxWidth, width > 0 {
            cairo_set_font_size(cr, size * maxWidth / width)
            cairo_text_extents(cr, text, &extents)
        }
        return extents
    }

    /// Prints `text` (shrunk to `maxWidth` if it must be) left-aligned at `left`; returns its width.
    @discardableResult
    static func printed(_ cr: OpaquePointer, _ text: String, left: Double, baseline: Double, size: Double, maxWidth: Double, bold: Bool = true) -> Double {
        let extents = fitFont(cr, text, size: size, maxWidth: maxWidth, bold: bold)
        cairo_move_to(cr, left, baseline)
        cairo_show_text(cr, text)
        return extents.x_advance
    }

    /// Prints `text` (shrunk to `maxWidth` if it must be) centred on `centreX`.
    static func printed(_ cr: OpaquePointer, _ text: String, centreX: Double, baseline: Double, size: Double, maxWidth: Double, bold: Bool = true) {
        let extents = fitFont(cr, text, size: size, maxWidth: maxWidth, bold: bold)
        cairo_move_to(cr, centreX - extents.x_advance / 2, baseline)
        cairo_show_text(cr, text)
    }
}
