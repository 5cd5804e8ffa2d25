import CGtk
import Foundation
import StompboxDSP

/// The EQ pedal's six vertical sliders (GtkScale: keyboard and AT-SPI value for free) and the
/// frequency-response curve above them, redrawn as a slider moves.
final class EqualizerSection {
    let store: ParameterStore
    let curve: UnsafeMutablePointer<GtkWidget>
    private(set) var sliders: [UnsafeMutablePointer<GtkWidget>] = []
    private(set) var labels: [UnsafeMutablePointer<GtkWidget>] = []
    private var updating = false
    private let zoom: Double

    /// `width`: the pedal's, in its own coordinates; the curve and faders are sized at `zoom`.
    init(store: ParameterStore, width: Int, zoom: Double = 1) {
        self.store = store
        self.zoom = zoom
        curve = gtk_drawing_area_new()
        gtk_widget_set_size_request(curve, zoomed(width - 24, zoom), zoomed(74, zoom))
        setAccessible(curve, name: "EQ frequency response", role: ATK_ROLE_CHART)
        onEvent(raw(curve), "draw") { [unowned self] cr in drawCurve(OpaquePointer(cr!)); return true }

        for band in Parameter.eqBands {
            let spec = band.spec
            let scale = gtk_scale_new_with_range(GTK_ORIENTATION_VERTICAL, Double(spec.minimum), Double(spec.maximum), 0.5)!
            gtk_range_set_inverted(cast(raw(scale)), 1)
            gtk_scale_set_draw_value(cast(raw(scale)), 0)
            gtk_scale_add_mark(cast(raw(scale)), 0, GTK_POS_RIGHT, nil)
            gtk_range_set_increments(cast(raw(scale)), 0.5, 3)
            gtk_range_set_value(cast(raw(scale)), Double(store.load(band)))
            gtk_widget_set_size_request(scale, zoomed(40, zoom), zoomed(92, zoom))
            addClass(scale, "eq-fader")
            setAccessible(scale, name: spec.name)
            gtk_widget_set_tooltip_text(scale, "\(spec.name) \(spec.format(store.load(band)))")
            onSignal(raw(scale), "value-changed") { [unowned self] in
                let value = Float(gtk_range_get_value(cast(raw(scale))))
                gtk_widget_set_tooltip_text(scale, "\(spec.name) \(spec.format(value))")
                gtk_widget_queue_draw(curve)
                guard !updating else { return }
                store.set(band, value)
                onReadout?("\(spec.name) \(spec.format(store.load(band)))")
            }
            // Double-click puts the band back to its default, like the knobs.
            onEvent(raw(scale), "button-press-event") { [unowned self] event in
                let e: UnsafeMutablePointer<GdkEventButton> = cast(event)
                guard e.pointee.type == GDK_2BUTTON_PRESS else { return false }
                store.set(band, spec.defaultValue)
                sync()
                return true
            }
            onEvent(raw(scale), "button-release-event") { [unowned self] _ in onReadout?(nil); return false }
            sliders.append(scale)

            let label = gtk_label_new(spec.shortName.replacingOccurrences(of: " ", with: "\u{2009}"))!
            gtk_widget_set_size_request(label, zoomed(40, zoom), zoomed(14, zoom))
            addClass(label, "eq-label")
            labels.append(label)
        }
    }

    var onReadout: ((String?) -> Void)?

    func sync() {
        updating = true
        defer { updating = false }
        for (band, scale) in zip(Parameter.eqBands, sliders) {
            let v = Double(store.load(band))
            if gtk_range_get_value(cast(raw(scale))) != v { gtk_range_set_value(cast(raw(scale)), v) }
        }
        gtk_widget_queue_draw(curve)
    }

    private func drawCurve(_ cr: OpaquePointer) {
        let w = Double(gtk_widget_get_allocated_width(curve)), h = Double(gtk_widget_get_allocated_height(curve))
        let low = log10(20.0), high = log10(20_000.0), range = 15.0
        func x(_ f: Double) -> Double { 4 + (w - 8) * (log10(f) - low) / (high - low) }
        func y(_ db: Double) -> Double { h / 2 - (h / 2 - 6) * max(-range, min(range, db)) / range }

        // Graticule: decades and ±6/12 dB.
        cairo_set_line_width(cr, 1)
        cairo_set_source_rgba(cr, 0.45, 0.95, 0.6, 0.14)
        for f in [100.0, 1000, 10000] { cairo_move_to(cr, x(f), 3); cairo_line_to(cr, x(f), h - 3) }
        for db in [-12.0, -6, 6, 12] { cairo_move_to(cr, 4, y(db)); cairo_line_to(cr, w - 4, y(db)) }
        cairo_stroke(cr)
        cairo_set_source_rgba(cr, 0.45, 0.95, 0.6, 0.3)
        cairo_move_to(cr, 4, y(0)); cairo_line_to(cr, w - 4, y(0))
        cairo_stroke(cr)
        cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(cr, max(7, 7.5 * zoom))
        cairo_set_source_rgba(cr, 0.55, 1, 0.7, 0.55)
        for (f, text) in [(100.0, "100"), (1000, "1k"), (10000, "10k")] {
            cairo_move_to(cr, x(f) + 2, h - 4); cairo_show_text(cr, text)
        }
        cairo_move_to(cr, 6, y(12) + 3); cairo_show_text(cr, "+12")
        cairo_move_to(cr, 6, y(-12) + 3); cairo_show_text(cr, "-12")

        // The response of the six bands as the DSP computes it.
        let gains = Parameter.eqBands.map { Double(store.load($0)) }
        let steps = Int(w / 2)
        var points: [(Double, Double)] = []
        for i in 0...steps {
            let f = pow(10, low + (high - low) * Double(i) / Double(steps))
            points.append((x(f), y(Equalizer.magnitudeDecibels(atFrequency: f, bandGains: gains, sampleRate: 48_000))))
        }
        cairo_move_to(cr, points[0].0, y(0))
        for p in points { cairo_line_to(cr, p.0, p.1) }
        cairo_line_to(cr, points[points.count - 1].0, y(0))
        cairo_close_path(cr)
        cairo_set_source_rgba(cr, 0.35, 1, 0.55, 0.16)
        cairo_fill(cr)
        cairo_move_to(cr, points[0].0, points[0].1)
        for p in points.dropFirst() { cairo_line_to(cr, p.0, p.1) }
        cairo_set_line_width(cr, 4 * zoom)
        cairo_set_source_rgba(cr, 0.35, 1, 0.55, 0.25)
        cairo_stroke_preserve(cr)
        cairo_set_line_width(cr, 1.6 * zoom)
        cairo_set_source_rgb(cr, 0.6, 1, 0.72)
        cairo_stroke(cr)
    }
}
