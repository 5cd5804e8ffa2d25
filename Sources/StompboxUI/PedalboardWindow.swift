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
/// maximised where it does not, or where the person left it last time (`WindowGeometry`). The
/// pedals scroll sideways between the meters (wheel, scroll bar, or a finger's swipe with
/// kinetic scrolling) while the strip, the presets, the meters and the status bar stay in view;
/// a tap on a pedal's entry in the strip scrolls that pedal into view. The pedals are drawn at
/// the zoom that fits the room they have (`BoardZoom`): larger in a large window, a little
/// smaller where that saves scrolling, never below a size whose labels read and whose knobs a
/// finger can grab (controls of 51 px and more); on a large screen the window opens big enough
/// to show them larger.
public final class PedalboardWindow {
    public let window: UnsafeMutablePointer<GtkWidget>
    /// Left-hand column for the preset panel (filled by the preset issue).
    public let presetColumn: UnsafeMutablePointer<GtkWidget>
    /// "More…" at the end of the selector strip (the store dialog is connected by the store issue).
    public let moreButton: UnsafeMutablePointer<GtkWidget>

    let engine: LiveEngine
    let controls: EngineControls
    private var pedals: [PedalView] = []
    private var selectors: [(kind: PedalKind, button: UnsafeMutablePointer<GtkWidget>)] = []
    private let inputMeter = LevelMeter(title: "IN", accessibleName: "Input Level")
    private let outputMeter = LevelMeter(title: "OUT", accessibleName: "Output Level")
    private var statusLabel: UnsafeMutablePointer<GtkWidget>!
    private var statusLight: UnsafeMutablePointer<GtkWidget>!
    private var readoutLabel: UnsafeMutablePointer<GtkWidget>!
    private var devicePicker: DevicePicker!
    private var tuner: TunerView!
    private var tempo: TempoSection!
    private let tunerButton = gtk_toggle_button_new_with_label("Tuner")!
    private var tick: UInt32 = 0
    private var seenChanges: UInt64 = .max
    private var seenClips = (input: 0, output: 0)
    private var lastStatusText = ""
    private struct StatusKey: Equatable { var state: LiveState; var underruns: Int; var overruns: Int }
    private var shownStatusKey: StatusKey?
    private var readout: String?
    private var ticks = 0
    private let started = Date()
    private let reporter: StateReporter?
    private var updatingSelectors = false
    /// The pedals and their selectors, in the chain's board order (rebuilt when it changes).
    private let pedalBox = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, Int32(PedalboardWindow.pedalSpacing))!
    private let selectorBox = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6)!
    /// The pedals' scrolled window.
    private let scroller = gtk_scrolled_window_new(nil, nil)!
    /// The selectors' scrolled window (the wheel scrolls it sideways when they overflow).
    private let selectorScroller = gtk_scrolled_window_new(nil, nil)!
    /// Where the window is (logical pixels), kept in `window.json` about a second after it moved.
    private var geometry: WindowGeometry?
    private var geometryChanged = false
    private let geometryFile = WindowGeometry.file(in: UserDirectories())
    /// `STOMPBOX_LAUNCHED_AT` (CLOCK_MONOTONIC nanoseconds when the benchmark launched the
    /// process): the window says on stderr how many milliseconds from then its first frame was
    /// drawn ("stompbox: first frame 180.2 ms after launch"), for `make bench`.
    private var firstFrameShown = false
    /// `STOMPBOX_TEST_TOUCH`: synthetic touch for the tests (see `TestTouchFeed`).
    private var touchFeed: TestTouchFeed?
    private var shownBoard: [PedalKind] = []
    /// The pedals' zoom (see `BoardZoom`), its CSS (the pedals' GTK controls' type sizes), and
    /// the pending check after the board's view changed size.
    private(set) var zoom = 1.0
    private let zoomStyle = gtk_css_provider_new()!
    private var zoomCheck: UInt32 = 0
    /// The pedal box's border and spacing (logical pixels, not zoomed).
    private static let boardBorder = 12, pedalSpacing = 10
    /// "Add pedal…" at the end of the selectors, and its menu while open.
    private let addButton = gtk_button_new_with_label("Add pedal…")!
    private var addMenu: UnsafeMutablePointer<GtkWidget>?
    /// The footswitch bindings (`controls.json`) and what carries out their actions.
    let footControls = FootControlsFile()
    private(set) lazy var dispatcher: FootControlDispatcher = {
        let d = FootControlDispatcher(controls: controls, board: { [unowned self] in engine.chain.board })
        d.selectedPedal = { [unowned self] in selectedPedal }
        d.isLocked = { [unowned self] in isLocked($0) }
        d.onLocked = { [unowned self] in onLocked?($0) }
        return d
    }()
    /// The pedal last touched (B switches it); the board's first until one is touched.
    private(set) var selectedPedal: PedalKind?
    /// Preset actions (play 1-3, next, previous) go to the preset panel.
    var onPresetAction: ((FootAction) -> Void)?
    /// The last footswitch action and where it came from, for the state file.
    private var lastFootAction: String?
    /// MIDI in: JACK's `stompbox:midi_in` and the ALSA sequencer's `Stompbox:midi_in`.
    private var midi: MIDIInputs?
    /// MIDI learn: the action the next MIDI message will be bound to, and what to call it.
    private var learning: (action: FootAction, label: String)?
    /// Key learn: the action the next key will be bound to.
    private var learningKey: (action: FootAction, label: String)?
    private var lastMIDI: String?
    /// Notices for the bar under the strip (set by the app: the preset panel's info bar).
    var onNotice: ((Dialogs.Kind, String) -> Void)?
    /// Called when the window is gone (destroyed).
    var onClosed: (() -> Void)?
    /// The store's answer to "is this pedal locked?" (set by `StoreFront`); a locked pedal is
    /// never switched on from the strip or its footswitch: `onLocked` runs instead.
    var isLocked: (PedalKind) -> Bool = { _ in false }
    var onLocked: ((PedalKind) -> Void)?
    /// More entries for the state file (`extraState`) and its `layout` (`extraLayout`).
    var extraState: (() -> [String: Any])?
    var extraLayout: (() -> [String: Any])?

    init(application: UnsafeMutablePointer<GtkApplication>, engine: LiveEngine, stateFile: String?) {
        self.engine = engine
        controls = engine.chain.controls
        reporter = stateFile.map(StateReporter.init(path:))
        window = gtk_application_window_new(application)
        gtk_window_set_title(cast(raw(window)), "Stompbox")
        if let icon = ResourceLocator.path("io.github.stompbox.Stompbox.svg") {
            gtk_window_set_icon_from_file(cast(raw(window)), icon, nil)
        }
        addClass(window, "stompbox")

        let root = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0)!
        gtk_container_add(cast(raw(window)), root)

        // Selector strip.
        let strip = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6)!
        addClass(strip, "strip")
        let brand = gtk_label_new("STOMPBOX")!
        addClass(brand, "brand")
        gtk_box_pack_start(cast(raw(strip)), brand, 0, 0, 6)
        moreButton = gtk_button_new_with_label("More…")
        addClass(moreButton, "more-button")
        setAccessible(moreButton, name: "More effects")
        gtk_widget_set_tooltip_text(moreButton, "More effects")
        presetColumn = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8)
        statusLabel = gtk_label_new("Starting…")
        readoutLabel = gtk_label_new("")
        statusLight = gtk_label_new("●")

        // The selectors scroll too when there are more than the strip has room for.
        gtk_scrolled_window_set_policy(cast(raw(selectorScroller)), GTK_POLICY_AUTOMATIC, GTK_POLICY_NEVER)
        gtk_scrolled_window_set_propagate_natural_width(cast(raw(selectorScroller)), 1)
        gtk_container_add(cast(raw(selectorScroller)), selectorBox)
        gtk_box_pack_start(cast(raw(strip)), selectorScroller, 1, 1, 0)
        addClass(addButton, "add-pedal")
        setAccessible(addButton, name: "Add pedal")
        gtk_widget_set_tooltip_text(addButton, "Put a pedal on the board (drag a pedal to move it, × takes it off)")
        onSignal(raw(addButton), "clicked") { [unowned self] in showAddMenu() }
        addClass(tunerButton, "add-pedal")
        setAccessible(tunerButton, name: "Tuner")
        gtk_widget_set_tooltip_text(tunerButton, "Open the tuner (T); it mutes the board unless Play through is on")
        onSignal(raw(tunerButton), "toggled") { [unowned self] in
            let wanted = gtk_toggle_button_get_active(cast(raw(tunerButton))) != 0
            if wanted != tuner.isOpen { tuner.toggle() }
        }
        gtk_box_pack_start(cast(raw(strip)), tunerButton, 0, 0, 2)
        gtk_box_pack_start(cast(raw(strip)), addButton, 0, 0, 6)
        gtk_box_pack_start(cast(raw(strip)), moreButton, 0, 0, 6)
        addClass(readoutLabel, "readout")
        gtk_label_set_ellipsize(cast(raw(readoutLabel)), PANGO_ELLIPSIZE_END)
        gtk_label_set_width_chars(cast(raw(readoutLabel)), 4)
        gtk_label_set_max_width_chars(cast(raw(readoutLabel)), 28)
        gtk_box_pack_end(cast(raw(strip)), readoutLabel, 0, 0, 12)
        gtk_box_pack_start(cast(raw(root)), strip, 0, 0, 0)
        tuner = TunerView(tap: engine.chain.controls.tuner, sampleRate: { [weak engine] in engine?.chain.sampleRate ?? 48_000 })
        gtk_box_pack_start(cast(raw(root)), tuner.widget, 0, 0, 0)
        // Footswitch keys (controls.json; T the tuner, 1/2/3 the presets, Space the Looper…),
        // wherever the focus is but in a text field, before the focused control sees the key.
        onEvent(raw(window), "key-press-event") { [unowned self] event in
            let key: UnsafeMutablePointer<GdkEventKey> = cast(event)
            if (learning != nil || learningKey != nil) && Int32(key.pointee.keyval) == GDK_KEY_Escape {
                learning = nil
                learningKey = nil
                onNotice?(.info, "Learning cancelled.")
                return true
            }
            // Learn key: the next key (but a modifier alone) is bound.
            if let learn = learningKey, key.pointee.is_modifier == 0,
               let name = gdk_keyval_name(key.pointee.keyval).map({ String(cString: $0) }) {
                learningKey = nil
                do {
                    try footControls.learnKey(name, for: learn.action)
                    onNotice?(.info, "Key learned: \(name) → \(learn.label). It is kept in \(footControls.url.path).")
                } catch {
                    onNotice?(.error, "The key could not be saved: \(error)")
                }
                return true
            }
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

        // Middle: preset column and the board.
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
        attachLearnMenu(tempo.knob, .parameter(Parameter.tempo.id), "Tempo")
        attachLearnMenu(tempo.levelKnob, .parameter(Parameter.metronomeLevel.id), "Metronome Level")
        attachLearnMenu(tempo.tapButton, .tapTempo, "Tap tempo")
        attachLearnMenu(tempo.clickButton, .metronome, "Metronome on/off")

        // The board: the meters stay put on either side, the pedals scroll between them.
        let board = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0)!
        addClass(board, "board")
        gtk_box_pack_start(cast(raw(board)), inputMeter.widget, 0, 0, 8)
        gtk_widget_set_valign(inputMeter.widget, GTK_ALIGN_CENTER)
        addClass(scroller, "board-light")
        gtk_scrolled_window_set_policy(cast(raw(scroller)), GTK_POLICY_AUTOMATIC, GTK_POLICY_AUTOMATIC)
        gtk_scrolled_window_set_propagate_natural_width(cast(raw(scroller)), 1)
        gtk_scrolled_window_set_propagate_natural_height(cast(raw(scroller)), 1)
        gtk_scrolled_window_set_kinetic_scrolling(cast(raw(scroller)), 1)
        // A scroll bar always shown: a board wider than the window says so.
        gtk_scrolled_window_set_overlay_scrolling(cast(raw(scroller)), 0)
        gtk_widget_set_valign(pedalBox, GTK_ALIGN_CENTER)
        gtk_widget_set_halign(pedalBox, GTK_ALIGN_CENTER)
        gtk_container_set_border_width(cast(raw(pedalBox)), UInt32(Self.boardBorder))
        gtk_container_add(cast(raw(scroller)), pedalBox)
        gtk_box_pack_start(cast(raw(board)), scroller, 1, 1, 0)
        gtk_box_pack_start(cast(raw(board)), outputMeter.widget, 0, 0, 8)
        gtk_widget_set_valign(outputMeter.widget, GTK_ALIGN_CENTER)
        gtk_box_pack_start(cast(raw(middle)), board, 1, 1, 0)
        gtk_box_pack_start(cast(raw(root)), middle, 1, 1, 0)

        // Status bar.
        let bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8)!
        addClass(bar, "status-bar")
        addClass(statusLight, "status-light")
        gtk_box_pack_start(cast(raw(bar)), statusLight, 0, 0, 0)
        gtk_label_set_ellipsize(cast(raw(statusLabel)), PANGO_ELLIPSIZE_END)
        // A long status never widens the window (it ellipsizes; the tooltip has it whole).
        gtk_label_set_max_width_chars(cast(raw(statusLabel)), 60)
        gtk_label_set_xalign(cast(raw(statusLabel)), 0)
        setAccessible(statusLabel, name: "Audio status")
        gtk_box_pack_start(cast(raw(bar)), statusLabel, 1, 1, 0)
        devicePicker = DevicePicker(engine: engine)
        gtk_box_pack_end(cast(raw(bar)), devicePicker.button, 0, 0, 0)
        gtk_box_pack_start(cast(raw(root)), bar, 0, 0, 0)

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
            if zoomCheck != 0 { g_source_remove(zoomCheck); zoomCheck = 0 }
            if let screen = gdk_screen_get_default() { gtk_style_context_remove_provider_for_screen(screen, OpaquePointer(zoomStyle)) }
            g_object_unref(raw(zoomStyle))
            saveGeometry()
            touchFeed?.stop()
            touchFeed = nil
            midi?.stop()
            onClosed?()
        }
        midi = MIDIInputs(engine: engine)
        tick = addTimeout(milliseconds: UInt32(1000 / Self.pollsPerSecond)) { [weak self] in
            self?.poll()
            return true
        }
        if let screen = gdk_screen_get_default() {
            gtk_style_context_add_provider_for_screen(screen, OpaquePointer(zoomStyle), UInt32(GTK_STYLE_PROVIDER_PRIORITY_APPLICATION) + 1)
        }
        styleZoom()
        showBoard()
        place()
        onEvent(raw(window), "configure-event") { [unowned self] _ in noteGeometry(); return false }
        // The board's view changed size: its pedals' zoom is checked once the size settles.
        onSignalWithPointer(raw(scroller), "size-allocate") { [unowned self] in
            if zoomCheck != 0 { g_source_remove(zoomCheck) }
            zoomCheck = addTimeout(milliseconds: 120) { [weak self] in
                self?.zoomCheck = 0
                self?.fitZoom()
                return false
            }
        }
        onEvent(raw(window), "window-state-event") { [unowned self] _ in noteGeometry(); return false }
        gtk_widget_show_all(window)
        if let launched = ProcessInfo.processInfo.environment["STOMPBOX_LAUNCHED_AT"].flatMap(Int.init) {
            onEvent(raw(window), "draw") { [unowned self] _ in
                if !firstFrameShown {
                    firstFrameShown = true
                    var now = timespec()
                    clock_gettime(CLOCK_MONOTONIC, &now)
                    let ms = Double(Int(now.tv_sec) * 1_000_000_000 + now.tv_nsec - launched) / 1e6
                    FileHandle.standardError.write(Data(String(format: "stompbox: first frame %.1f ms after launch\n", ms).utf8))
                }
                return false
            }
        }
        if let path = ProcessInfo.processInfo.environment["STOMPBOX_TEST_TOUCH"] {
            touchFeed = TestTouchFeed(path: path, window: window)
        }
    }

    /// Sizes and places the window before it is shown (see the type's comment).
    private func place() {
        gtk_widget_show_all(gtk_bin_get_child(cast(raw(window))))
        var minimum = GtkRequisition(), natural = GtkRequisition()
        gtk_widget_get_preferred_size(window, &minimum, &natural)
        var areas: [(x: Int, y: Int, width: Int, height: Int)] = []
        if let display = gdk_display_get_default() {
            // The primary monitor first: an unknown or lost place opens there.
            let primary = gdk_display_get_primary_monitor(display)
            var monitors = primary.map { [$0] } ?? []
            for i in 0..<gdk_display_get_n_monitors(display) {
                if let m = gdk_display_get_monitor(display, i), m != primary { monitors.append(m) }
            }
            for m in monitors {
                var r = GdkRectangle()
                gdk_monitor_get_workarea(m, &r)
                areas.append((Int(r.x), Int(r.y), Int(r.width), Int(r.height)))
            }
        }
        let (saved, problem) = WindowGeometry.load(from: geometryFile)
        if let problem { FileHandle.standardError.write(Data("stompbox: \(problem)\n".utf8)) }
        guard let g = WindowGeometry.placement(saved: saved, natural: (Int(natural.width), Int(natural.height)), workAreas: areas) else {
            // The natural size fits: on a large screen the window opens larger (its pedals
            // zoom to fill it), in the middle of the primary area.
            guard let area = areas.first else { return }
            let size = BoardZoom.openingSize(natural: (Int(natural.width), Int(natural.height)), area: (area.width, area.height))
            guard size.width > Int(natural.width) else { return }
            gtk_window_set_default_size(cast(raw(window)), Int32(size.width), Int32(size.height))
            gtk_window_move(cast(raw(window)), Int32(area.x + (area.width - size.width) / 2), Int32(area.y + (area.height - size.height) / 2))
            return
        }
        gtk_window_set_default_size(cast(raw(window)), Int32(g.width), Int32(g.height))
        gtk_window_move(cast(raw(window)), Int32(g.x), Int32(g.y))
        if g.maximized { gtk_window_maximize(cast(raw(window))) }
    }

    private func noteGeometry() {
        let gtkWindow: UnsafeMutablePointer<GtkWindow> = cast(raw(window))
        guard gtk_widget_get_realized(window) != 0 else { return }
        let maximized = gtk_window_is_maximized(gtkWindow) != 0
        var x: Int32 = 0, y: Int32 = 0, w: Int32 = 0, h: Int32 = 0
        gtk_window_get_position(gtkWindow, &x, &y)
        gtk_window_get_size(gtkWindow, &w, &h)
        // A maximised window keeps the size it will return to.
        var g = WindowGeometry(x: Int(x), y: Int(y), width: Int(w), height: Int(h), maximized: maximized)
        if maximized, let old = geometry { g.width = old.width; g.height = old.height; g.x = old.x; g.y = old.y }
        if g != geometry { geometry = g; geometryChanged = true }
    }

    private func saveGeometry() {
        guard geometryChanged, let geometry else { return }
        geometryChanged = false
        do { try geometry.save(to: geometryFile) } catch {
            FileHandle.standardError.write(Data("stompbox: the window's place was not kept: \(error.description)\n".utf8))
        }
    }

    /// Scrolls the board so the pedal is in view.
    private func scrollIntoView(_ kind: PedalKind) {
        guard let pedal = pedals.first(where: { $0.kind == kind }),
              let adjustment = gtk_scrolled_window_get_hadjustment(cast(raw(scroller))) else { return }
        var x: Int32 = 0, y: Int32 = 0
        gtk_widget_translate_coordinates(pedal.widget, pedalBox, 0, 0, &x, &y)
        let left = Double(x) - 12, right = Double(x) + Double(gtk_widget_get_allocated_width(pedal.widget)) + 12
        gtk_adjustment_clamp_page(adjustment, max(0, left), right)
    }

    /// The zoom for the board's view as it is now; a new one rebuilds the pedals at it, keeping
    /// the scroll position's share of the board.
    private func fitZoom() {
        guard gtk_widget_get_mapped(scroller) != 0 else { return }
        let fit = BoardZoom.fit(view: (Int(gtk_widget_get_allocated_width(scroller)), Int(gtk_widget_get_allocated_height(scroller))),
                                pedalWidths: pedals.map(\.layout.width), pedalHeight: PedalLayout.height,
                                spacing: Self.pedalSpacing, border: Self.boardBorder)
        guard fit != zoom else { return }
        let adjustment = gtk_scrolled_window_get_hadjustment(cast(raw(scroller)))
        let share = adjustment.map { a in
            let range = gtk_adjustment_get_upper(a) - gtk_adjustment_get_page_size(a)
            return range > 0 ? gtk_adjustment_get_value(a) / range : 0
        } ?? 0
        zoom = fit
        styleZoom()
        showBoard()
        if let adjustment, share > 0 {
            // The new pedals' sizes are known once laid out.
            _ = addTimeout(milliseconds: 0) { [weak self] in
                guard self != nil else { return false }
                let range = gtk_adjustment_get_upper(adjustment) - gtk_adjustment_get_page_size(adjustment)
                gtk_adjustment_set_value(adjustment, share * max(0, range))
                return false
            }
        }
    }

    /// The type sizes of the pedals' GTK controls (switch glyphs, Undo, the EQ's band names and
    /// fader caps) at the board's zoom; the knobs and faces draw theirs scaled.
    private func styleZoom() {
        func px(_ value: Double) -> String { String(format: "%.1fpx", value * zoom) }
        let css = """
            .pedal radiobutton.shape-switch, .pedal button.shape-switch { font-size: \(px(14)); }
            .pedal button.pedal-button { font-size: \(px(10)); }
            .pedal .eq-label { font-size: \(px(9)); }
            .pedal scale.eq-fader slider { min-width: \(px(24)); min-height: \(px(12)); margin: -\(px(4)) -\(px(10)); }
            .pedal scale.eq-fader trough { min-width: \(px(6)); }
            """
        gtk_css_provider_load_from_data(zoomStyle, css, -1, nil)
    }

    /// Builds a pedal and a selector for each pedal on the chain's board, in its order.
    private func showBoard() {
        for pedal in pedals { gtk_widget_destroy(pedal.widget) }
        for (_, button) in selectors { gtk_widget_destroy(button) }
        pedals = []
        selectors = []
        shownBoard = engine.chain.board
        let onReadout: (String?) -> Void = { [weak self] text in self?.showReadout(text) }
        for kind in shownBoard {
            let pedal = PedalView(kind: kind, store: controls.parameters, looperControl: controls.looper, zoom: zoom, onReadout: onReadout)
            pedal.looper?.sampleRate = { [weak engine] in engine?.chain.sampleRate ?? 48_000 }
            pedal.isLocked = { [weak self] in self?.isLocked(kind) ?? false }
            pedal.onLocked = { [weak self] in self?.onLocked?(kind) }
            pedal.onMoved = { [weak self] dx in self?.move(kind, by: dx) }
            pedal.onRemove = { [weak self] in self?.rearrange { $0.removeAll { $0 == kind } } }
            pedal.onSelected = { [weak self] in self?.select(kind) }
            for knob in pedal.knobs { attachLearnMenu(knob, .parameter(knob.parameter.id), knob.spec.name) }
            for (parameter, control, _) in pedal.choiceControls {
                attachLearnMenu(control, .parameter(parameter.id), parameter.spec.name)
            }
            if let eq = pedal.equalizer {
                for (band, slider) in zip(Parameter.eqBands, eq.sliders) { attachLearnMenu(slider, .parameter(band.id), band.spec.name) }
            }
            if let looper = pedal.looper {
                attachLearnMenu(looper.footswitch, .looperTap, "the Looper's footswitch", longPress: false)
            } else {
                attachLearnMenu(pedal.footswitch, .pedal(kind.id), "\(kind.name) on/off")
            }
            if let loader = engine.chain.effect(kind) as? FileLoadingEffect {
                pedal.addFileButton(title: "Load \(loader.fileDescription) file…") { [weak self, weak pedal] in
                    self?.loadFile(into: loader, shownOn: pedal)
                }
                pedal.currentFile = { [weak loader] in loader?.file }
                pedal.showFile(loader.file)
            }
            pedals.append(pedal)
            gtk_box_pack_start(cast(raw(pedalBox)), pedal.widget, 0, 0, 0)
            selectors.append((kind, makeSelector(kind)))
        }
        if selectedPedal.map({ !shownBoard.contains($0) }) ?? true { selectedPedal = shownBoard.first }
        for pedal in pedals { pedal.isSelected = pedal.kind == selectedPedal }
        syncControls()
        gtk_widget_show_all(pedalBox)
        gtk_widget_show_all(selectorBox)
    }

    /// Makes `kind` the selected pedal (outlined; B switches it).
    func select(_ kind: PedalKind) {
        selectedPedal = kind
        for pedal in pedals { pedal.isSelected = pedal.kind == kind }
    }

    /// Carries out a footswitch action (a key, a MIDI message): the dispatcher switches pedals,
    /// turns knobs, taps the Looper and the tempo; the tuner is the window's, presets the panel's.
    func perform(_ action: FootAction, _ input: FootInput, from source: String) {
        lastFootAction = "\(source): \(action)"
        guard let own = dispatcher.perform(action, input) else {
            if case .selectedPedal = action, let kind = selectedPedal { scrollIntoView(kind) }
            syncControls()
            return
        }
        switch own {
        case .tuner: gtk_toggle_button_set_active(cast(raw(tunerButton)), tuner.isOpen ? 0 : 1)
        default: onPresetAction?(own)
        }
    }

    /// Asks for a file for a pedal that loads one (the cabinet's impulse response) and loads it;
    /// a file that cannot be used is named in a message and nothing changes.
    private func loadFile(into loader: FileLoadingEffect, shownOn pedal: PedalView?) {
        guard let path = Dialogs.chooseFile(parent: window, title: "Load an \(loader.fileDescription)", save: false,
                                            filter: ("Audio files (WAV, FLAC, AIFF)", ["*.wav", "*.WAV", "*.flac", "*.FLAC", "*.aif", "*.aiff", "*.AIF", "*.AIFF"]),
                                            accept: "_Load") else { return }
        do {
            try loader.load(file: path)
            pedal?.showFile(path)
        } catch {
            _ = Dialogs.message(parent: window, kind: .error, title: "Cannot load the file", text: "\(error)")
        }
    }

    /// A new board for the chain (the window follows it at the next tick).
    private func rearrange(_ change: (inout [PedalKind]) -> Void) {
        var board = engine.chain.board
        change(&board)
        try? engine.chain.setBoard(board)
    }

    /// Drops a dragged pedal where its middle now is: before the first pedal whose middle lies
    /// to the right of it.
    private func move(_ kind: PedalKind, by dx: Double) {
        guard let moved = pedals.first(where: { $0.kind == kind }) else { return }
        func middle(_ p: PedalView) -> Double {
            var x: Int32 = 0, y: Int32 = 0
            gtk_widget_translate_coordinates(p.widget, pedalBox, 0, 0, &x, &y)
            return Double(x) + Double(gtk_widget_get_allocated_width(p.widget)) / 2
        }
        let target = middle(moved) + dx
        let others = pedals.filter { $0.kind != kind }
        let index = others.firstIndex { middle($0) > target } ?? others.count
        rearrange { board in
            board = others.map(\.kind)
            board.insert(kind, at: index)
        }
    }

    /// The built-in pedals not on the board, in the registry's order: what "Add pedal…" offers
    /// first.
    private var addablePedals: [PedalKind] { PedalKind.builtIn.filter { !engine.chain.board.contains($0) } }

    /// "Add pedal…": a menu of the built-in pedals not on the board, then "LV2 plugins": the
    /// installed plugins that can be pedals, in submenus by the first letter of their names (so
    /// hundreds stay usable). The one chosen goes on at the end, a plugin switched on.
    private func showAddMenu() {
        let menu = gtk_menu_new()!
        let missing = addablePedals
        for kind in missing {
            let item = gtk_menu_item_new_with_label(kind.name)!
            onSignal(raw(item), "activate") { [unowned self] in rearrange { $0.append(kind) } }
            gtk_menu_shell_append(cast(raw(menu)), item)
        }
        if missing.isEmpty {
            let item = gtk_menu_item_new_with_label("Every pedal is on the board")!
            gtk_widget_set_sensitive(item, 0)
            gtk_menu_shell_append(cast(raw(menu)), item)
        }
        gtk_menu_shell_append(cast(raw(menu)), gtk_separator_menu_item_new())
        let plugins = gtk_menu_item_new_with_label("LV2 plugins")!
        gtk_menu_item_set_submenu(cast(raw(plugins)), pluginMenu())
        gtk_menu_shell_append(cast(raw(menu)), plugins)
        gtk_widget_show_all(menu)
        gtk_menu_attach_to_widget(cast(raw(menu)), addButton, nil)
        gtk_menu_popup_at_widget(cast(raw(menu)), addButton, GDK_GRAVITY_SOUTH_WEST, GDK_GRAVITY_NORTH_WEST, nil)
        addMenu.map { gtk_widget_destroy($0) }
        addMenu = menu
    }

    /// The installed plugins that can be pedals (read once, when the menu first opens).
    private lazy var installedPlugins: [LV2PluginInfo] = LV2World.shared.plugins().filter(\.canHost)

    private func pluginMenu() -> UnsafeMutablePointer<GtkWidget> {
        let menu = gtk_menu_new()!
        let groups = Dictionary(grouping: installedPlugins) { info in
            info.name.first.map { $0.isLetter ? String($0).uppercased() : "#" } ?? "#"
        }
        for letter in groups.keys.sorted() {
            let sub = gtk_menu_new()!
            for info in groups[letter]! {
                let item = gtk_menu_item_new_with_label(info.name)!
                gtk_widget_set_tooltip_text(item, info.uri)
                onSignal(raw(item), "activate") { [unowned self] in addPlugin(info) }
                gtk_menu_shell_append(cast(raw(sub)), item)
            }
            let item = gtk_menu_item_new_with_label("\(letter)  (\(groups[letter]!.count))")!
            gtk_menu_item_set_submenu(cast(raw(item)), sub)
            gtk_menu_shell_append(cast(raw(menu)), item)
        }
        if groups.isEmpty {
            let item = gtk_menu_item_new_with_label("No LV2 plugin that can be a pedal is installed")!
            gtk_widget_set_sensitive(item, 0)
            gtk_menu_shell_append(cast(raw(menu)), item)
        }
        return menu
    }

    /// Puts a plugin on the board as a new pedal, switched on; says why if it cannot start.
    private func addPlugin(_ info: LV2PluginInfo) {
        let taken = PedalKind.reservedIDs.union(engine.chain.board.map(\.id))
        // "x42-dpl - Digital Peak Limiter Mono" → "x42-dpl-digital"
        let words = info.name.lowercased().split { !($0.isLetter || $0.isNumber) }
        var base = ""
        for word in words where base.count + word.count < 16 { base += (base.isEmpty ? "" : "-") + word }
        if base.isEmpty { base = "lv2" }
        var id = base, n = 2
        while taken.contains(id) { id = "\(base)\(n)"; n += 1 }
        do {
            let kind = try PedalKind.lv2(id: id, uri: info.uri)
            kind.enabledParameter.setPedalValue(1)
            rearrange { $0.append(kind) }
        } catch {
            showReadout("Cannot add \(info.name): \(error.description)")
        }
    }

    private func makeSelector(_ kind: PedalKind) -> UnsafeMutablePointer<GtkWidget> {
        let button = gtk_toggle_button_new()!
        let inner = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6)!
        let led = gtk_label_new("●")!
        addClass(led, "strip-led")
        gtk_box_pack_start(cast(raw(inner)), led, 0, 0, 0)
        gtk_box_pack_start(cast(raw(inner)), gtk_label_new(kind.name), 0, 0, 0)
        gtk_container_add(cast(raw(button)), inner)
        addClass(button, "selector")
        setAccessible(button, name: "\(kind.name) (selector)")
        gtk_widget_set_tooltip_text(button, "Switch \(kind.name) on or off")
        onSignal(raw(button), "toggled") { [unowned self] in
            guard !updatingSelectors else { return }
            select(kind)
            scrollIntoView(kind)
            let on = gtk_toggle_button_get_active(cast(raw(button))) != 0
            if on && isLocked(kind) {
                syncControls()
                onLocked?(kind)
                return
            }
            controls.parameters.set(kind.enabledParameter, on ? 1 : 0)
            syncControls()
        }
        gtk_box_pack_start(cast(raw(selectorBox)), button, 0, 0, 0)
        attachLearnMenu(button, .pedal(kind.id), "\(kind.name) on/off")
        return button
    }

    /// Redraws the pedals after the store's locks changed (padlocks appear or go).
    func locksChanged() {
        for pedal in pedals { gtk_widget_queue_draw(pedal.face); gtk_widget_queue_draw(pedal.footswitch) }
        syncControls()
    }

    private func showReadout(_ text: String?) {
        readout = text
        gtk_label_set_text(cast(raw(readoutLabel)), text ?? "")
    }

    /// Knobs, sliders, footswitches and strip follow the parameter store.
    private func syncControls() {
        for pedal in pedals { pedal.sync() }
        tempo.sync()
        updatingSelectors = true
        for (kind, button) in selectors {
            let on = controls.parameters.isOn(kind.enabledParameter)
            if (gtk_toggle_button_get_active(cast(raw(button))) != 0) != on {
                gtk_toggle_button_set_active(cast(raw(button)), on ? 1 : 0)
            }
        }
        updatingSelectors = false
    }

    /// How often the window reads the engine: meters, status, looper, outside changes. 20 frames
    /// a second keep the meters lively; each poll that moves a meter costs a repaint, and the
    /// GUI thread's CPU while audio plays untouched is a `make bench` goal (≤ 1 % of a core).
    static let pollsPerSecond = 20

    /// `pollsPerSecond` times a second: engine status and meters, looper, outside parameter changes.
    private func poll() {
        ticks += 1
        receiveMIDI()
        engine.chain.collectRetiredBoard()
        if engine.chain.board != shownBoard { showBoard() }
        let status = engine.status()
        let clips = controls.meters.clipCounts
        inputMeter.feed(peakDB: status.inputPeakDB, clip: clips.input > seenClips.input)
        outputMeter.feed(peakDB: status.outputPeakDB, clip: clips.output > seenClips.output,
                         reductionDB: Double(controls.meters.takeLimiterReduction()))
        seenClips = clips
        // The status line four times a second (its figures move by tenths of a millisecond;
        // formatting and relaying it out 30 times a second costs the GUI thread for nothing),
        // at once when the state or the dropout counts change.
        let statusKey = StatusKey(state: status.state, underruns: status.underruns, overruns: status.overruns)
        if ticks % (Self.pollsPerSecond / 4) == 0 || statusKey != shownStatusKey {
            shownStatusKey = statusKey
            updateStatus(status)
        }
        for pedal in pedals { pedal.looper?.update() }
        let changes = controls.parameters.changeCount
        if changes != seenChanges {
            seenChanges = changes
            syncControls()
        }
        if ticks % Self.pollsPerSecond == 0 { saveGeometry() }
        // Not while a new board or zoom is being placed: a report then would show its widgets
        // unplaced (a test reading it would find them all at one point).
        if let reporter, ticks % 2 == 0, !placingWidgets {
            reporter.report(engine: engine, status: status, uiSeconds: Int(Date().timeIntervalSince(started)),
                            readout: readout, layout: withOriginCache { layout() }, statusText: lastStatusText,
                            extra: (extraState?() ?? [:]).merging(["tuner": tuner.state, "footControls": footState, "tempo": tempo.state]) { $1 })
        }
    }

    private var footState: [String: Any] {
        ["selectedPedal": selectedPedal?.id ?? NSNull(), "lastAction": lastFootAction ?? NSNull(),
         "notices": footControls.notices, "file": footControls.url.path,
         "learning": learning.map { $0.action.description } ?? NSNull(), "lastMIDI": lastMIDI ?? NSNull(),
         "learningKey": learningKey.map { $0.action.description } ?? NSNull(),
         "alsa": midi?.alsa.map { $0.problem ?? "\(ALSAMIDIInput.clientName):midi_in at \($0.address ?? "?"), \($0.connections) connected" } ?? "off"]
    }

    // MARK: MIDI

    /// Acts on the MIDI that arrived since the last tick (or learns the first message).
    private func receiveMIDI() {
        midi?.drain { bytes in
            guard let message = MIDIMessage(bytes: bytes) else { return }
            lastMIDI = message.trigger.description + (message.input.map { if case .level(let v) = $0 { " = \(v)" } else { "" } } ?? " off")
            if let learn = learning {
                guard message.input != nil else { return }
                learning = nil
                let trigger = message.trigger
                do {
                    try footControls.learn(trigger, for: learn.action)
                    onNotice?(.info, "MIDI learned: \(trigger) → \(learn.label). It is kept in \(footControls.url.path).")
                } catch {
                    onNotice?(.error, "The MIDI mapping could not be saved: \(error)")
                }
                return
            }
            for (action, input) in footControls.controls.actions(for: message) {
                perform(action, input, from: "MIDI \(message.trigger)")
            }
        }
    }

    /// Right-click on a control (or a preset), or a finger held still on it for a second:
    /// "Learn MIDI…" binds the next MIDI message to `action`; "Forget MIDI" removes what is
    /// bound to it. (`longPress: false` where holding already means something: the Looper's
    /// footswitch clears the loop.)
    func attachLearnMenu(_ widget: UnsafeMutablePointer<GtkWidget>, _ action: FootAction, _ label: String, longPress: Bool = true) {
        gtk_widget_add_events(widget, Int32(bitPattern: GDK_BUTTON_PRESS_MASK.rawValue | GDK_TOUCH_MASK.rawValue))
        if longPress {
            let hold = gtk_gesture_long_press_new(widget)!
            gtk_gesture_single_set_touch_only(hold, 1)
            // Twice GTK's long-press time: a finger resting on a knob before turning it is not a request.
            stompbox_object_set_double(raw(hold), "delay-factor", 2.0)
            // Held: the touch is the long press's (the button under it is not clicked), and the
            // menu opens when the finger lifts (opened under it, the lift would close it again).
            var held = false
            onPoint(raw(hold), "pressed") { _, _ in
                held = true
                gtk_gesture_set_state(hold, GTK_EVENT_SEQUENCE_CLAIMED)
            }
            onSignalWithPointer(raw(hold), "end") { [weak self] in
                guard held else { return }
                held = false
                self?.showLearnMenu(action, label, event: nil, at: widget)
            }
            onSignal(raw(widget), "destroy") { g_object_unref(raw(hold)) }
        }
        onEvent(raw(widget), "button-press-event") { [weak self] event in
            let e: UnsafeMutablePointer<GdkEventButton> = cast(event)
            guard e.pointee.button == 3, e.pointee.type == GDK_BUTTON_PRESS, let self else { return false }
            showLearnMenu(action, label, event: event)
            return true
        }
        onEvent(raw(widget), "popup-menu") { [weak self] _ in
            self?.showLearnMenu(action, label, event: nil, at: widget)
            return true
        }
    }

    /// A knob: right-click, or its own long press (its drag takes the touch, so a gesture beside it would not see one).
    func attachLearnMenu(_ knob: Knob, _ action: FootAction, _ label: String) {
        attachLearnMenu(knob.widget, action, label, longPress: false)
        knob.onLongPress = { [weak self, unowned knob] in self?.showLearnMenu(action, label, event: nil, at: knob.widget) }
    }

    private var learnMenu: UnsafeMutablePointer<GtkWidget>?

    private func showLearnMenu(_ action: FootAction, _ label: String, event: UnsafeMutableRawPointer?,
                               at widget: UnsafeMutablePointer<GtkWidget>? = nil) {
        if let old = learnMenu { gtk_widget_destroy(old) }
        let menu = gtk_menu_new()!
        learnMenu = menu
        let bound = footControls.controls.triggers(for: action)
        let learn = gtk_menu_item_new_with_label("Learn MIDI…" + (bound.isEmpty ? "" : " (now \(bound.map(\.description).joined(separator: ", ")))"))!
        onSignal(raw(learn), "activate") { [unowned self] in startLearning(action, label) }
        gtk_menu_shell_append(cast(raw(menu)), learn)
        let keys = footControls.controls.keys(for: action)
        let learnKey = gtk_menu_item_new_with_label("Learn key…" + (keys.isEmpty ? "" : " (now \(keys.joined(separator: ", ")))"))!
        onSignal(raw(learnKey), "activate") { [unowned self] in
            learning = nil
            learningKey = (action, label)
            onNotice?(.info, "Learn a key for \(label): press the key (or the pedal that types it). Escape cancels.")
        }
        gtk_menu_shell_append(cast(raw(menu)), learnKey)
        if !bound.isEmpty {
            let forget = gtk_menu_item_new_with_label("Forget MIDI")!
            onSignal(raw(forget), "activate") { [unowned self] in
                do { try footControls.forget(action) } catch { onNotice?(.error, "The MIDI mapping could not be saved: \(error)") }
            }
            gtk_menu_shell_append(cast(raw(menu)), forget)
        }
        gtk_menu_attach_to_widget(cast(raw(menu)), window, nil)
        gtk_widget_show_all(menu)
        if event == nil, let widget {
            // A long press (from a timer: no event to pop up at): under the control itself.
            gtk_menu_popup_at_widget(cast(raw(menu)), widget, GDK_GRAVITY_CENTER, GDK_GRAVITY_NORTH_WEST, nil)
        } else {
            gtk_menu_popup_at_pointer(cast(raw(menu)), event.map { cast($0) })
        }
    }

    /// Waits for a MIDI message to bind to `action` (Escape or another Learn replaces it).
    func startLearning(_ action: FootAction, _ label: String) {
        learningKey = nil
        learning = (action, label)
        midi?.drain { _ in }
        var sources: [String] = []
        if let alsa = midi?.alsa, alsa.problem == nil { sources.append("the ALSA sequencer (\(alsa.connections) device\(alsa.connections == 1 ? "" : "s") connected)") }
        if engine.status().backend == .jack { sources.append("JACK's stompbox:midi_in") }
        onNotice?(.info, "Learn MIDI for \(label): move a control or press a button on your MIDI device"
            + (sources.isEmpty ? " (no MIDI input is open: \(midi?.alsa?.problem ?? "no sequencer"))" : " (listening on \(sources.joined(separator: " and ")))") + ".")
    }

    private func updateStatus(_ status: LiveStatus) {
        var parts: [String]
        var light = "status-off"
        switch status.state {
        case .running: parts = ["Running"]; light = "status-ok"
        case .stopped: parts = ["Audio stopped"]
        case .noServer:
            let server = switch engine.settings.backend { case .jack: "JACK server"; case .pulse: "PulseAudio server"; case .auto: "JACK or PulseAudio server" }
            parts = ["No \(server) — retrying"]; light = "status-bad"
        case .waitingForInput: parts = ["Waiting for the input device"]; light = "status-bad"
        case .waitingForOutput: parts = ["Waiting for the output device"]; light = "status-bad"
        }
        if status.backend == .jack { parts.append("JACK" + (status.periodFrames.map { " · \($0) frames" } ?? "")) }
        if let l = status.latencyMs { parts.append(String(format: "latency %.1f ms", l)) }
        if let d = status.driftPPM { parts.append(String(format: "following the input's clock (%+.0f ppm)", d)) }
        let dropouts = status.backend == .jack ? "xrun" : "underrun"
        parts.append("\(status.underruns) \(dropouts)\(status.underruns == 1 ? "" : "s")")
        if let load = status.dspLoadPercent { parts.append(String(format: "DSP %.0f %%", load)) }
        if status.overruns > 0 { parts.append("\(status.overruns) overrun\(status.overruns == 1 ? "" : "s")") }
        parts.append(devicePicker.summary)
        if let m = status.message { parts.append(m) }
        let text = parts.joined(separator: "  ·  ")
        guard text != lastStatusText else { return }
        lastStatusText = text
        gtk_label_set_text(cast(raw(statusLabel)), text)
        gtk_widget_set_tooltip_text(statusLabel, text)
        for c in ["status-ok", "status-bad", "status-off"] { removeClass(statusLight, c) }
        addClass(statusLight, light)
    }

    /// True while a pedal or strip button made since the last layout pass (a new board, a new
    /// zoom) has not been placed yet: GTK gives a widget the allocation (-1, -1) until then.
    private var placingWidgets: Bool {
        let widgets = pedals.map(\.widget) + selectors.map(\.1)
        return widgets.contains { widget in
            guard gtk_widget_get_mapped(widget) != 0 else { return false }
            var allocation = GtkAllocation()
            gtk_widget_get_allocation(widget, &allocation)
            return allocation.x == -1 && allocation.y == -1
        }
    }

    /// Where the controls are on screen, for tests (written to the state file).
    private func layout() -> [String: Any] {
        guard gtk_widget_get_mapped(window) != 0 else { return [:] }
        var result: [String: Any] = [:]
        for pedal in pedals {
            var entry: [String: Any] = [
                "origin": rootPoint(pedal.widget, 0, 0),
                "size": [Int(zoomed(pedal.layout.width, zoom)), Int(zoomed(PedalLayout.height, zoom))],
                "led": { let p = pedal.point(pedal.layout.ledX, pedal.layout.ledY); return rootPoint(pedal.widget, p.x, p.y) }(),
                "footswitch": rootCentre(pedal.footswitch),
            ]
            var knobs: [String: [Int]] = [:]
            for knob in pedal.knobs { knobs[knob.parameter.id] = rootPoint(knob.widget, knob.centreInWidget.x, knob.centreInWidget.y) }
            if let eq = pedal.equalizer {
                for (band, slider) in zip(Parameter.eqBands, eq.sliders) { knobs[band.id] = rootCentre(slider) }
            }
            for (parameter, control, choice) in pedal.choiceControls {
                let names = parameter.spec.choices ?? ["off", "on"]
                knobs[choice < 0 ? parameter.id : "\(parameter.id)=\(names[choice])"] = rootCentre(control)
            }
            entry["controls"] = knobs
            if let looper = pedal.looper { entry["undo"] = rootCentre(looper.undoButton) }
            entry["remove"] = rootCentre(pedal.removeButton)
            if let button = pedal.fileButton {
                entry["load_file"] = rootCentre(button)
                entry["file"] = pedal.shownFile ?? NSNull()
            }
            result[pedal.kind.id] = entry
        }
        var strip: [String: [Int]] = [:]
        for (kind, button) in selectors { strip[kind.id] = rootCentre(button) }
        result["strip"] = strip
        result["more"] = rootCentre(moreButton)
        result["add_pedal"] = rootCentre(addButton)
        result["audio"] = devicePicker.layout
        result["addable"] = addablePedals.map(\.id)
        result["output_meter"] = ["clip": outputMeter.clipped, "limiter_db": outputMeter.reduction] as [String: Any]
        result["board"] = shownBoard.map(\.id)
        result["zoom"] = zoom
        result["tuner_button"] = rootCentre(tunerButton)
        result["tuner_play_through"] = rootCentre(tuner.playThrough)
        result["tempo"] = ["bpm": rootCentre(tempo.bpmEntry), "tap": rootCentre(tempo.tapButton),
                           "metronome": rootCentre(tempo.clickButton), "beats": rootCentre(tempo.beatsSpin)]
        // The smallest knob's control (logical pixels): what a finger has to hit.
        let knobSizes = pedals.flatMap(\.knobs).map { [Int(gtk_widget_get_allocated_width($0.widget)), Int(gtk_widget_get_allocated_height($0.widget))] }
        result["smallest_knob"] = knobSizes.min { min($0[0], $0[1]) < min($1[0], $1[1]) } ?? []
        // The window's rectangle and the visible part of the pedals, in screen pixels.
        let scale = Int(gtk_widget_get_scale_factor(window))
        let topLeft = rootPoint(window, 0, 0)
        result["window"] = topLeft + [Int(gtk_widget_get_allocated_width(window)) * scale, Int(gtk_widget_get_allocated_height(window)) * scale]
        result["strip_view"] = rootPoint(selectorScroller, 0, 0) + [Int(gtk_widget_get_allocated_width(selectorScroller)) * scale, Int(gtk_widget_get_allocated_height(selectorScroller)) * scale]
        result["board_view"] = rootPoint(scroller, 0, 0) + [Int(gtk_widget_get_allocated_width(scroller)) * scale, Int(gtk_widget_get_allocated_height(scroller)) * scale]
        if let extraLayout { result.merge(extraLayout()) { $1 } }
        return result
    }

    func finalReport(closuresAlive: Int) {
        reporter?.report(engine: engine, status: engine.status(), uiSeconds: Int(Date().timeIntervalSince(started)),
                         readout: nil, layout: [:], closuresAlive: closuresAlive)
    }
}
