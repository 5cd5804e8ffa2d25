import CGtk
import Foundation
import StompboxAudio
import StompboxDSP
import StompboxSession
import Synchronization

/// The tracks panel beside the pedals: the Looper's eight loop tracks, live, then the tracks of
/// the opened session; above them Record, Open…, Save, Save as… and Add audio file….
///
/// Save writes the opened session's tracks as they were read (byte for byte) plus each Looper
/// track that holds a loop as a `loop` track, with the Looper's cycle in `cycle_frames`
/// (`TracksPanel+Files`). Opening a session puts its loop tracks back onto the Looper when it
/// holds none (`Session.loopsForLooper`, `Looper.load`); they are listed with its other tracks.
final class TracksPanel {
    let widget: UnsafeMutablePointer<GtkWidget>
    let recordButton = gtk_toggle_button_new_with_label("● Record")!
    let openButton = gtk_button_new_with_label("Open…")!
    let saveButton = gtk_button_new_with_label("Save")!
    let saveAsButton = gtk_button_new_with_label("Save as…")!
    let addButton = gtk_button_new_with_label("Add audio file…")!
    let messageLabel = gtk_label_new("")!
    let sessionLabel = gtk_label_new("")!
    private let rows = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6)!
    let sessionRowsBox = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6)!

    let engine: LiveEngine
    let control: LooperControl
    let store: ParameterStore
    private(set) var loopRows: [LoopTrackRow] = []
    var sessionRows: [SessionTrackRow] = []
    /// The opened (or last saved) session: its tracks and the imports added since.
    var session: Session?
    /// True while a session change has not been saved.
    var unsaved = false
    /// The window the file choosers and messages belong to.
    var window: UnsafeMutablePointer<GtkWidget>?
    /// The live recorder, set by the app: `true` starts recording into the session, `false` stops;
    /// it returns whether a recording runs afterwards. While nil the Record button is insensitive.
    var record: ((_ start: Bool) -> Bool)? { didSet { gtk_widget_set_sensitive(recordButton, record == nil || jobRunning ? 0 : 1) } }
    /// The store's lock on the Looper: a locked Looper's tracks are not tapped, `onLooperLocked` runs.
    var isLooperLocked: () -> Bool = { false }
    var onLooperLocked: (() -> Void)?
    private var showingRecord = false
    /// Waveforms computed off the main thread, picked up by `poll`.
    let computedPeaks = PeakInbox()
    /// Whether `session` was read from or saved to its `path` (a new one has only a placeholder).
    var sessionHasFile = false
    /// Where the loops the Looper took from the opened session are: its clock when they started,
    /// the session frame that was, and their cycle (in the session's frames). Nil without.
    var loopOrigin: (clock: Int, frame: Int, cycle: Int)?
    /// A file job runs (`TracksPanel+Jobs`): its outcome, set by its thread, and what to do with it.
    var jobRunning = false
    let jobOutcome = JobInbox()
    var jobDone: ((Result<Any, any Error>) -> Void)?

    init(engine: LiveEngine) {
        self.engine = engine
        control = engine.chain.controls.looper
        store = engine.chain.controls.parameters
        widget = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6)
        addClass(widget, "tracks-panel")
        gtk_widget_set_size_request(widget, 200, -1)
        let title = gtk_label_new("TRACKS")!
        addClass(title, "column-title")
        gtk_box_pack_start(cast(raw(widget)), title, 0, 0, 0)

        let buttons = gtk_grid_new()!
        gtk_grid_set_row_spacing(cast(raw(buttons)), 4)
        gtk_grid_set_column_spacing(cast(raw(buttons)), 4)
        gtk_grid_set_column_homogeneous(cast(raw(buttons)), 1)
        let placed: [(UnsafeMutablePointer<GtkWidget>, String, String, Int32, Int32, Int32)] = [
            (recordButton, "Record", "Record the board into the session (start and stop)", 0, 0, 2),
            (openButton, "Open session", "Open a session file (.stompsession)", 0, 1, 1),
            (saveButton, "Save session", "Save the session with the Looper's tracks", 1, 1, 1),
            (saveAsButton, "Save session as", "Save the session under a new name", 0, 2, 1),
            (addButton, "Add audio file", "Add an audio file to the session as an import track", 1, 2, 1),
        ]
        for (button, name, tip, x, y, width) in placed {
            addClass(button, "pedal-button")
            gtk_widget_set_size_request(button, -1, 34)
            setAccessible(button, name: name)
            gtk_widget_set_tooltip_text(button, tip)
            gtk_grid_attach(cast(raw(buttons)), button, x, y, width, 1)
        }
        if let label = gtk_bin_get_child(cast(raw(addButton))) { gtk_label_set_ellipsize(cast(raw(label)), PANGO_ELLIPSIZE_END) }
        gtk_widget_set_sensitive(recordButton, 0)
        gtk_box_pack_start(cast(raw(widget)), buttons, 0, 0, 0)

        for label in [sessionLabel, messageLabel] {
            gtk_label_set_line_wrap(cast(raw(label)), 1)
            gtk_label_set_max_width_chars(cast(raw(label)), 24)
            gtk_label_set_xalign(cast(raw(label)), 0)
            gtk_label_set_selectable(cast(raw(label)), 0)
            gtk_box_pack_start(cast(raw(widget)), label, 0, 0, 0)
        }
        addClass(sessionLabel, "tracks-session")
        addClass(messageLabel, "tracks-message")
        setAccessible(sessionLabel, name: "Session")
        setAccessible(messageLabel, name: "Tracks message")
        gtk_widget_set_no_show_all(messageLabel, 1)

        // The tracks scroll (vertically, kinetic for a finger) so the panel fits a 720-line screen.
        let scroller = gtk_scrolled_window_new(nil, nil)!
        gtk_scrolled_window_set_policy(cast(raw(scroller)), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC)
        gtk_scrolled_window_set_kinetic_scrolling(cast(raw(scroller)), 1)
        gtk_container_add(cast(raw(scroller)), rows)
        gtk_box_pack_start(cast(raw(widget)), scroller, 1, 1, 0)
        for track in 0..<LooperControl.trackCount {
            let row = LoopTrackRow(track: track, control: control, store: store) { [unowned self] in tapTrack($0) }
            loopRows.append(row)
            gtk_box_pack_start(cast(raw(rows)), row.widget, 0, 0, 0)
        }
        let sessionTitle = gtk_label_new("SESSION TRACKS")!
        addClass(sessionTitle, "column-title")
        gtk_box_pack_start(cast(raw(rows)), sessionTitle, 0, 0, 4)
        gtk_box_pack_start(cast(raw(rows)), sessionRowsBox, 0, 0, 0)

        onSignal(raw(recordButton), "toggled") { [unowned self] in recordPressed() }
        onSignal(raw(openButton), "clicked") { [unowned self] in openSession() }
        onSignal(raw(saveButton), "clicked") { [unowned self] in saveSession(asNew: false) }
        onSignal(raw(saveAsButton), "clicked") { [unowned self] in saveSession(asNew: true) }
        onSignal(raw(addButton), "clicked") { [unowned self] in addAudioFile() }
        showSession()
    }

    /// The one place the Record button reaches the live recorder (`record`, set by the app).
    private func recordPressed() {
        guard !showingRecord else { return }
        let wanted = gtk_toggle_button_get_active(cast(raw(recordButton))) != 0
        let running = record?(wanted) ?? false
        showRecording(running)
    }

    /// Shows whether a recording runs (the recorder may also stop by itself).
    func showRecording(_ running: Bool) {
        showingRecord = true
        defer { showingRecord = false }
        gtk_toggle_button_set_active(cast(raw(recordButton)), running ? 1 : 0)
        gtk_button_set_label(cast(raw(recordButton)), running ? "■ Stop recording" : "● Record")
        if running { addClass(recordButton, "recording") } else { removeClass(recordButton, "recording") }
        if let a = gtk_widget_get_accessible(recordButton) { atk_object_set_description(a, running ? "recording" : "not recording") }
    }

    /// A tap on a loop track's waveform: select it (Space then taps it too) and tap it.
    private func tapTrack(_ track: Int) {
        if isLooperLocked() { onLooperLocked?(); return }
        // The Looper has to be in the chain to be heard; a tap switches it in (as its footswitch does).
        if !store.isOn(.looperEnabled) { store.set(.looperEnabled, 1) }
        store.set(.looperTrack, Float(track))
        control.send(.tap, track: track)
    }

    /// Called by the window's poll: the loop tracks' state and the waveforms computed meanwhile.
    func poll(tick: Int, parametersChanged: Bool) {
        pollJob()
        pollRecording()
        guard gtk_widget_get_visible(widget) != 0 else { return }
        let selected = Int(store.load(.looperTrack).rounded())
        let rate = engine.chain.sampleRate
        for row in loopRows {
            if parametersChanged { row.syncParameters() }
            if tick % 2 == 0 { row.update(sampleRate: rate, selected: row.track == selected) } else { row.follow() }
        }
        let ready = computedPeaks.take()
        for (id, peaks) in ready { sessionRows.first { $0.id == id }?.face.peaks = peaks }
    }

    /// One clear message in the panel (an error stays until the next action).
    func say(_ text: String?, error: Bool = false) {
        gtk_label_set_text(cast(raw(messageLabel)), text ?? "")
        if error { addClass(messageLabel, "error") } else { removeClass(messageLabel, "error") }
        if let a = gtk_widget_get_accessible(messageLabel) { atk_object_set_description(a, text ?? "") }
        if text == nil { gtk_widget_hide(messageLabel) } else { gtk_widget_show(messageLabel) }
    }
}

/// Waveforms computed on a worker thread, by session track id, until the GTK thread takes them.
final class PeakInbox: Sendable {
    private let peaks = Mutex<[String: [Float]]>([:])
    func put(_ id: String, _ values: [Float]) { peaks.withLock { $0[id] = values } }
    func take() -> [String: [Float]] { peaks.withLock { p in defer { p = [:] }; return p } }
}
