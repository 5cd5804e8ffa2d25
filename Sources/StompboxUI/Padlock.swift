import CGtk
import Foundation

/// A brass padlock drawn with cairo (so it is sharp at any scale): the body centred on
/// (`centreX`, `centreY`), `size` pixels tall with its shackle; `open` swings the shackle up.
func drawPadlock(_ cr: OpaquePointer, centreX x: Double, centreY y: Double, size: Double, open: Bool = false) {
    let bodyW = size * 0.78, bodyH = size * 0.56
    let bodyX = x - bodyW / 2, bodyY = y - bodyH / 2 + size * 0.16
    let shackleR = bodyW * 0.30, shackleW = size * 0.11
    cairo_save(cr)
    // Shackle: a steel arch standing on the body (lifted and off its right leg when open).
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND)
    cairo_set_line_width(cr, shackleW)
    let lift = open ? size * 0.2 : 0
    let legBottom = bodyY + 1
    let arcY = bodyY - size * 0.06 - lift
    cairo_new_path(cr)
    cairo_move_to(cr, x - shackleR, legBottom)
    cairo_line_to(cr, x - shackleR, arcY)
    cairo_arc(cr, x, arcY, shackleR, .pi, 2 * .pi)
    cairo_line_to(cr, x + shackleR, open ? arcY + size * 0.06 : legBottom)
    cairo_set_source_rgb(cr, 0.12, 0.11, 0.10)
    cairo_set_line_width(cr, shackleW + 2.4)
    cairo_stroke_preserve(cr)
    let steel = cairo_pattern_create_linear(x - shackleR, 0, x + shackleR, 0)!
    cairo_pattern_add_color_stop_rgb(steel, 0, 0.55, 0.57, 0.60)
    cairo_pattern_add_color_stop_rgb(steel, 0.45, 0.93, 0.94, 0.95)
    cairo_pattern_add_color_stop_rgb(steel, 1, 0.50, 0.52, 0.55)
    cairo_set_source(cr, steel)
    cairo_set_line_width(cr, shackleW)
    cairo_stroke(cr)
    cairo_pattern_destroy(steel)

    // Body: brass with a dark outline and a keyhole.
    roundedRectangle(cr, bodyX, bodyY, bodyW, bodyH, size * 0.09)
    let brass = cairo_pattern_create_linear(0, bodyY, 0, bodyY + bodyH)!
    cairo_pattern_add_color_stop_rgb(brass, 0, 1.0, 0.86, 0.42)
    cairo_pattern_add_color_stop_rgb(brass, 0.5, 0.90, 0.66, 0.16)
    cairo_pattern_add_color_stop_rgb(brass, 1, 0.62, 0.40, 0.07)
    cairo_set_source(cr, brass)
    cairo_fill_preserve(cr)
    cairo_pattern_destroy(brass)
    cairo_set_source_rgb(cr, 0.22, 0.14, 0.03)
    cairo_set_line_width(cr, 1.2)
    cairo_stroke(cr)
    let holeY = bodyY + bodyH * 0.42
    cairo_set_source_rgb(cr, 0.18, 0.10, 0.02)
    cairo_arc(cr, x, holeY, size * 0.065, 0, 2 * .pi)
    cairo_fill(cr)
    cairo_move_to(cr, x - size * 0.03, holeY)
    cairo_line_to(cr, x + size * 0.03, holeY)
    cairo_line_to(cr, x + size * 0.045, holeY + size * 0.17)
    cairo_line_to(cr, x - size * 0.045, holeY + size * 0.17)
    cairo_close_path(cr)
    cairo_fill(cr)
    cairo_restore(cr)
}

extension PedalView {
    /// While the store keeps this pedal locked: a padlock over the footswitch and a "LOCKED"
    /// tag over the loop bar, so it reads at a glance that a tap opens the store, not the pedal.
    func drawLockedOverlay(_ cr: OpaquePointer, width: Double, height: Double) {
        let cx = width / 2, cy = Double(layout.switchY)
        cairo_save(cr)
        // Shade the footswitch so it reads as unavailable.
        cairo_set_source_rgba(cr, 0, 0, 0, 0.45)
        cairo_arc(cr, cx, cy, 30, 0, 2 * .pi)
        cairo_fill(cr)
        drawPadlock(cr, centreX: cx, centreY: cy - 2, size: 40)

        // Tag over the loop bar (there is no loop to show while locked).
        let tag = "LOCKED · TAP TO UNLOCK"
        cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD)
        cairo_set_font_size(cr, 9.5)
        var extents = cairo_text_extents_t()
        cairo_text_extents(cr, tag, &extents)
        let tagW = min(width - 24, extents.x_advance + 16), tagH = 26.0
        let tagY = 110.0
        roundedRectangle(cr, cx - tagW / 2, tagY - tagH / 2, tagW, tagH, tagH / 2)
        cairo_set_source_rgba(cr, 0.08, 0.07, 0.06, 0.85)
        cairo_fill_preserve(cr)
        cairo_set_source_rgba(cr, 0.94, 0.71, 0.11, 0.9)
        cairo_set_line_width(cr, 1)
        cairo_stroke(cr)
        cairo_move_to(cr, cx - extents.x_advance / 2, tagY + extents.height / 2 - 0.5)
        cairo_show_text(cr, tag)
        cairo_restore(cr)
    }
}
