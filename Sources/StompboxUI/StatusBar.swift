import CGtk
import Foundation
import StompboxAudio
import StompboxCore
import StompboxDSP

/// The bar at the bottom of the window: a light (running, off, trouble), what the audio is
/// doing (state, latency, clock drift, dropouts, DSP load, devices), and the device picker.
final class StatusBar {
    let widget = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8)!
    let devicePicker: DevicePicker
    /// What the bar says now.
    private(set) var text = ""
    /// Opens the About dialog (what Stompbox is, its version).
    let aboutButton = gtk_button_new_with_label("About")!
    private let engine: LiveEngine
    private let label = gtk_label_new("Starting…")!
    private let light = gtk_label_new("●")!
    private struct Key: Equatable { var state: LiveState; var underruns: Int; var overruns: Int }
    private var shownKey: Key?

    init(engine: LiveEngine) {
        self.engine = engine
        addClass(widget, "status-bar")
        addClass(light, "status-light")
        gtk_box_pack_start(cast(raw(widget)), light, 0, 0, 0)
        gtk_label_set_ellipsize(cast(raw(label)), PANGO_ELLIPSIZE_END)
        // A long status never widens the window (it ellipsizes; the tooltip has it whole).
        gtk_label_set_max_width_chars(cast(raw(label)), 60)
        gtk_label_set_xalign(cast(raw(label)), 0)
        setAccessible(label, name: "Audio status")
        gtk_box_pack_start(cast(raw(widget)), label, 1, 1, 0)
        devicePicker = DevicePicker(engine: engine)
        gtk_box_pack_end(cast(raw(widget)), devicePicker.button, 0, 0, 0)
        setAccessible(aboutButton, name: "About Stompbox")
        gtk_widget_set_tooltip_text(aboutButton, "About Stompbox: what it is and its version")
        gtk_box_pack_end(cast(raw(widget)), aboutButton, 0, 0, 0)
    }

    /// The About dialog, over `parent`.
    static func showAbout(parent: UnsafeMutablePointer<GtkWidget>) {
        let dialog = gtk_about_dialog_new()!
        let about: UnsafeMutablePointer<GtkAboutDialog> = cast(raw(dialog))
        gtk_about_dialog_set_program_name(about, "Stompbox")
        gtk_about_dialog_set_version(about, StompboxVersion.current)
        gtk_about_dialog_set_comments(about, "A guitar multi-effects pedalboard for the Linux desktop: noise gate, overdrive, amp, cabinet, EQ, flanger, tremolo, delay, reverb, a looper and your LV2 plugins.")
        // The icon from Resources/ (an installed copy is in the icon theme too; a build tree's is not).
        if let path = ResourceLocator.path("io.github.stompbox.Stompbox.svg"), let logo = gdk_pixbuf_new_from_file_at_size(path, 96, 96, nil) {
            gtk_about_dialog_set_logo(about, logo)
            g_object_unref(raw(logo))
        }
        gtk_about_dialog_set_website(about, StompboxVersion.website)
        gtk_window_set_transient_for(cast(raw(dialog)), cast(raw(parent)))
        gtk_window_set_modal(cast(raw(dialog)), 1)
        onSignal(raw(dialog), "response") { gtk_widget_destroy(dialog) }
        gtk_widget_show_all(dialog)
    }

    /// Called at each of the window's polls (`tick` counts them). The line is rewritten four
    /// times a second (its figures move by tenths of a millisecond; formatting and relaying it
    /// out at every poll costs the GUI thread for nothing), and at once when the state or the
    /// dropout counts change.
    func poll(_ status: LiveStatus, tick: Int, pollsPerSecond: Int) {
        let key = Key(state: status.state, underruns: status.underruns, overruns: status.overruns)
        if tick % (pollsPerSecond / 4) == 0 || key != shownKey {
            shownKey = key
            update(status)
        }
    }

    private func update(_ status: LiveStatus) {
        var parts: [String]
        var lightClass = "status-off"
        switch status.state {
        case .running: parts = ["Running"]; lightClass = "status-ok"
        case .stopped: parts = ["Audio stopped"]
        case .noServer:
            let server = switch engine.settings.backend { case .jack: "JACK server"; case .pulse: "PulseAudio server"; case .auto: "JACK or PulseAudio server" }
            parts = ["No \(server) — retrying"]; lightClass = "status-bad"
        case .waitingForInput: parts = ["Waiting for the input device"]; lightClass = "status-bad"
        case .waitingForOutput: parts = ["Waiting for the output device"]; lightClass = "status-bad"
        }
        if status.backend == .jack { parts.append("JACK" + (status.periodFrames.map { " · \($0) frames" } ?? "")) }
        if let l = status.latencyMs { parts.append(String(format: "latency %.1f ms", l)) }
        if let d = status.driftPPM { parts.append(String(format: "following the input's clock (%+.0f ppm)", d)) }
        let dropouts = status.backend == .jack ? "xrun" : "underrun"
        parts.append("\(status.underruns) \(dropouts)\(status.underruns == 1 ? "" : "s")")
        if let load = status.dspLoadPercent { parts.append(String(format: "DSP %.0f %%", load)) }
        if let realtime = status.realtime { parts.append(realtime == .none ? "no real-time priority" : "real-time \(realtime)") }
        if status.overruns > 0 { parts.append("\(status.overruns) overrun\(status.overruns == 1 ? "" : "s")") }
        parts.append(devicePicker.summary)
        if let m = status.message { parts.append(m) }
        let newText = parts.joined(separator: "  ·  ")
        guard newText != text else { return }
        text = newText
        gtk_label_set_text(cast(raw(label)), newText)
        gtk_widget_set_tooltip_text(label, newText)
        for c in ["status-ok", "status-bad", "status-off"] { removeClass(light, c) }
        addClass(light, lightClass)
    }
}
