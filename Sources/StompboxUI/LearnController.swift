import CGtk
import CStompboxShim
import Foundation
import StompboxAudio
import StompboxCore
import StompboxDSP

/// MIDI in and learning: acts on the MIDI that arrives (JACK's `stompbox:midi_in` and the ALSA
/// sequencer's `Stompbox:midi_in`), and binds the next MIDI message or key to a control's action
/// when asked through its menu (right-click, or a finger held still on it).
final class LearnController {
    /// The footswitch bindings (`controls.json`).
    let footControls: FootControlsFile
    /// Notices for the bar under the strip (the preset panel's info bar).
    var onNotice: ((Dialogs.Kind, String) -> Void)?
    /// Carries out a bound action (the window's `perform`).
    var perform: ((FootAction, FootInput, String) -> Void)?
    private let engine: LiveEngine
    /// The window the menus belong to.
    private let window: UnsafeMutablePointer<GtkWidget>
    private var midi: MIDIInputs?
    /// MIDI learn: the action the next MIDI message will be bound to, and what to call it.
    private var learning: (action: FootAction, label: String)?
    /// Key learn: the action the next key will be bound to.
    private var learningKey: (action: FootAction, label: String)?
    private var lastMIDI: String?
    private var learnMenu: UnsafeMutablePointer<GtkWidget>?

    init(engine: LiveEngine, window: UnsafeMutablePointer<GtkWidget>, footControls: FootControlsFile) {
        self.engine = engine
        self.window = window
        self.footControls = footControls
    }

    /// Opens the MIDI inputs.
    func openMIDI() { midi = MIDIInputs(engine: engine) }

    func stop() { midi?.stop() }

    /// A key while learning: Escape cancels, any other key (but a modifier alone) is bound.
    /// True when the key was taken.
    func handleKey(_ key: UnsafeMutablePointer<GdkEventKey>) -> Bool {
        if (learning != nil || learningKey != nil) && Int32(key.pointee.keyval) == GDK_KEY_Escape {
            learning = nil
            learningKey = nil
            onNotice?(.info, "Learning cancelled.")
            return true
        }
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
        return false
    }

    /// Acts on the MIDI that arrived since the last poll (or learns the first message).
    func receiveMIDI() {
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
                perform?(action, input, "MIDI \(message.trigger)")
            }
        }
    }

    /// Right-click on a control (or a preset), or a finger held still on it for a second:
    /// "Learn MIDI…" binds the next MIDI message to `action`; "Forget MIDI" removes what is
    /// bound to it. (`longPress: false` where holding already means something: the Looper's
    /// footswitch clears the loop.)
    func attach(_ widget: UnsafeMutablePointer<GtkWidget>, _ action: FootAction, _ label: String, longPress: Bool = true) {
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
                self?.showMenu(action, label, event: nil, at: widget)
            }
            onSignal(raw(widget), "destroy") { g_object_unref(raw(hold)) }
        }
        onEvent(raw(widget), "button-press-event") { [weak self] event in
            let e: UnsafeMutablePointer<GdkEventButton> = cast(event)
            guard e.pointee.button == 3, e.pointee.type == GDK_BUTTON_PRESS, let self else { return false }
            showMenu(action, label, event: event)
            return true
        }
        onEvent(raw(widget), "popup-menu") { [weak self] _ in
            self?.showMenu(action, label, event: nil, at: widget)
            return true
        }
    }

    /// A knob: right-click, or its own long press (its drag takes the touch, so a gesture beside it would not see one).
    func attach(_ knob: Knob, _ action: FootAction, _ label: String) {
        attach(knob.widget, action, label, longPress: false)
        knob.onLongPress = { [weak self, unowned knob] in self?.showMenu(action, label, event: nil, at: knob.widget) }
    }

    private func showMenu(_ action: FootAction, _ label: String, event: UnsafeMutableRawPointer?,
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

    /// The learning part of the state file's `footControls`.
    var state: [String: Any] {
        ["learning": learning.map { $0.action.description } ?? NSNull(), "lastMIDI": lastMIDI ?? NSNull(),
         "learningKey": learningKey.map { $0.action.description } ?? NSNull(),
         "alsa": midi?.alsa.map { $0.problem ?? "\(ALSAMIDIInput.clientName):midi_in at \($0.address ?? "?"), \($0.connections) connected" } ?? "off"]
    }
}
