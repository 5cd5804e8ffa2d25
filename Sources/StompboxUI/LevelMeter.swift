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
        let perSecond = Double(PedalboardWindow.pollsPerSecond)
        level = max(peakDB, level - 45 / perSecond)   // 45 dB/s fall
        if level >= hold { hold = level; holdAge = 0 } else {
            holdAge += 1
            if Double(holdAge) > 1.5 * perSecond { hold = max(level, hold - 30 / perSecond) }
        }
        if clip { clipped = true }
        reduction = max(reductionDB, reduction - 30 / perSecond)
        if reduction < 0.05 { reduction = 0 }
        feeds += 1
        // The description a screen reader reads: formatted only when it changes, and at most
        // twice a second unless the clip light changed (nobody listens to 20 updates a second).
        // Checked on every feed, so a level that settles right after a skipped update is still
        // said within half a second.
        let words = (db: level <= -60 ? Int.min : Int(level.rounded()), clipped: clipped, reductionTenths: Int((reduction * 10).rounded()))
        if words != spoken, words.clipped != spoken.clipped || feeds - spokenAt >= PedalboardWindow.pollsPerSecond / 2, let accessible = gtk_widget_get_accessible(widget) {
            spokenAt = feeds
            spoken = words
            var text = level <= -60 ? "no signal" : "\(words.db) dB" + (clipped ? ", clipped" : "")
            if reduction > 0 { text += String(format: ", limiter −%.1f dB", reduction) }
            atk_object_set_description(accessible, text)
        }
        guard before != (level, hold, clipped, reduction) else { return }
        // Redrawn only when what it shows changes: lit segments, the hold line's row, the clip
        // light, the limiter bar's length (a redraw costs the board's background beneath too).
        let h = Double(gtk_widget_get_allocated_height(widget))
        let shown = Shown(lit: litSegments, holdRow: hold > -60 ? Int(rowOf(hold, height: h)) : -1,
                          clipped: clipped, reductionRows: Int((min(reduction / 2, Double(Self.segments)) * segmentHeight(h)).rounded()))
        guard shown != drawn else { return }
        if shown.clipped != drawn.clipped {
            gtk_widget_queue_draw(widget)
        } else {
            // Only the rows that changed (the housing, clip light and title are as they were):
            // between the old and new tops of the lit segments, the old and new hold lines, the
            // limiter bar's old and new ends.
            let w = gtk_widget_get_allocated_width(widget), segH = segmentHeight(h), bottom = h - 18
            func band(_ a: Double, _ b: Double) {
                let y0 = Int32((min(a, b) - 2).rounded(.down)), y1 = Int32((max(a, b) + 3).rounded(.up))
                gtk_widget_queue_draw_area(widget, 0, y0, w, y1 - y0)
            }
            if shown.lit != drawn.lit { band(bottom - Double(shown.lit) * segH, bottom - Double(drawn.lit) * segH) }
            if shown.holdRow != drawn.holdRow {
                for row in [shown.holdRow, drawn.holdRow] where row >= 0 { band(Double(row), Double(row)) }
            }
            if shown.reductionRows != drawn.reductionRows {
                band(Self.top + Double(shown.reductionRows), Self.top + Double(drawn.reductionRows))
            }
        }
        drawn = shown
    }

    private struct Shown: Equatable {
        var lit: Int
        var holdRow: Int
        var clipped: Bool
        var reductionRows: Int
    }
    private var feeds = 0
    private var spokenAt = -100
    private var drawn = Shown(lit: 0, holdRow: -1, clipped: false, reductionRows: 0)
    private var spoken = (db: Int.min, clipped: false, reductionTenths: -1)
    static let segments = 30
    static let top = 30.0

    /// Segments lit at the current level (as `draw` lights them).
    private var litSegments: Int {
        // Segment i lights at -60 + 60 (i + 0.5) / segments dB and above.
        let n = Int(((level + 60) * Double(Self.segments) / 60 + 0.5).rounded(.down))
        return min(max(n, 0), Self.segments)
    }

    private func segmentHeight(_ h: Double) -> Double { (h - 18 - Self.top) / Double(Self.segments) }

    private func rowOf(_ db: Double, height h: Double) -> Double {
        let bottom = h - 18
        return max(Self.top, bottom - (db + 60) / 60 * (bottom - Self.top)).rounded()
    }

    private func draw(_ cr: OpaquePointer) {
        let w = Double(gtk_widget_get_allocated_width(widget)), h = Double(gtk_widget_get_allocated_height(widget))
        let top = Self.top, bottom = h - 18, x = 9.0, barW = w - 18
        // Housing.
        cairo_set_source_rgb(cr, 0.07, 0.07, 0.08)
        roundedRectangle(cr, 2, 0, w - 4, h, 6)
        cairo_fill(cr)
        // What needs painting: a ladder-only repaint (see `feed`) skips the clip light and title.
        var cx1 = 0.0, cy1 = 0.0, cx2 = 0.0, cy2 = 0.0
        cairo_clip_extents(cr, &cx1, &cy1, &cx2, &cy2)
        let whole = cy1 < top - 2 || cy2 > bottom + 2
        // Clip light.
        if whole {
            if clipped { cairo_set_source_rgb(cr, 1, 0.15, 0.1) } else { cairo_set_source_rgb(cr, 0.25, 0.05, 0.05) }
            roundedRectangle(cr, x, 8, barW, 14, 3)
            cairo_fill(cr)
        }
        // Segments: one path per colour, lit and unlit (six fills, not thirty).
        let segments = Self.segments
        let segH = (bottom - top) / Double(segments)
        let lit = litSegments
        let colours = [(1.0, 0.2, 0.12), (1.0, 0.78, 0.1), (0.25, 0.95, 0.35)]
        func colourIndex(_ i: Int) -> Int {
            let db = -60 + 60 * Double(i + 1) / Double(segments)
            return db > -3 ? 0 : db > -12 ? 1 : 2
        }
        for c in 0..<3 {
            for on in [true, false] {
                var any = false
                for i in 0..<segments where colourIndex(i) == c && (i < lit) == on {
                    cairo_rectangle(cr, x, bottom - Double(i + 1) * segH + 1, barW, segH - 2)
                    any = true
                }
                guard any else { continue }
                cairo_set_source_rgba(cr, colours[c].0, colours[c].1, colours[c].2, on ? 1 : 0.13)
                cairo_fill(cr)
            }
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
        guard whole else { return }
        cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD)
        cairo_set_font_size(cr, 9)
        var extents = cairo_text_extents_t()
        cairo_text_extents(cr, title, &extents)
        cairo_set_source_rgb(cr, 0.85, 0.85, 0.85)
        cairo_move_to(cr, w / 2 - extents.width / 2 - extents.x_bearing, h - 5)
        cairo_show_text(cr, title)
    }
}
