import CGtk
import Foundation
import StompboxAudio
import StompboxCore
import StompboxDSP

/// The pedals in the chain's board order, in a view between the meters, and their selectors in
/// the strip. It follows the chain's board (rebuilt when it changes), zooms the pedals to the
/// room they have and wraps them onto two rows where that fits them larger or without scrolling
/// (`BoardZoom.arrange`), and moves a pedal dropped after a drag, within a row or across rows.
final class BoardView {
    /// The pedals' scrolled window.
    let scroller = gtk_scrolled_window_new(nil, nil)!
    /// The selectors' scrolled window (the wheel scrolls it sideways when they overflow).
    let selectorScroller = gtk_scrolled_window_new(nil, nil)!
    private(set) var pedals: [PedalView] = []
    private(set) var selectors: [(kind: PedalKind, button: UnsafeMutablePointer<GtkWidget>)] = []
    /// The board the pedals show.
    private(set) var shownBoard: [PedalKind] = []
    /// The pedals' zoom and rows (see `BoardZoom.arrange`).
    private(set) var zoom = 1.0
    private(set) var rows: [Range<Int>] = []
    /// The pedal last touched (B switches it); the board's first until one is touched.
    private(set) var selectedPedal: PedalKind?
    /// The store's answer to "is this pedal locked?"; a locked pedal is never switched on from
    /// the strip or its footswitch: `onLocked` runs instead.
    var isLocked: (PedalKind) -> Bool = { _ in false }
    var onLocked: ((PedalKind) -> Void)?
    /// Every control follows the parameter store (the window's: the pedals', the strip's and the tempo's).
    var syncControls: () -> Void = {}

    private let engine: LiveEngine
    private let controls: EngineControls
    private unowned let learn: LearnController
    /// The window (the parent of the file chooser).
    private let window: UnsafeMutablePointer<GtkWidget>
    private let onReadout: (String?) -> Void
    /// The rows (horizontal boxes of pedals), one above the other.
    private let pedalBox = gtk_box_new(GTK_ORIENTATION_VERTICAL, Int32(BoardView.pedalSpacing))!
    private var rowBoxes: [UnsafeMutablePointer<GtkWidget>] = []
    private let selectorBox = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6)!
    /// The pedals' GTK controls' type sizes at the zoom, and the pending check after the
    /// board's view changed size.
    private let zoomStyle = gtk_css_provider_new()!
    private var zoomCheck: UInt32 = 0
    private var updatingSelectors = false
    /// The pedal box's border and spacing (logical pixels, not zoomed).
    private static let boardBorder = 12, pedalSpacing = 10

    init(engine: LiveEngine, learn: LearnController, window: UnsafeMutablePointer<GtkWidget>, onReadout: @escaping (String?) -> Void) {
        self.engine = engine
        controls = engine.chain.controls
        self.learn = learn
        self.window = window
        self.onReadout = onReadout
        // The selectors scroll too when there are more than the strip has room for.
        gtk_scrolled_window_set_policy(cast(raw(selectorScroller)), GTK_POLICY_AUTOMATIC, GTK_POLICY_NEVER)
        gtk_scrolled_window_set_propagate_natural_width(cast(raw(selectorScroller)), 1)
        gtk_container_add(cast(raw(selectorScroller)), selectorBox)

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
    }

    /// Styles the zoom and builds the board.
    func start() {
        if let screen = gdk_screen_get_default() {
            gtk_style_context_add_provider_for_screen(screen, OpaquePointer(zoomStyle), UInt32(GTK_STYLE_PROVIDER_PRIORITY_APPLICATION) + 1)
        }
        styleZoom()
        showBoard()
    }

    /// From now on, when the board's view changes size its pedals' zoom is checked once the size settles.
    func followViewSize() {
        onSignalWithPointer(raw(scroller), "size-allocate") { [unowned self] in
            if zoomCheck != 0 { g_source_remove(zoomCheck) }
            zoomCheck = addTimeout(milliseconds: 120) { [weak self] in
                self?.zoomCheck = 0
                self?.fitZoom()
                return false
            }
        }
    }

    /// True from a change of the view's size until its zoom was checked (a new zoom rebuilds the pedals).
    var isZoomPending: Bool { zoomCheck != 0 }

    /// The window is being destroyed.
    func stop() {
        if zoomCheck != 0 { g_source_remove(zoomCheck); zoomCheck = 0 }
        if let screen = gdk_screen_get_default() { gtk_style_context_remove_provider_for_screen(screen, OpaquePointer(zoomStyle)) }
        g_object_unref(raw(zoomStyle))
    }

    /// Rebuilds the pedals when the chain's board changed.
    func follow() {
        if engine.chain.board != shownBoard { showBoard() }
    }

    /// Scrolls the board so the pedal is in view.
    func scrollIntoView(_ kind: PedalKind) {
        guard let pedal = pedals.first(where: { $0.kind == kind }) else { return }
        var x: Int32 = 0, y: Int32 = 0
        gtk_widget_translate_coordinates(pedal.widget, pedalBox, 0, 0, &x, &y)
        if let across = gtk_scrolled_window_get_hadjustment(cast(raw(scroller))) {
            gtk_adjustment_clamp_page(across, max(0, Double(x) - 12), Double(x) + Double(gtk_widget_get_allocated_width(pedal.widget)) + 12)
        }
        if let down = gtk_scrolled_window_get_vadjustment(cast(raw(scroller))) {
            gtk_adjustment_clamp_page(down, max(0, Double(y) - 12), Double(y) + Double(gtk_widget_get_allocated_height(pedal.widget)) + 12)
        }
    }

    /// The arrangement for the board's view as it is now (one row at zoom 1 before it has a size).
    private func arrangement(for board: [PedalKind]) -> BoardZoom.Arrangement {
        guard gtk_widget_get_mapped(scroller) != 0 else { return BoardZoom.Arrangement(zoom: zoom, rows: [0..<board.count], fits: true) }
        return BoardZoom.arrange(view: (Int(gtk_widget_get_allocated_width(scroller)), Int(gtk_widget_get_allocated_height(scroller))),
                                 pedalWidths: board.map { PedalLayout.of($0).width }, pedalHeight: PedalLayout.height,
                                 spacing: Self.pedalSpacing, border: Self.boardBorder)
    }

    /// The zoom for the board's view as it is now; a new one rebuilds the pedals at it, keeping
    /// the scroll position's share of the board.
    private func fitZoom() {
        guard gtk_widget_get_mapped(scroller) != 0 else { return }
        let fit = arrangement(for: shownBoard)
        guard fit.zoom != zoom || fit.rows != rows else { return }
        let adjustment = gtk_scrolled_window_get_hadjustment(cast(raw(scroller)))
        let share = adjustment.map { a in
            let range = gtk_adjustment_get_upper(a) - gtk_adjustment_get_page_size(a)
            return range > 0 ? gtk_adjustment_get_value(a) / range : 0
        } ?? 0
        zoom = fit.zoom
        styleZoom()
        showBoard(rows: fit.rows)
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

    /// Builds a pedal and a selector for each pedal on the chain's board, in its order, in
    /// `rows` (a new board: the rows its arrangement gives at the zoom it has now; a new zoom
    /// comes at the next check of the view's size).
    private func showBoard(rows newRows: [Range<Int>]? = nil) {
        for pedal in pedals { gtk_widget_destroy(pedal.widget) }
        for (_, button) in selectors { gtk_widget_destroy(button) }
        for row in rowBoxes { gtk_widget_destroy(row) }
        pedals = []
        selectors = []
        rowBoxes = []
        shownBoard = engine.chain.board
        rows = newRows ?? {
            let fit = arrangement(for: shownBoard)
            return fit.zoom == zoom ? fit.rows : [0..<shownBoard.count]
        }()
        for _ in rows {
            let row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, Int32(Self.pedalSpacing))!
            gtk_widget_set_halign(row, GTK_ALIGN_CENTER)
            gtk_box_pack_start(cast(raw(pedalBox)), row, 0, 0, 0)
            rowBoxes.append(row)
        }
        let onReadout = onReadout
        for kind in shownBoard {
            let pedal = PedalView(kind: kind, store: controls.parameters, looperControl: controls.looper, zoom: zoom, onReadout: onReadout)
            pedal.looper?.sampleRate = { [weak engine] in engine?.chain.sampleRate ?? 48_000 }
            pedal.isLocked = { [weak self] in self?.isLocked(kind) ?? false }
            pedal.onLocked = { [weak self] in self?.onLocked?(kind) }
            pedal.onMoved = { [weak self] dx, dy in self?.move(kind, by: (dx, dy)) }
            pedal.onRemove = { [weak self] in self?.rearrange { $0.removeAll { $0 == kind } } }
            pedal.onSelected = { [weak self] in self?.select(kind) }
            for knob in pedal.knobs { learn.attach(knob, .parameter(knob.parameter.id), knob.spec.name) }
            for (parameter, control, _) in pedal.choiceControls {
                learn.attach(control, .parameter(parameter.id), parameter.spec.name)
            }
            if let eq = pedal.equalizer {
                for (band, slider) in zip(Parameter.eqBands, eq.sliders) { learn.attach(slider, .parameter(band.id), band.spec.name) }
            }
            if let looper = pedal.looper {
                learn.attach(looper.footswitch, .looperTap, "the Looper's footswitch", longPress: false)
            } else {
                learn.attach(pedal.footswitch, .pedal(kind.id), "\(kind.name) on/off")
            }
            if let loader = engine.chain.effect(kind) as? FileLoadingEffect {
                let isModel = loader is NeuralAmp
                pedal.addFileButton(title: isModel ? "Load model…" : "Load \(loader.fileDescription) file…") { [weak self, weak pedal] in
                    self?.loadFile(into: loader, shownOn: pedal)
                }
                pedal.currentFile = { [weak loader] in loader?.file }
                pedal.fileLabel = { [weak loader] in loader?.label(forFile: $0) ?? ($0 as NSString).lastPathComponent }
                pedal.fileProblem = { [weak loader] in loader?.fileProblem }
                pedal.fileDetail = { [weak loader] in loader?.fileDetail }
                if isModel {
                    // The models loaded before, to pick again from the pedal's menu.
                    pedal.recentFiles = { RecentFiles("models").paths }
                    pedal.onRecentFile = { [weak self, weak pedal] path in self?.load(path, into: loader, shownOn: pedal) }
                }
                pedal.showFile(loader.file)
            }
            pedals.append(pedal)
            let row = rows.firstIndex { $0.contains(pedals.count - 1) } ?? rows.count - 1
            gtk_box_pack_start(cast(raw(rowBoxes[row])), pedal.widget, 0, 0, 0)
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

    /// Asks for a file for a pedal that loads one (the cabinet's impulse response) and loads it;
    /// a file that cannot be used is named in a message and nothing changes.
    /// A model's chooser starts in the models folder (`stompbox models` lists it).
    private func loadFile(into loader: FileLoadingEffect, shownOn pedal: PedalView?) {
        let folder = loader is NeuralAmp ? UserDirectories().models.path : nil
        guard let path = Dialogs.chooseFile(parent: window, title: loader.fileChooserTitle, save: false,
                                            filter: loader.fileTypes, accept: "_Load", folder: folder) else { return }
        load(path, into: loader, shownOn: pedal)
    }

    private func load(_ path: String, into loader: FileLoadingEffect, shownOn pedal: PedalView?) {
        do {
            try loader.load(file: path)
            if loader is NeuralAmp { RecentFiles("models").add(path) }
            pedal?.showFile(path)
        } catch {
            _ = Dialogs.message(parent: window, kind: .error, title: "Cannot load the file", text: "\(error)")
        }
    }

    /// A new board for the chain (the view follows it at the window's next poll).
    func rearrange(_ change: (inout [PedalKind]) -> Void) {
        var board = engine.chain.board
        change(&board)
        try? engine.chain.setBoard(board)
    }

    /// Drops a dragged pedal where its middle now is: in the row nearest it, before the first
    /// pedal of that row whose middle lies to the right of it (after the row's last, which on
    /// the first row is before the second row's first).
    private func move(_ kind: PedalKind, by delta: (x: Double, y: Double)) {
        guard let moved = pedals.firstIndex(where: { $0.kind == kind }) else { return }
        func middle(_ p: PedalView) -> (x: Double, y: Double) {
            var x: Int32 = 0, y: Int32 = 0
            gtk_widget_translate_coordinates(p.widget, pedalBox, 0, 0, &x, &y)
            return (Double(x) + Double(gtk_widget_get_allocated_width(p.widget)) / 2,
                    Double(y) + Double(gtk_widget_get_allocated_height(p.widget)) / 2)
        }
        let from = middle(pedals[moved])
        let target = (x: from.x + delta.x, y: from.y + delta.y)
        let rowMiddles = rows.map { row in row.isEmpty ? 0 : middle(pedals[row.lowerBound]).y }
        let row = rowMiddles.indices.min { abs(rowMiddles[$0] - target.y) < abs(rowMiddles[$1] - target.y) } ?? 0
        let inRow = rows[row].filter { $0 != moved }
        let index = inRow.first { middle(pedals[$0]).x > target.x } ?? (inRow.last.map { $0 + 1 } ?? rows[row].lowerBound)
        rearrange { board in
            board.remove(at: moved)
            board.insert(kind, at: index > moved ? index - 1 : index)
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
        learn.attach(button, .pedal(kind.id), "\(kind.name) on/off")
        return button
    }

    /// Redraws the pedals after the store's locks changed (padlocks appear or go).
    func redrawLocks() {
        for pedal in pedals { gtk_widget_queue_draw(pedal.face); gtk_widget_queue_draw(pedal.footswitch) }
    }

    /// The pedals' knobs, sliders and footswitches follow the parameter store.
    func syncPedals() {
        for pedal in pedals { pedal.sync() }
    }

    /// The selectors follow the pedals' on/off parameters.
    func syncSelectors() {
        updatingSelectors = true
        for (kind, button) in selectors {
            let on = controls.parameters.isOn(kind.enabledParameter)
            if (gtk_toggle_button_get_active(cast(raw(button))) != 0) != on {
                gtk_toggle_button_set_active(cast(raw(button)), on ? 1 : 0)
            }
        }
        updatingSelectors = false
    }

    /// The Looper's display moves with its loop.
    func updateLoopers() {
        for pedal in pedals { pedal.looper?.update() }
    }

    /// True while a pedal or strip button made since the last layout pass (a new board, a new
    /// zoom) has not been placed yet: GTK gives a widget the allocation (-1, -1) until then.
    var placingWidgets: Bool {
        let widgets = pedals.map(\.widget) + selectors.map(\.1)
        return widgets.contains { widget in
            guard gtk_widget_get_mapped(widget) != 0 else { return false }
            var allocation = GtkAllocation()
            gtk_widget_get_allocation(widget, &allocation)
            return allocation.x == -1 && allocation.y == -1
        }
    }
}
