import CGtk
import Foundation

/// One track's mix controls in the tracks panel: Mute, gain and pan. The sliders are GtkScales,
/// so the mouse, a finger (GTK's own touch handling), the keyboard and a screen reader (AtkValue)
/// all move them.
final class TrackMix {
    let widget: UnsafeMutablePointer<GtkWidget>
    let mute: UnsafeMutablePointer<GtkWidget>
    let gain: UnsafeMutablePointer<GtkWidget>
    let pan: UnsafeMutablePointer<GtkWidget>
    /// Called when a person changed a control (not when `show` set it).
    var onChange: ((_ gainDB: Double, _ pan: Double, _ mute: Bool) -> Void)?
    private var showing = false

    /// `name` starts each control's accessible name ("Loop 1 Gain").
    init(name: String, gains: ClosedRange<Double>) {
        widget = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 4)
        mute = gtk_toggle_button_new_with_label("M")
        addClass(mute, "track-mute")
        gtk_widget_set_size_request(mute, 32, 28)
        gtk_widget_set_tooltip_text(mute, "Mute")
        gain = gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, gains.lowerBound, gains.upperBound, 0.5)
        pan = gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, -1, 1, 0.05)
        for (scale, digits, width, tip) in [(gain, Int32(1), Int32(88), "Gain (dB)"), (pan, Int32(2), Int32(56), "Pan: left … right")] {
            gtk_scale_set_draw_value(cast(raw(scale)), 0)
            gtk_scale_set_digits(cast(raw(scale)), digits)
            gtk_widget_set_size_request(scale, width, 28)
            gtk_widget_set_tooltip_text(scale, tip)
            addClass(scale, "track-scale")
        }
        gtk_range_set_increments(cast(raw(gain)), 0.5, 3)
        gtk_range_set_increments(cast(raw(pan)), 0.05, 0.25)
        gtk_scale_add_mark(cast(raw(gain)), 0, GTK_POS_BOTTOM, nil)
        gtk_scale_add_mark(cast(raw(pan)), 0, GTK_POS_BOTTOM, nil)
        setAccessible(mute, name: "\(name) Mute")
        setAccessible(gain, name: "\(name) Gain")
        setAccessible(pan, name: "\(name) Pan")
        gtk_box_pack_start(cast(raw(widget)), mute, 0, 0, 0)
        gtk_box_pack_start(cast(raw(widget)), gain, 1, 1, 0)
        gtk_box_pack_start(cast(raw(widget)), pan, 0, 0, 0)
        for control in [mute, gain, pan] {
            onSignal(raw(control), control == mute ? "toggled" : "value-changed") { [unowned self] in
                guard !showing else { return }
                describe()
                onChange?(gainDB, panValue, isMuted)
            }
        }
        describe()
    }

    var gainDB: Double { gtk_range_get_value(cast(raw(gain))) }
    var panValue: Double { gtk_range_get_value(cast(raw(pan))) }
    var isMuted: Bool { gtk_toggle_button_get_active(cast(raw(mute))) != 0 }

    /// Shows values set elsewhere (MIDI, keys, a preset, a file) without calling `onChange`.
    func show(gainDB: Double, pan: Double, mute: Bool) {
        guard gainDB != self.gainDB || pan != panValue || mute != isMuted else { return }
        showing = true
        defer { showing = false }
        gtk_range_set_value(cast(raw(self.gain)), gainDB)
        gtk_range_set_value(cast(raw(self.pan)), pan)
        gtk_toggle_button_set_active(cast(raw(self.mute)), mute ? 1 : 0)
        describe()
    }

    /// The values as words: a screen reader reads the Mute button's description, and the
    /// sliders' text (AtkValue gives the number).
    private func describe() {
        if let a = gtk_widget_get_accessible(mute) { atk_object_set_description(a, isMuted ? "muted" : "not muted") }
        let p = panValue
        let panText = abs(p) < 0.005 ? "centre" : String(format: "%.0f %% %@", abs(p) * 100, p < 0 ? "left" : "right")
        if let a = gtk_widget_get_accessible(gain) { atk_object_set_description(a, String(format: "%.1f dB", gainDB)) }
        if let a = gtk_widget_get_accessible(pan) { atk_object_set_description(a, panText) }
        gtk_widget_set_tooltip_text(gain, String(format: "Gain %.1f dB", gainDB))
        gtk_widget_set_tooltip_text(pan, "Pan \(panText)")
    }
}
