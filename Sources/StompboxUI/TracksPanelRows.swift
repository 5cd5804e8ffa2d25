import CGtk
import Foundation
import StompboxDSP
import StompboxSession

/// One of the Looper's tracks in the tracks panel, live: its waveform as the audio thread keeps
/// it (`LooperControl.overview`), where it plays, its state light, and its Mute, gain and pan,
/// which are the `looper.trackN_*` parameters, so MIDI, keys, presets and the panel agree.
/// A tap on the waveform selects the track and taps it (record → play → overdub → play).
final class LoopTrackRow {
    let track: Int
    let widget: UnsafeMutablePointer<GtkWidget>
    let face: TrackWaveform
    let mix: TrackMix
    private let control: LooperControl
    private let store: ParameterStore
    private var shown: LooperControl.TrackStatus?
    private var overviewTick = 0
    /// The state words tests and screen readers read (`describe`).
    private(set) var summary = ""

    init(track: Int, control: LooperControl, store: ParameterStore, tap: @escaping (Int) -> Void) {
        self.track = track
        self.control = control
        self.store = store
        widget = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2)
        addClass(widget, "track-row")
        face = TrackWaveform(accessibleName: "Loop \(track + 1)")
        gtk_widget_set_tooltip_text(face.widget, "Tap: record → play → overdub → play on loop track \(track + 1)")
        let spec = Parameter.looperTrackGain(track).spec
        mix = TrackMix(name: "Loop \(track + 1)", gains: Double(spec.minimum)...Double(spec.maximum))
        gtk_box_pack_start(cast(raw(widget)), face.widget, 0, 0, 0)
        gtk_box_pack_start(cast(raw(widget)), mix.widget, 0, 0, 0)
        face.onTap = { tap(track) }
        mix.onChange = { [unowned self] gain, pan, mute in
            store.set(.looperTrackGain(self.track), Float(gain))
            store.set(.looperTrackPan(self.track), Float(pan))
            store.set(.looperTrackMute(self.track), mute ? 1 : 0)
        }
        syncParameters()
        update(sampleRate: 48_000, selected: false)
    }

    /// The parameters may have moved elsewhere (MIDI, a preset): show them.
    func syncParameters() {
        mix.show(gainDB: Double(store.load(.looperTrackGain(track))), pan: Double(store.load(.looperTrackPan(track))),
                 mute: store.isOn(.looperTrackMute(track)))
    }

    /// Polled from the window's timer: status, position and (a few times a second) the overview.
    func update(sampleRate: Double, selected: Bool) {
        let status = control.track(track)
        overviewTick += 1
        if status.state != .stopped || status.length > 0, overviewTick % 4 == 0 || shown?.length != status.length {
            face.peaks = control.overview(track: track)
        } else if status.state == .stopped && status.length == 0 {
            face.peaks = []
        }
        face.selected = selected
        guard status != shown || summary.isEmpty || selected != summary.contains("selected") else { return }
        shown = status
        let seconds = { (frames: Int) in String(format: "%.1f s", Double(frames) / max(1, sampleRate)) }
        var words = status.state == .stopped && status.length == 0 ? "empty" : status.state.name
        if status.length > 0 { words += ", \(seconds(status.length))" } else if status.state == .recording { words += ", \(seconds(status.position))" }
        if status.isWaiting { words += ", waiting" }
        if selected { words += ", selected" }
        summary = words
        face.title = "LOOP \(track + 1)  \(words.uppercased())"
        face.light = trackLight(status.state, waiting: status.isWaiting)
        face.position = status.length > 0 && status.state != .stopped ? Double(status.position) / Double(status.length) : nil
        face.describe(words)
    }

    /// Only the play head moves between status changes: cheap to follow every poll.
    func follow() {
        let status = control.track(track)
        face.position = status.length > 0 && status.state != .stopped ? Double(status.position) / Double(status.length) : nil
    }

    var hasLoop: Bool { control.track(track).length > 0 }
}

/// A track of the opened session: its id, kind and author, its waveform (computed off the main
/// thread from its audio), and its Mute, gain and pan, which edit the session's manifest.
final class SessionTrackRow {
    let id: String
    let widget: UnsafeMutablePointer<GtkWidget>
    let face: TrackWaveform
    let mix: TrackMix
    let summary: String

    init(track: SessionTrack, rate: Int, onMix: @escaping (String, Double, Double, Bool) -> Void) {
        id = track.id
        widget = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2)
        addClass(widget, "track-row")
        face = TrackWaveform(accessibleName: "Session track \(track.id)")
        let seconds = String(format: "%.1f s", Double(track.frames) / Double(max(1, rate)))
        summary = "\(track.kind.rawValue) by \(track.author), \(seconds)"
        face.title = "\(track.id.uppercased())  \(track.author)  \(seconds)"
        face.light = track.kind == .loop ? (0.2, 0.6, 0.3) : (0.4, 0.5, 0.8)
        face.describe(summary)
        gtk_widget_set_tooltip_text(face.widget, "\(track.kind.rawValue) track by \(track.author), starts at \(String(format: "%.2f s", Double(track.start) / Double(max(1, rate))))")
        mix = TrackMix(name: "Session track \(track.id)", gains: SessionTrack.gains)
        mix.show(gainDB: track.gainDB, pan: track.pan, mute: track.mute)
        mix.onChange = { [id = track.id] gain, pan, mute in onMix(id, gain, pan, mute) }
        gtk_box_pack_start(cast(raw(widget)), face.widget, 0, 0, 0)
        gtk_box_pack_start(cast(raw(widget)), mix.widget, 0, 0, 0)
    }
}
