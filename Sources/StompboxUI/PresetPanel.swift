import CGtk
import Foundation
import StompboxCore
import StompboxDSP

/// The left-hand preset column: slots 1, 2 and 3 with their names (a tap recalls one), the
/// selected slot highlighted and marked "modified" when the live setup differs from it, and
/// Save / Rename / Export / Import. Presets are `PresetLibrary` (`presets.json`, written
/// atomically); recall goes through the store's `FeatureGate`, so a preset with the locked
/// Looper on loads with it off and says so.
///
/// Recall sets the `ParameterStore`; the window follows its change count (knobs, sliders,
/// LEDs jump) and the chain glides every value over its ~20 ms smoothing, so nothing clicks.
///
/// Errors and notices — a damaged presets.json moved aside at start, a failed save, a file
/// that cannot be imported — show in plain words in an info bar under the selector strip.
final class PresetPanel {
    private(set) var library: PresetLibrary?
    private unowned let window: PedalboardWindow
    private let storeFront: StoreFront
    private let parameters: ParameterStore
    private let chain: Chain
    private var slotButtons: [UnsafeMutablePointer<GtkWidget>] = []
    private var slotNames: [UnsafeMutablePointer<GtkWidget>] = []
    private var slotMarks: [UnsafeMutablePointer<GtkWidget>] = []
    private var actionButtons: [String: UnsafeMutablePointer<GtkWidget>] = [:]
    private let infoBar: UnsafeMutablePointer<GtkWidget>
    private let infoLabel: UnsafeMutablePointer<GtkWidget>
    private var infoText = ""
    private var tick: UInt32 = 0
    private var seenChanges: UInt64 = .max
    private var seenBoard: [PedalKind] = []
    private(set) var modified = false
    private struct Shown: Equatable { var selected: Int; var modified: Bool; var names: [String] }
    private var lastShown: Shown?

    init(window: PedalboardWindow, storeFront: StoreFront) {
        self.window = window
        self.storeFront = storeFront
        parameters = window.controls.parameters
        chain = window.engine.chain
        infoBar = gtk_info_bar_new()
        infoLabel = gtk_label_new("")
        var openProblem: String?
        do { library = try PresetLibrary() } catch { openProblem = Messages.sentence(error) }

        // Info bar between the strip and the board (the window's root box, second row).
        addClass(infoBar, "notice-bar")
        Dialogs.wrap(infoLabel, chars: 140)
        gtk_label_set_selectable(cast(raw(infoLabel)), 1)
        gtk_widget_set_can_focus(infoLabel, 0)
        let area = gtk_info_bar_get_content_area(cast(raw(infoBar)))!
        gtk_box_pack_start(cast(raw(area)), infoLabel, 1, 1, 0)
        let dismiss = gtk_button_new_with_label("Dismiss")!
        addClass(dismiss, "notice-dismiss")
        gtk_widget_set_valign(dismiss, GTK_ALIGN_CENTER)
        setAccessible(dismiss, name: "Dismiss notice")
        gtk_box_pack_end(cast(raw(area)), dismiss, 0, 0, 0)
        setAccessible(infoBar, name: "Notice", role: ATK_ROLE_ALERT)
        onSignal(raw(dismiss), "clicked") { [unowned self] in hideInfo() }
        if let root = gtk_bin_get_child(cast(raw(window.window))) {
            gtk_box_pack_start(cast(raw(root)), infoBar, 0, 0, 0)
            gtk_box_reorder_child(cast(raw(root)), infoBar, 1)
        }
        gtk_widget_set_no_show_all(infoBar, 1)

        buildColumn()
        if let openProblem {
            showInfo(.error, "The presets cannot be opened: \(openProblem) The preset buttons are off until this is fixed.")
        }
        var notices = library?.takeNotices().map { "Your saved presets could not be used: \(Messages.sentence($0))" } ?? []
        notices += storeFront.startupNotices.map { Messages.sentence($0) }
        // Stompbox opens playing the selected preset, as a pedalboard switched on again would.
        if let library {
            notices += play(library[library.selected]).map { Messages.sentence($0) }
        }
        if !notices.isEmpty { showInfo(.warning, notices.joined(separator: "\n")) }
        storeFront.inform = { [unowned self] kind, text in showInfo(kind, text) }
        storeFront.onChange.append { [unowned self] in refresh(force: true) }

        refresh(force: true)
        tick = addTimeout(milliseconds: 100) { [weak self] in
            self?.refresh(force: false)
            return true
        }
        onSignal(raw(window.presetColumn), "destroy") { [unowned self] in
            if tick != 0 { g_source_remove(tick); tick = 0 }
        }
        gtk_widget_show_all(window.presetColumn)
    }

    private func buildColumn() {
        let column = window.presetColumn
        gtk_box_set_spacing(cast(raw(column)), 6)
        for slot in 0..<PresetBank.slotCount {
            let button = gtk_button_new()!
            addClass(button, "preset-slot")
            let box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8)!
            let number = gtk_label_new("\(slot + 1)")!
            addClass(number, "slot-number")
            gtk_widget_set_valign(number, GTK_ALIGN_CENTER)
            gtk_box_pack_start(cast(raw(box)), number, 0, 0, 0)
            let texts = gtk_box_new(GTK_ORIENTATION_VERTICAL, 1)!
            let name = gtk_label_new("")!
            addClass(name, "slot-name")
            gtk_label_set_xalign(cast(raw(name)), 0)
            gtk_label_set_ellipsize(cast(raw(name)), PANGO_ELLIPSIZE_END)
            gtk_label_set_max_width_chars(cast(raw(name)), 14)
            gtk_box_pack_start(cast(raw(texts)), name, 0, 0, 0)
            let mark = gtk_label_new("")!
            addClass(mark, "slot-mark")
            gtk_label_set_xalign(cast(raw(mark)), 0)
            gtk_box_pack_start(cast(raw(texts)), mark, 0, 0, 0)
            gtk_box_pack_start(cast(raw(box)), texts, 1, 1, 0)
            gtk_container_add(cast(raw(button)), box)
            gtk_widget_set_tooltip_text(button, "Tap to play preset \(slot + 1)")
            onSignal(raw(button), "clicked") { [unowned self] in recall(slot) }
            window.attachLearnMenu(button, .preset(slot + 1), "preset \(slot + 1)")
            slotButtons.append(button)
            slotNames.append(name)
            slotMarks.append(mark)
            gtk_box_pack_start(cast(raw(column)), button, 0, 0, 0)
        }
        let separator = gtk_separator_new(GTK_ORIENTATION_HORIZONTAL)!
        addClass(separator, "preset-separator")
        gtk_box_pack_start(cast(raw(column)), separator, 0, 0, 6)

        let actions: [(key: String, label: String, tip: String, action: () -> Void)] = [
            ("save", "Save", "Store the current setup in the selected slot", { [unowned self] in saveSelected() }),
            ("rename", "Rename…", "Rename the selected slot", { [unowned self] in renameSelected() }),
            ("export", "Export…", "Write the selected slot to a preset file", { [unowned self] in exportSelected() }),
            ("import", "Import…", "Read a preset file into the selected slot", { [unowned self] in importIntoSelected() }),
        ]
        for item in actions {
            let button = gtk_button_new_with_label(item.label)!
            addClass(button, "preset-action")
            if item.key == "save" { addClass(button, "preset-save") }
            gtk_widget_set_tooltip_text(button, item.tip)
            let action = item.action
            onSignal(raw(button), "clicked") { action() }
            actionButtons[item.key] = button
            gtk_box_pack_start(cast(raw(column)), button, 0, 0, 0)
        }
        if library == nil {
            for button in slotButtons + Array(actionButtons.values) { gtk_widget_set_sensitive(button, 0) }
        }
    }

    // MARK: State

    /// Names, highlight, "modified" mark, accessible names; `force` after the library changed.
    private func refresh(force: Bool) {
        let changes = parameters.changeCount
        guard force || changes != seenChanges || chain.board != seenBoard else { return }
        seenChanges = changes
        seenBoard = chain.board
        guard let library else { return }
        let selected = library.selected
        modified = !matchesPlayable(selected)
        // Touch the widgets only when something shown changed: every label change re-lays out
        // the window, which must not happen on each step of a knob being turned.
        let shown = Shown(selected: selected, modified: modified, names: library.slots.map(\.name))
        guard force || shown != lastShown else { return }
        lastShown = shown
        let saveLabel = modified ? "Save" : "Saved"
        if let save = actionButtons["save"] {
            gtk_button_set_label(cast(raw(save)), saveLabel)
            setAccessible(save, name: "Save preset \(selected + 1)")
        }
        for (slot, button) in slotButtons.enumerated() {
            let name = library[slot].name
            slotNames[slot].setText(name)
            let isSelected = slot == selected
            if isSelected { addClass(button, "selected") } else { removeClass(button, "selected") }
            let mark = isSelected ? (modified ? "● modified" : "playing") : ""
            slotMarks[slot].setText(mark)
            if isSelected && modified { addClass(button, "modified") } else { removeClass(button, "modified") }
            setAccessible(button, name: "Preset \(slot + 1): \(name)",
                          description: isSelected ? (modified ? "selected, modified" : "selected") : "tap to play")
        }
    }

    /// True when the live setup is what `slot` plays (a locked pedal the preset switches on
    /// counts as off, since that is how it was recalled).
    private func matchesPlayable(_ slot: Int) -> Bool {
        guard let library else { return false }
        return storeFront.gate.admit(library[slot]).preset.matches(parameters, board: chain.board, states: chain.pedalStates)
    }

    var state: [String: Any] {
        guard let library else { return ["problem": infoText] }
        return [
            "selected": library.selected,
            "names": library.slots.map(\.name),
            "modified": modified,
        ]
    }

    var layout: [String: Any] {
        var result: [String: [Int]] = [:]
        for (slot, button) in slotButtons.enumerated() { result["slot\(slot + 1)"] = rootCentre(button) }
        for (key, button) in actionButtons { result[key] = rootCentre(button) }
        return ["presets": result]
    }

    var notice: String { infoText }

    // MARK: Actions

    /// A footswitch's preset action: play 1-3, or step to the next or previous slot (round).
    func perform(_ action: FootAction) {
        guard let library else { return }
        let count = PresetBank.slotCount
        switch action {
        case .preset(let n): recall(n - 1)
        case .nextPreset: recall((library.selected + 1) % count)
        case .previousPreset: recall((library.selected + count - 1) % count)
        default: break
        }
    }

    private func recall(_ slot: Int) {
        guard let library else { return }
        var problem: String?
        do { try library.recall(slot) } catch { problem = Messages.sentence(error) }
        let notices = play(library[slot])
        refresh(force: true)
        if let problem {
            showInfo(.error, "Preset \(slot + 1) is playing, but it could not be remembered as the selected one: \(problem)")
        } else if !notices.isEmpty {
            showInfo(.warning, notices.map { Messages.sentence($0) }.joined(separator: "\n"))
        } else if infoIsLockNotice {
            hideInfo()
        }
    }

    private var infoIsLockNotice = false

    /// Plays a preset: its board (the window follows the chain's board) and its values,
    /// through the store's gate.
    /// Its plugin pedals are looked up first; a missing one stays on the board, bypassed, and is said.
    private func play(_ preset: Preset) -> [LockedEffectNotice] {
        let (board, missing) = PedalKind.resolvingPlugins(preset.board)
        try? chain.setBoard(board)
        var problems = missing
        let notices = storeFront.gate.apply(preset, to: parameters)
        // A cabinet's own impulse response file and the Amp Model's model are loaded (a file gone is
        // said; the rest plays).
        do { problems += try chain.restore(states: preset.states) } catch { problems.append(error.description) }
        if !problems.isEmpty { showInfo(.warning, problems.map { Messages.sentence($0) }.joined(separator: "\n")) }
        return notices
    }

    private func saveSelected() {
        guard let library else { return }
        let slot = library.selected
        // A clean slot needs no question: saving changes nothing that is not already there.
        if modified {
            let answer = Dialogs.message(
                parent: window.window, kind: .question, title: "Save Preset",
                text: "Replace preset \(slot + 1), “\(library[slot].name)”, with the current setup?",
                detail: "The settings stored in this slot now are overwritten. Export it first to keep a copy.",
                buttons: [("Cancel", GTK_RESPONSE_CANCEL, nil), ("Overwrite", GTK_RESPONSE_ACCEPT, "destructive-action")])
            guard answer == GTK_RESPONSE_ACCEPT else { return }
        }
        do {
            try library.save(from: parameters, board: chain.board, states: chain.pedalStates, into: slot)
        } catch {
            fail("Preset \(slot + 1) was not saved", error)
        }
        refresh(force: true)
    }

    private func renameSelected() {
        guard let library else { return }
        let slot = library.selected
        _ = Dialogs.entry(parent: window.window, title: "Rename Preset", text: "Rename preset \(slot + 1)",
                          detail: "Up to 40 characters.", initial: library[slot].name, accept: "Rename", width: 30) { name in
            do {
                try library.rename(slot, to: name)
                return nil
            } catch {
                return Messages.sentence("\(error)")
            }
        }
        refresh(force: true)
    }

    private func exportSelected() {
        guard let library else { return }
        let slot = library.selected
        let suggested = library[slot].name.replacingOccurrences(of: "/", with: "-") + ".json"
        guard let path = Dialogs.chooseFile(parent: window.window, title: "Export Preset \(slot + 1)", save: true,
                                            suggestedName: suggested) else { return }
        do {
            // The file chooser has already asked before replacing an existing file.
            try library.export(slot, to: URL(fileURLWithPath: path), overwrite: true)
            showInfo(.info, "Preset \(slot + 1), “\(library[slot].name)”, was exported to \(path).")
        } catch {
            fail("Preset \(slot + 1) was not exported", error)
        }
    }

    private func importIntoSelected() {
        guard let library else { return }
        let slot = library.selected
        guard let path = Dialogs.chooseFile(parent: window.window, title: "Import Preset into Slot \(slot + 1)", save: false) else { return }
        let url = URL(fileURLWithPath: path)
        // Read it first: a bad file is reported before anything is asked or replaced.
        do { _ = try PresetLibrary.readPreset(url) } catch {
            fail("Nothing was imported", error)
            return
        }
        let answer = Dialogs.message(
            parent: window.window, kind: .question, title: "Import Preset",
            text: "Replace preset \(slot + 1), “\(library[slot].name)”, with \(url.lastPathComponent)?",
            detail: "The settings stored in this slot now are overwritten.",
            buttons: [("Cancel", GTK_RESPONSE_CANCEL, nil), ("Import", GTK_RESPONSE_ACCEPT, "destructive-action")])
        guard answer == GTK_RESPONSE_ACCEPT else { return }
        do {
            let preset = try library.importPreset(from: url, into: slot)
            let notices = play(preset)
            refresh(force: true)
            let imported = "“\(preset.name)” was imported into preset \(slot + 1) and is playing."
            showInfo(notices.isEmpty ? .info : .warning, ([imported] + notices.map { Messages.sentence($0) }).joined(separator: "\n"))
        } catch {
            fail("Nothing was imported", error)
        }
    }

    private func fail(_ what: String, _ error: Error) {
        let text = "\(what): \(Messages.sentence("\(error)"))"
        showInfo(.error, text)
    }

    // MARK: Info bar

    func showInfo(_ kind: Dialogs.Kind, _ message: String) {
        // Messages.sentence ends a clause with a period, also after "More… → Enter licence key…".
        let text = message.replacingOccurrences(of: "….", with: "…")
        infoText = text
        infoIsLockNotice = text.contains("is locked")
        let type: GtkMessageType = switch kind {
        case .info: GTK_MESSAGE_INFO
        case .warning: GTK_MESSAGE_WARNING
        case .error: GTK_MESSAGE_ERROR
        case .question, .key: GTK_MESSAGE_QUESTION
        }
        gtk_info_bar_set_message_type(cast(raw(infoBar)), type)
        infoLabel.setText(text)
        if let accessible = gtk_widget_get_accessible(infoBar) { atk_object_set_description(accessible, text) }
        gtk_widget_set_no_show_all(infoBar, 0)
        gtk_widget_show_all(infoBar)
    }

    private func hideInfo() {
        infoText = ""
        infoIsLockNotice = false
        gtk_widget_hide(infoBar)
    }
}
