import CGtk
import Foundation
import StompboxDSP

/// The tempo and the metronome, under the presets: a tempo knob, the tempo typed in (30-300
/// bpm; Enter or leaving the field takes it), a Tap button (also Enter or a footswitch), the
/// metronome's switch, its beats per bar (the first accented) and its level. Synced pedals
/// follow the tempo. Laid out within the preset column's width, so the board keeps its room
/// and the column still fits a 720-pixel screen.
final class TempoSection {
    let widget: UnsafeMutablePointer<GtkWidget>
    private let store: ParameterStore
    let knob: Knob
    let levelKnob: Knob
    let bpmEntry: UnsafeMutablePointer<GtkWidget>
    let tapButton: UnsafeMutablePointer<GtkWidget>
    let clickButton: UnsafeMutablePointer<GtkWidget>
    let beatsSpin: UnsafeMutablePointer<GtkWidget>
    private var updating = false
    private var shownBPM: Float = .nan

    /// `onTap` taps the tempo (the window's footswitch path, so a tap from here, a key or MIDI is one clock).
    init(store: ParameterStore, onReadout: @escaping (String?) -> Void, onTap: @escaping () -> Void) {
        self.store = store
        widget = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4)
        addClass(widget, "tempo-section")
        let title = gtk_label_new("TEMPO")!
        addClass(title, "column-title")
        gtk_box_pack_start(cast(raw(widget)), title, 0, 0, 0)

        let ink = PedalInk(red: 0.92, green: 0.90, blue: 0.85)
        knob = Knob(parameter: .tempo, store: store, diameter: 32, width: 58, ink: ink)
        knob.onReadout = onReadout
        levelKnob = Knob(parameter: .metronomeLevel, store: store, diameter: 22, width: 50, ink: ink)
        levelKnob.onReadout = onReadout

        // The knob, and beside it the tempo as a number to type.
        bpmEntry = gtk_entry_new()
        gtk_entry_set_width_chars(cast(raw(bpmEntry)), 5)
        gtk_entry_set_max_length(cast(raw(bpmEntry)), 6)
        gtk_entry_set_alignment(cast(raw(bpmEntry)), 0.5)
        gtk_entry_set_input_purpose(cast(raw(bpmEntry)), GTK_INPUT_PURPOSE_NUMBER)
        setAccessible(bpmEntry, name: "Tempo (bpm)")
        gtk_widget_set_tooltip_text(bpmEntry, "Tempo in beats per minute, 30-300: type it and press Enter, or tap")
        let row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 2)!
        gtk_box_pack_start(cast(raw(row)), knob.widget, 0, 0, 0)
        let right = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2)!
        gtk_widget_set_valign(right, GTK_ALIGN_CENTER)
        gtk_box_pack_start(cast(raw(right)), bpmEntry, 0, 0, 0)
        let unit = gtk_label_new("bpm")!
        addClass(unit, "tempo-unit")
        gtk_box_pack_start(cast(raw(right)), unit, 0, 0, 0)
        gtk_box_pack_start(cast(raw(row)), right, 1, 1, 0)
        gtk_box_pack_start(cast(raw(widget)), row, 0, 0, 0)

        // Tap and the metronome's switch side by side.
        tapButton = gtk_button_new_with_label("Tap")
        addClass(tapButton, "preset-action")
        addClass(tapButton, "compact")
        setAccessible(tapButton, name: "Tap tempo")
        gtk_widget_set_tooltip_text(tapButton, "Tap the tempo (or press Enter, or a footswitch)")
        clickButton = gtk_toggle_button_new_with_label("Click")
        addClass(clickButton, "preset-action")
        addClass(clickButton, "compact")
        setAccessible(clickButton, name: "Metronome")
        gtk_widget_set_tooltip_text(clickButton, "Metronome: clicks on the beat, the first of each bar accented; never through the pedals")
        let buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 4)!
        gtk_box_set_homogeneous(cast(raw(buttons)), 1)
        gtk_box_pack_start(cast(raw(buttons)), tapButton, 1, 1, 0)
        gtk_box_pack_start(cast(raw(buttons)), clickButton, 1, 1, 0)
        gtk_box_pack_start(cast(raw(widget)), buttons, 0, 0, 0)

        // The metronome's beats per bar (captioned like a knob) and its level.
        beatsSpin = gtk_spin_button_new_with_range(1, 12, 1)
        gtk_entry_set_width_chars(cast(raw(beatsSpin)), 2)
        setAccessible(beatsSpin, name: "Beats per bar")
        gtk_widget_set_tooltip_text(beatsSpin, "The metronome's beats per bar (the first is accented)")
        let beats = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0)!
        gtk_widget_set_valign(beats, GTK_ALIGN_CENTER)
        gtk_box_pack_start(cast(raw(beats)), beatsSpin, 0, 0, 0)
        let beatsLabel = gtk_label_new("BEATS")!
        addClass(beatsLabel, "tempo-caption")
        gtk_box_pack_start(cast(raw(beats)), beatsLabel, 0, 0, 0)
        let bottom = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 4)!
        gtk_box_pack_start(cast(raw(bottom)), beats, 0, 0, 0)
        gtk_box_pack_end(cast(raw(bottom)), levelKnob.widget, 0, 0, 0)
        gtk_box_pack_start(cast(raw(widget)), bottom, 0, 0, 0)

        onSignal(raw(bpmEntry), "activate") { [unowned self] in takeTypedTempo() }
        onEvent(raw(bpmEntry), "focus-out-event") { [unowned self] _ in takeTypedTempo(); return false }
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

    /// The typed tempo, if it is one (30-300, a decimal point or comma); otherwise the field
    /// shows the tempo again and the window beeps.
    private func takeTypedTempo() {
        let text = String(cString: gtk_entry_get_text(cast(raw(bpmEntry)))).trimmingCharacters(in: .whitespaces)
            .replacingOccurrences(of: ",", with: ".")
        let spec = Parameter.tempo.spec
        if let bpm = Float(text), bpm.isFinite, spec.contains(bpm) {
            store.set(.tempo, bpm)
        } else if !text.isEmpty && Float(text) != store.load(.tempo) {
            gtk_widget_error_bell(bpmEntry)
        }
        shownBPM = .nan
        sync()
    }

    /// Follows the store (a tap, a preset, MIDI); a field being typed in is left alone.
    func sync() {
        updating = true
        defer { updating = false }
        knob.sync()
        levelKnob.sync()
        let bpm = store.load(.tempo)
        if gtk_widget_has_focus(bpmEntry) == 0, bpm != shownBPM {
            shownBPM = bpm
            let rounded = (bpm * 10).rounded() / 10
            gtk_entry_set_text(cast(raw(bpmEntry)), rounded == rounded.rounded() ? String(Int(rounded)) : String(format: "%.1f", rounded))
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
