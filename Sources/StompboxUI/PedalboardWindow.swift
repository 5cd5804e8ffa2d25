import CGtk
import CStompboxShim
import Foundation
import StompboxAudio
import StompboxCore
import StompboxDSP

/// The pedalboard: the selector strip on top (one toggle per effect, then "More…"), the preset
/// column on the left, the pedals in chain order between the input and output meters, and the
/// status bar with the device picker at the bottom.
///
/// It fits screens from 1280×720 up: the window opens at its natural size where that fits,
/// maximised where it does not, or where the person left it last time (`WindowPlacement`). The
/// pedals scroll sideways between the meters (wheel, scroll bar, or a finger's swipe with
/// kinetic scrolling) while the strip, the presets, the meters and the status bar stay in view;
/// a tap on a pedal's entry in the strip scrolls that pedal into view. The pedals are drawn at
/// the zoom that fits the room they have (`BoardZoom`): larger in a large window, a little
/// smaller where that saves scrolling, never below a size whose labels read and whose knobs a
/// finger can grab (controls of 51 px and more); on a large screen the window opens big enough
/// to show them larger.
///
/// The window composes its parts: `BoardView` (the pedals and their selectors), `AddPedalMenu`,
/// `LearnController` (MIDI in, MIDI and key learn), `StatusBar`, `WindowPlacement`; it reads
/// the engine `pollsPerSecond` times a second and carries out footswitch actions. What it does
/// for tests is `TestHooks`'.
public final class PedalboardWindow {
    public let window: UnsafeMutablePointer<GtkWidget>
    /// Left-hand column for the preset panel (filled by the preset issue).
    public let presetColumn: UnsafeMutablePointer<GtkWidget>
    /// "More…" at the end of the selector strip (the store dialog is connected by the store issue).
    public let moreButton: UnsafeMutablePointer<GtkWidget>

    let engine: LiveEngine
    let controls: EngineControls
    /// The footswitch bindings (`controls.json`) and what carries out their actions.
    let footControls = FootControlsFile()
    private(set) lazy var dispatcher: FootControlDispatcher = {
        let d = FootControlDispatcher(controls: controls, board: { [unowned self] in engine.chain.board })
        d.selectedPedal = { [unowned self] in selectedPedal }
        d.isLocked = { [unowned self] in isLocked($0) }
        d.onLocked = { [unowned self] in onLocked?($0) }
        return d
    }()
    /// Preset actions (play 1-3, next, previous) go to the preset panel.
    var onPresetAction: ((FootAction) -> Void)?
    /// Notices for the bar under the strip (set by the app: the preset panel's info bar).
    var onNotice: ((Dialogs.Kind, String) -> Void)? {
        get { learn.onNotice }
        set { learn.onNotice = newValue }
    }
    /// Called when the window is gone (destroyed).
    var onClosed: (() -> Void)?
    /// The store's answer to "is this pedal locked?" (set by `StoreFront`); a locked pedal is
    /// never switched on from the strip or its footswitch: `onLocked` runs instead.
    var isLocked: (PedalKind) -> Bool {
        get { board.isLocked }
        set { board.isLocked = newValue }
    }
    var onLocked: ((PedalKind) -> Void)? {
        get { board.onLocked }
        set { board.onLocked = newValue }
    }
    /// The pedal last touched (B switches it); the board's first until one is touched.
    var selectedPedal: PedalKind? { board.selectedPedal }
    /// The pedals' zoom (see `BoardZoom`).
    var zoom: Double { board.zoom }

    let board: BoardView
    let learn: LearnController
    let addMenu: AddPedalMenu
    let statusBar: StatusBar
    private let placement: WindowPlacement
    let hooks: TestHooks?
    let inputMeter = LevelMeter(title: "IN", accessibleName: "Input Level")
    let outputMeter = LevelMeter(title: "OUT", accessibleName: "Output Level")
    private(set) var tuner: TunerView!
    private(set) var tempo: TempoSection!
    /// The tracks panel right of the board (the app sets its `record` closure).
    private(set) var tracks: TracksPanel!
    let tunerButton = gtk_toggle_button_new_with_label("Tuner")!
    /// Shows the tracks panel; it starts hidden so the window's natural size (and so where and
    /// how large it opens, and the pedals' zoom) stays what the board asks for.
    let tracksButton = gtk_toggle_button_new_with_label("Tracks")!
    private let readoutLabel = gtk_label_new("")!
    /// What the readout in the strip says (a knob's value while it turns).
    private(set) var readout: String?
    private var tick: UInt32 = 0
    private var ticks = 0
    private var seenChanges: UInt64 = .max
    private var seenClips = (input: 0, output: 0)
    /// The last footswitch action and where it came from, for the state file.
    private var lastFootAction: String?

    init(application: UnsafeMutablePointer<GtkApplication>, engine: LiveEngine, hooks: TestHooks?) {
        self.engine = engine
        self.hooks = hooks
        controls = engine.chain.controls
        window = gtk_application_window_new(application)
        placement = WindowPlacement(window: window)
        learn = LearnController(engine: engine, window: window, footControls: footControls)
        var showReadout: (String?) -> Void = { _ in }
        board = BoardView(engine: engine, learn: learn, window: window, onReadout: { showReadout($0) })
        addMenu = AddPedalMenu(engine: engine, board: board, onReadout: { showReadout($0) })
        statusBar = StatusBar(engine: engine)
        onSignal(raw(statusBar.aboutButton), "clicked") { [window] in StatusBar.showAbout(parent: window) }
        gtk_window_set_title(cast(raw(window)), "Stompbox")
        if let icon = ResourceLocator.path("io.github.stompbox.Stompbox.svg") {
            gtk_window_set_icon_from_file(cast(raw(window)), icon, nil)
        }
        addClass(window, "stompbox")
        presetColumn = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8)
        moreButton = gtk_button_new_with_label("More…")
        showReadout = { [weak self] in self?.showReadout($0) }
        learn.perform = { [unowned self] in perform($0, $1, from: $2) }
        board.syncControls = { [unowned self] in syncControls() }

        let root = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0)!
        gtk_container_add(cast(raw(window)), root)
        gtk_box_pack_start(cast(raw(root)), makeStrip(), 0, 0, 0)
        tuner = TunerView(tap: engine.chain.controls.tuner, sampleRate: { [weak engine] in engine?.chain.sampleRate ?? 48_000 })
        gtk_box_pack_start(cast(raw(root)), tuner.widget, 0, 0, 0)
        // Footswitch keys (controls.json; T the tuner, 1/2/3 the presets, Space the Looper…),
        // wherever the focus is but in a text field, before the focused control sees the key.
        onEvent(raw(window), "key-press-event") { [unowned self] event in
            let key: UnsafeMutablePointer<GdkEventKey> = cast(event)
            if learn.handleKey(key) { return true }
            guard key.pointee.state & (GDK_CONTROL_MASK.rawValue | GDK_MOD1_MASK.rawValue | GDK_SUPER_MASK.rawValue) == 0,
                  let name = gdk_keyval_name(key.pointee.keyval).map({ String(cString: $0) }),
                  let action = footControls.controls.action(forKey: name) else { return false }
            if let focus = gtk_window_get_focus(cast(raw(window))),
               g_type_check_instance_is_a(UnsafeMutablePointer<GTypeInstance>(OpaquePointer(focus)), gtk_entry_get_type()) != 0 {
                return false
            }
            perform(action, .press, from: "key \(name)")
            return true
        }
        gtk_box_pack_start(cast(raw(root)), makeMiddle(), 1, 1, 0)
        gtk_box_pack_start(cast(raw(root)), statusBar.widget, 0, 0, 0)

        onEvent(raw(window), "key-press-event") { [unowned self] event in
            let e: UnsafeMutablePointer<GdkEventKey> = cast(event)
            let ctrl = e.pointee.state & GDK_CONTROL_MASK.rawValue != 0
            if ctrl && (Int32(e.pointee.keyval) == GDK_KEY_q || Int32(e.pointee.keyval) == GDK_KEY_w) {
                gtk_window_close(cast(raw(window)))
                return true
            }
            return false
        }
        onSignal(raw(window), "destroy") { [unowned self] in
            if tick != 0 { g_source_remove(tick); tick = 0 }
            board.stop()
            placement.save()
            self.hooks?.windowClosed()
            learn.stop()
            onClosed?()
        }
        learn.openMIDI()
        tick = addTimeout(milliseconds: UInt32(1000 / Self.pollsPerSecond)) { [weak self] in
            self?.poll()
            return true
        }
        board.start()
    }

    /// Sizes, places and shows the window, once the preset it opens on has set the board: its
    /// natural size is that board's, not the default board's.
    func open() {
        board.follow()
        placement.place()
        onEvent(raw(window), "configure-event") { [unowned self] _ in placement.note(); return false }
        board.followViewSize()
        onEvent(raw(window), "window-state-event") { [unowned self] _ in placement.note(); return false }
        gtk_widget_show_all(window)
        hooks?.windowOpened(window)
    }

    /// The selector strip: the brand, the selectors, Tuner, Add pedal…, More…, and the readout.
    private func makeStrip() -> UnsafeMutablePointer<GtkWidget> {
        let strip = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6)!
        addClass(strip, "strip")
        let brand = gtk_label_new("STOMPBOX")!
        addClass(brand, "brand")
        gtk_box_pack_start(cast(raw(strip)), brand, 0, 0, 6)
        addClass(moreButton, "more-button")
        setAccessible(moreButton, name: "More effects")
        gtk_widget_set_tooltip_text(moreButton, "More effects")
        gtk_box_pack_start(cast(raw(strip)), board.selectorScroller, 1, 1, 0)
        addClass(tunerButton, "add-pedal")
        setAccessible(tunerButton, name: "Tuner")
        gtk_widget_set_tooltip_text(tunerButton, "Open the tuner (T); it mutes the board unless Play through is on")
        onSignal(raw(tunerButton), "toggled") { [unowned self] in
            let wanted = gtk_toggle_button_get_active(cast(raw(tunerButton))) != 0
            if wanted != tuner.isOpen { tuner.toggle() }
        }
        gtk_box_pack_start(cast(raw(strip)), tunerButton, 0, 0, 2)
        gtk_box_pack_start(cast(raw(strip)), addMenu.button, 0, 0, 6)
        gtk_box_pack_start(cast(raw(strip)), moreButton, 0, 0, 6)
        addClass(readoutLabel, "readout")
        gtk_label_set_ellipsize(cast(raw(readoutLabel)), PANGO_ELLIPSIZE_END)
        gtk_label_set_width_chars(cast(raw(readoutLabel)), 4)
        gtk_label_set_max_width_chars(cast(raw(readoutLabel)), 28)
        gtk_box_pack_end(cast(raw(strip)), readoutLabel, 0, 0, 12)
        return strip
    }

    /// The preset column (with the tempo at its foot) and the board: the meters stay put on
    /// either side, the pedals scroll between them.
    private func makeMiddle() -> UnsafeMutablePointer<GtkWidget> {
        let middle = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0)!
        addClass(presetColumn, "preset-column")
        gtk_widget_set_size_request(presetColumn, 150, -1)
        let presetTitle = gtk_label_new("PRESETS")!
        addClass(presetTitle, "column-title")
        gtk_box_pack_start(cast(raw(presetColumn)), presetTitle, 0, 0, 0)
        gtk_box_pack_start(cast(raw(middle)), presetColumn, 0, 0, 0)
        tempo = TempoSection(store: controls.parameters, onReadout: { [weak self] in self?.showReadout($0) },
                             onTap: { [weak self] in self?.perform(.tapTempo, .press, from: "button") })
        gtk_box_pack_end(cast(raw(presetColumn)), tempo.widget, 0, 0, 8)
        // Under the presets, not in the strip: the strip's room goes to the pedals' selectors.
        addClass(tracksButton, "pedal-button")
        gtk_widget_set_size_request(tracksButton, -1, 34)
        setAccessible(tracksButton, name: "Tracks")
        gtk_widget_set_tooltip_text(tracksButton, "Show the tracks: the Looper's loop tracks and the session's")
        onSignal(raw(tracksButton), "toggled") { [unowned self] in
            let shown = gtk_toggle_button_get_active(cast(raw(tracksButton))) != 0
            // Hidden from the window's first show_all by no-show-all, which show_all also obeys here.
            gtk_widget_set_no_show_all(tracks.widget, 0)
            if shown { gtk_widget_show_all(tracks.widget) } else { gtk_widget_hide(tracks.widget) }
        }
        gtk_box_pack_end(cast(raw(presetColumn)), tracksButton, 0, 0, 0)
        learn.attach(tempo.knob, .parameter(Parameter.tempo.id), "Tempo")
        learn.attach(tempo.levelKnob, .parameter(Parameter.metronomeLevel.id), "Metronome Level")
        learn.attach(tempo.tapButton, .tapTempo, "Tap tempo")
        learn.attach(tempo.clickButton, .metronome, "Metronome on/off")

        let boardBox = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0)!
        addClass(boardBox, "board")
        gtk_box_pack_start(cast(raw(boardBox)), inputMeter.widget, 0, 0, 8)
        gtk_widget_set_valign(inputMeter.widget, GTK_ALIGN_CENTER)
        gtk_box_pack_start(cast(raw(boardBox)), board.scroller, 1, 1, 0)
        gtk_box_pack_start(cast(raw(boardBox)), outputMeter.widget, 0, 0, 8)
        gtk_widget_set_valign(outputMeter.widget, GTK_ALIGN_CENTER)
        gtk_box_pack_start(cast(raw(middle)), boardBox, 1, 1, 0)
        tracks = TracksPanel(engine: engine)
        tracks.window = window
        tracks.isLooperLocked = { [unowned self] in isLocked(.looper) }
        tracks.onLooperLocked = { [unowned self] in onLocked?(.looper) }
        tracks.record = { [unowned self] start in tracks.liveRecord(start) }
        gtk_widget_set_no_show_all(tracks.widget, 1)
        gtk_box_pack_end(cast(raw(middle)), tracks.widget, 0, 0, 6)
        return middle
    }

    /// Right-click on a control (or a preset), or a finger held still on it: learn MIDI or a key
    /// for `action` (see `LearnController.attach`).
    func attachLearnMenu(_ widget: UnsafeMutablePointer<GtkWidget>, _ action: FootAction, _ label: String, longPress: Bool = true) {
        learn.attach(widget, action, label, longPress: longPress)
    }

    /// Carries out a footswitch action (a key, a MIDI message): the dispatcher switches pedals,
    /// turns knobs, taps the Looper and the tempo; the tuner is the window's, presets the panel's.
    func perform(_ action: FootAction, _ input: FootInput, from source: String) {
        lastFootAction = "\(source): \(action)"
        guard let own = dispatcher.perform(action, input) else {
            if case .selectedPedal = action, let kind = selectedPedal { board.scrollIntoView(kind) }
            syncControls()
            return
        }
        switch own {
        case .tuner: gtk_toggle_button_set_active(cast(raw(tunerButton)), tuner.isOpen ? 0 : 1)
        default: onPresetAction?(own)
        }
    }

    /// Redraws the pedals after the store's locks changed (padlocks appear or go).
    func locksChanged() {
        board.redrawLocks()
        syncControls()
    }

    private func showReadout(_ text: String?) {
        readout = text
        gtk_label_set_text(cast(raw(readoutLabel)), text ?? "")
    }

    /// Knobs, sliders, footswitches and strip follow the parameter store.
    private func syncControls() {
        board.syncPedals()
        tempo.sync()
        board.syncSelectors()
    }

    /// How often the window reads the engine: meters, status, looper, outside changes. 20 frames
    /// a second keep the meters lively; each poll that moves a meter costs a repaint, and the
    /// GUI thread's CPU while audio plays untouched is a `make bench` goal (≤ 1 % of a core).
    static let pollsPerSecond = 20

    /// `pollsPerSecond` times a second: engine status and meters, looper, outside parameter changes.
    private func poll() {
        ticks += 1
        learn.receiveMIDI()
        engine.chain.collectRetiredBoard()
        board.follow()
        let status = engine.status()
        let clips = controls.meters.clipCounts
        inputMeter.feed(peakDB: status.inputPeakDB, clip: clips.input > seenClips.input)
        outputMeter.feed(peakDB: status.outputPeakDB, clip: clips.output > seenClips.output,
                         reductionDB: Double(controls.meters.takeLimiterReduction()))
        seenClips = clips
        statusBar.poll(status, tick: ticks, pollsPerSecond: Self.pollsPerSecond)
        board.updateLoopers()
        let changes = controls.parameters.changeCount
        tracks.poll(tick: ticks, parametersChanged: changes != seenChanges)
        if changes != seenChanges {
            seenChanges = changes
            syncControls()
        }
        if ticks % Self.pollsPerSecond == 0 { placement.save() }
        // Not while a new board or zoom is being placed: a report then would show its widgets
        // unplaced (a test reading it would find them all at one point).
        if let hooks, hooks.isReporting, ticks % 2 == 0, !board.placingWidgets {
            hooks.report(engine: engine, status: status, readout: readout, statusText: statusBar.text,
                         layout: { layout() },
                         extra: { ["tuner": tuner.state, "footControls": footState, "tempo": tempo.state, "tracks": tracks.state] })
        }
    }

    /// The state file's `footControls`.
    private var footState: [String: Any] {
        (["selectedPedal": selectedPedal?.id ?? NSNull(), "lastAction": lastFootAction ?? NSNull(),
          "notices": footControls.notices, "file": footControls.url.path] as [String: Any])
            .merging(learn.state) { $1 }
    }
}
