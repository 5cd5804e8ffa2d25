import CGtk
import Foundation
import StompboxAudio
import StompboxDSP

/// The tuner above the board: the note, a needle over ±50 cents, a strobe band that drifts left
/// when flat and right when sharp (still when in tune), the frequency, the reference A and a
/// "Play through" switch. Open, it listens to the input (the audio thread hands the samples over
/// through `TunerTap`) and reads it every 50 ms on the GTK thread; the output is muted unless
/// "Play through" is on.
final class TunerView {
    let widget: UnsafeMutablePointer<GtkWidget>
    private let display: UnsafeMutablePointer<GtkWidget>
    private let referenceSpin: UnsafeMutablePointer<GtkWidget>
    let playThrough: UnsafeMutablePointer<GtkWidget>
    private let tap: TunerTap
    private let sampleRate: () -> Double
    private var detector: PitchDetector?
    private var window: UnsafeMutablePointer<Float>?
    private var timer: UInt32 = 0
    private var strobePhase = 0.0
    private(set) var reading: TunerReading?
    private(set) var isOpen = false
    /// The tap's count of samples when the tuner opened: nothing is read until a whole window
    /// has been heard since (the ring holds silence from before).
    private var heardFrom = 0

    init(tap: TunerTap, sampleRate: @escaping () -> Double) {
        self.tap = tap
        self.sampleRate = sampleRate
        widget = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12)
        addClass(widget, "tuner")
        display = gtk_drawing_area_new()
        gtk_widget_set_size_request(display, 520, 96)
        setAccessible(display, name: "Tuner")
        gtk_box_pack_start(cast(raw(widget)), display, 1, 1, 12)
        let side = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6)!
        let label = gtk_label_new("A4 =")!
        addClass(label, "tuner-label")
        referenceSpin = gtk_spin_button_new_with_range(415, 466, 1)
        gtk_spin_button_set_value(cast(raw(referenceSpin)), 440)
        setAccessible(referenceSpin, name: "Tuner reference A")
        gtk_widget_set_tooltip_text(referenceSpin, "The frequency of A4 (415–466 Hz)")
        let row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 4)!
        gtk_box_pack_start(cast(raw(row)), label, 0, 0, 0)
        gtk_box_pack_start(cast(raw(row)), referenceSpin, 0, 0, 0)
        gtk_box_pack_start(cast(raw(row)), gtk_label_new("Hz"), 0, 0, 0)
        playThrough = gtk_check_button_new_with_label("Play through")
        setAccessible(playThrough, name: "Tuner play through")
        gtk_widget_set_tooltip_text(playThrough, "Keep hearing the board while tuning (the tuner mutes it otherwise)")
        gtk_box_pack_start(cast(raw(side)), row, 0, 0, 0)
        gtk_box_pack_start(cast(raw(side)), playThrough, 0, 0, 0)
        gtk_box_pack_start(cast(raw(widget)), side, 0, 0, 12)
        onEvent(raw(display), "draw") { [unowned self] cr in draw(OpaquePointer(cr!)); return true }
        onSignal(raw(playThrough), "toggled") { [unowned self] in
            tap.isMuting = isOpen && gtk_toggle_button_get_active(cast(raw(playThrough))) == 0
        }
        gtk_widget_set_no_show_all(widget, 1)
    }

    deinit {
        if timer != 0 { g_source_remove(timer) }
        window?.deallocate()
    }

    var reference: Double { gtk_spin_button_get_value(cast(raw(referenceSpin))) }

    /// Opens or closes it (the strip's Tuner button, the T key).
    func toggle() { isOpen ? close() : open() }

    func open() {
        guard !isOpen else { return }
        isOpen = true
        heardFrom = tap.total
        tap.isListening = true
        tap.isMuting = gtk_toggle_button_get_active(cast(raw(playThrough))) == 0
        gtk_widget_set_no_show_all(widget, 0)
        gtk_widget_show_all(widget)
        reading = nil
        timer = addTimeout(milliseconds: 50) { [weak self] in self?.tick() ?? false }
    }

    func close() {
        guard isOpen else { return }
        isOpen = false
        tap.isListening = false
        tap.isMuting = false
        gtk_widget_hide(widget)
        gtk_widget_set_no_show_all(widget, 1)
        if timer != 0 { g_source_remove(timer); timer = 0 }
    }

    /// Every 50 ms while open: the latest sound, read.
    private func tick() -> Bool {
        let rate = sampleRate()
        if detector?.sampleRate != rate {
            detector = PitchDetector(sampleRate: rate)
            window?.deallocate()
            window = .allocate(capacity: detector!.longWindow)
        }
        guard let detector, let window else { return true }
        let count = detector.longWindow
        if tap.total - heardFrom < detector.window {
            reading = nil
        } else if count <= TunerTap.capacity / 2, tap.latest(count, into: window) {
            reading = detector.analyse(endingAt: window + count, reference: reference)
        }
        strobePhase += (reading?.cents ?? 0) * 0.05
        gtk_widget_queue_draw(display)
        return true
    }

    var state: [String: Any] {
        [
            "open": isOpen, "muted": tap.isMuting, "reference": reference,
            "note": reading?.note ?? NSNull(), "cents": reading?.cents ?? NSNull(), "hz": reading?.hz ?? NSNull(),
        ]
    }

    private func draw(_ cr: OpaquePointer) {
        let w = Double(gtk_widget_get_allocated_width(display)), h = Double(gtk_widget_get_allocated_height(display))
        cairo_set_source_rgb(cr, 0.06, 0.07, 0.08)
        cairo_rectangle(cr, 0, 0, w, h)
        cairo_fill(cr)
        let inTune = reading.map { abs($0.cents) < 2 } ?? false
        // The strobe band: stripes drifting with the deviation.
        let bandY = h - 22, stripe = 16.0
        cairo_save(cr)
        cairo_rectangle(cr, 120, bandY, w - 240, 14)
        cairo_clip(cr)
        if reading != nil {
            cairo_set_source_rgb(cr, inTune ? 0.3 : 0.9, inTune ? 0.9 : 0.5, 0.3)
            let offset = (strobePhase.truncatingRemainder(dividingBy: 2 * stripe) + 2 * stripe).truncatingRemainder(dividingBy: 2 * stripe)
            var x = 120 - 2 * stripe + offset
            while x < w - 120 {
                cairo_rectangle(cr, x, bandY, stripe, 14)
                x += 2 * stripe
            }
            cairo_fill(cr)
        }
        cairo_restore(cr)
        // The scale and the needle, ±50 cents.
        let left = 120.0, right = w - 120, middle = (left + right) / 2, top = 12.0, bottom = bandY - 8
        cairo_set_source_rgb(cr, 0.45, 0.47, 0.5)
        cairo_set_line_width(cr, 1)
        for c in stride(from: -50, through: 50, by: 10) {
            let x = middle + Double(c) / 50 * (right - left) / 2
            cairo_move_to(cr, x, bottom)
            cairo_line_to(cr, x, bottom - (c == 0 ? 22 : 10))
        }
        cairo_stroke(cr)
        if let reading {
            let x = middle + max(-50, min(50, reading.cents)) / 50 * (right - left) / 2
            cairo_set_source_rgb(cr, inTune ? 0.3 : 0.95, inTune ? 0.95 : 0.35, 0.3)
            cairo_set_line_width(cr, 3)
            cairo_move_to(cr, x, bottom)
            cairo_line_to(cr, x, top)
            cairo_stroke(cr)
        }
        // The note, large, at the left; the figures at the right.
        cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD)
        cairo_set_font_size(cr, 40)
        cairo_set_source_rgb(cr, 0.95, 0.93, 0.88)
        cairo_move_to(cr, 14, 58)
        cairo_show_text(cr, reading?.note ?? "–")
        cairo_set_font_size(cr, 13)
        cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)
        cairo_move_to(cr, right + 12, 34)
        cairo_show_text(cr, reading.map { String(format: "%+.1f cents", $0.cents) } ?? "no note")
        cairo_move_to(cr, right + 12, 56)
        cairo_show_text(cr, reading.map { String(format: "%.2f Hz", $0.hz) } ?? "")
    }
}
