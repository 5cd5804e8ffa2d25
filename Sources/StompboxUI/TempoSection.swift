import CGtk
import Foundation
import StompboxDSP

/// The tempo and the metronome, under the presets: a tempo knob, the tempo typed in (30-300
/// bpm), a Tap button (also Enter or a footswitch), the metronome's switch, its beats per bar
/// (the first accented) and its level. Synced delays follow the tempo.
final class TempoSection {
    let widget: UnsafeMutablePointer<GtkWidget>
    private let store: ParameterStore
    let knob: Knob
    let levelKnob: Knob
    let bpmSpin: UnsafeMutablePointer<GtkWidget>
    let tapButton: UnsafeMutablePointer<GtkWidget>
    let clickButton: UnsafeMutablePointer<GtkWidget>
    let beatsSpin: UnsafeMutablePointer<GtkWidget>
    private var updating = false

    /// `onTap` taps the tempo (the window's footswitch path, so a tap from here, a key or MIDI is one clock).
    init(store: ParameterStore, onReadout: @escaping (String?) -> Void, onTap: @escaping () -> Void) {
        self.store = store
        widget = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4)
        addClass(widget, "tempo-section")
        let title = gtk_label_new("TEMPO")!
        addClass(title, "column-title")
        gtk_box_pack_start(cast(raw(widget)), title, 0, 0, 0)

        let ink = PedalInk(red: 0.92, green: 0.90, blue: 0.85)
        knob = Knob(parameter: .tempo, store: store, diameter: 40, width: 70, ink: ink)
        knob.onReadout = onReadout
        levelKnob = Knob(parameter: .metronomeLevel, store: store, diameter: 30, width: 70, ink: ink)
        levelKnob.onReadout = onReadout

        bpmSpin = gtk_spin_button_new_with_range(30, 300, 1)
        gtk_spin_button_set_digits(cast(raw(bpmSpin)), 1)
        gtk_entry_set_width_chars(cast(raw(bpmSpin)), 5)
        setAccessible(bpmSpin, name: "Tempo (bpm)")
        gtk_widget_set_tooltip_text(bpmSpin, "Tempo in beats per minute (type it, or tap)")
        let row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 2)!
        gtk_box_pack_start(cast(raw(row)), knob.widget, 0, 0, 0)
        let right = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2)!
        gtk_widget_set_valign(right, GTK_ALIGN_CENTER)
        gtk_box_pack_start(cast(raw(right)), bpmSpin, 0, 0, 0)
        let unit = gtk_label_new("bpm")!
        addClass(unit, "tempo-unit")
        gtk_box_pack_start(cast(raw(right)), unit, 0, 0, 0)
        gtk_box_pack_start(cast(raw(row)), right, 1, 1, 0)
        gtk_box_pack_start(cast(raw(widget)), row, 0, 0, 0)

        tapButton = gtk_button_new_with_label("Tap")
        addClass(tapButton, "preset-action")
        setAccessible(tapButton, name: "Tap tempo")
        gtk_widget_set_tooltip_text(tapButton, "Tap the tempo (or press Enter, or a footswitch)")
        gtk_box_pack_start(cast(raw(widget)), tapButton, 0, 0, 0)

        clickButton = gtk_toggle_button_new_with_label("Metronome")
        addClass(clickButton, "preset-action")
        setAccessible(clickButton, name: "Metronome")
        gtk_widget_set_tooltip_text(clickButton, "Clicks on the beat, the first of each bar accented; never through the pedals")
        gtk_box_pack_start(cast(raw(widget)), clickButton, 0, 0, 0)

        beatsSpin = gtk_spin_button_new_with_range(1, 12, 1)
        setAccessible(beatsSpin, name: "Beats per bar")
        gtk_widget_set_tooltip_text(beatsSpin, "Beats per bar (the first is accented)")
        let beatsRow = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 4)!
        let beatsLabel = gtk_label_new("Beats")!
        addClass(beatsLabel, "tempo-unit")
        gtk_box_pack_start(cast(raw(beatsRow)), beatsLabel, 0, 0, 0)
        gtk_box_pack_start(cast(raw(beatsRow)), beatsSpin, 1, 1, 0)
        gtk_box_pack_start(cast(raw(widget)), beatsRow, 0, 0, 0)
        gtk_box_pack_start(cast(raw(widget)), levelKnob.widget, 0, 0, 0)
        gtk_widget_set_halign(levelKnob.widget, GTK_ALIGN_CENTER)

        onSignal(raw(bpmSpin), "value-changed") { [unowned self] in
            guard !updating else { return }
            store.set(.tempo, Float(gtk_spin_button_get_value(cast(raw(bpmSpin)))))
        }
        onSignal(raw(beatsSpin), "value-changed") { [unowned self] in
            guard !updating else { return }
            store.set(.metronomeBeats, Float(gtk_spin_button_get_value_as_int(cast(raw(beatsSpin)))))
        }
        onSignal(raw(clickButton), "toggled") { [unowned self] in
            guard !updating else { return }
            store.set(.metronomeEnabled, gtk_toggle_button_get_active(cast(raw(clickButton))) != 0 ? 1 : 0)
        }
        onSignal(raw(tapButton), "clicked") { onTap() }
        sync()
    }

    /// Follows the store (a tap, a preset, MIDI); a field being typed in is left alone.
    func sync() {
        updating = true
        defer { updating = false }
        knob.sync()
        levelKnob.sync()
        let bpm = Double(store.load(.tempo))
        if gtk_widget_has_focus(bpmSpin) == 0, abs(gtk_spin_button_get_value(cast(raw(bpmSpin))) - bpm) > 0.05 {
            gtk_spin_button_set_value(cast(raw(bpmSpin)), bpm)
        }
        let beats = Double(store.load(.metronomeBeats).rounded())
        if gtk_widget_has_focus(beatsSpin) == 0, gtk_spin_button_get_value(cast(raw(beatsSpin))) != beats {
            gtk_spin_button_set_value(cast(raw(beatsSpin)), beats)
        }
        let on = store.isOn(.metronomeEnabled)
        if (gtk_toggle_button_get_active(cast(raw(clickButton))) != 0) != on {
            gtk_toggle_button_set_active(cast(raw(clickButton)), on ? 1 : 0)
        }
    }

    var state: [String: Any] {
        ["bpm": store.load(.tempo), "metronome": store.isOn(.metronomeEnabled),
         "beats": store.load(.metronomeBeats), "level_db": store.load(.metronomeLevel)]
    }
}
