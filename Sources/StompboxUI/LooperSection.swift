import CGtk
import Foundation
import StompboxDSP

/// The looper's footswitch (tap = record → play → overdub → play …, hold 0.8 s = stop and
/// clear), its Undo button, and the loop position bar drawn on the pedal.
final class LooperSection {
    static let holdMilliseconds: UInt32 = 800

    let control: LooperControl
    let store: ParameterStore
    let footswitch: UnsafeMutablePointer<GtkWidget>
    let undoButton: UnsafeMutablePointer<GtkWidget>
    /// The display bar printed on the artwork (the pedal's coordinates).
    private let bar: PedalFace.Rect
    private let face: UnsafeMutablePointer<GtkWidget>
    private let width: Int
    private let zoom: Double
    private var gestures: [OpaquePointer] = []
    private var holdTimer: UInt32 = 0
    private var pressed = false
    private var shown = (state: LooperState.stopped, position: 0, length: 0)
    /// Sample rate of the running chain, for the seconds shown under the bar.
    var sampleRate: () -> Double = { 48_000 }
    /// While the store keeps the Looper locked a tap calls `onLocked` (the store dialog) instead.
    var isLocked: () -> Bool = { false }
    var onLocked: (() -> Void)?
    private var lockedPress = false

    /// `width` and what `drawBar` draws are in the pedal's coordinates; the footswitch and Undo
    /// are sized at `zoom` times them.
    init(control: LooperControl, store: ParameterStore, face: UnsafeMutablePointer<GtkWidget>, width: Int, zoom: Double = 1,
         bar: PedalFace.Rect) {
        self.bar = bar
        self.control = control
        self.store = store
        self.face = face
        self.width = width
        self.zoom = zoom
        footswitch = gtk_drawing_area_new()
        gtk_widget_set_size_request(footswitch, zoomed(PedalFace.footswitchSize, zoom), zoomed(PedalFace.footswitchSize, zoom))
        gtk_widget_set_can_focus(footswitch, 1)
        gtk_widget_add_events(footswitch, Int32(bitPattern: GDK_BUTTON_PRESS_MASK.rawValue | GDK_BUTTON_RELEASE_MASK.rawValue
            | GDK_TOUCH_MASK.rawValue | GDK_KEY_PRESS_MASK.rawValue | GDK_FOCUS_CHANGE_MASK.rawValue))
        setAccessible(footswitch, name: "Looper Footswitch",
                      description: "stopped. Tap: record, play, overdub. Hold or Delete: stop and clear.",
                      role: ATK_ROLE_PUSH_BUTTON)
        gtk_widget_set_tooltip_text(footswitch, "Tap: record → play → overdub → play\nHold 0.8 s: stop and clear")

        undoButton = gtk_button_new_with_label("UNDO")
        addClass(undoButton, "pedal-button")
        gtk_widget_set_size_request(undoButton, zoomed(PedalFace.undo.width, zoom), zoomed(PedalFace.undo.height, zoom))
        gtk_widget_set_sensitive(undoButton, control.canUndo ? 1 : 0)
        setAccessible(undoButton, name: "Looper Undo")
        gtk_widget_set_tooltip_text(undoButton, "Remove the last overdub")
        onSignal(raw(undoButton), "clicked") { [unowned self] in control.send(.undo) }

        let press = gtk_gesture_multi_press_new(footswitch)!
        gestures = [press]
        onPress(raw(press), "pressed") { [unowned self] _, _, _ in
            if isLocked() {
                // The store dialog opens when this press is over: a modal dialog taking the
                // pointer mid-press leaves the gesture waiting for a release that never comes.
                lockedPress = true
                return
            }
            gtk_widget_grab_focus(footswitch)
            pressed = true
            gtk_widget_queue_draw(footswitch)
            tap()
            // Acting on press keeps the loop in time; holding on turns the press into "clear".
            cancelHold()
            holdTimer = addTimeout(milliseconds: LooperSection.holdMilliseconds) { [weak self] in
                guard let self else { return false }
                holdTimer = 0
                control.send(.hold)
                return false
            }
        }
        onPress(raw(press), "released") { [unowned self] _, _, _ in release() }
        onSignalWithPointer(raw(press), "end") { [unowned self] in release() }
        onEvent(raw(footswitch), "key-press-event") { [unowned self] event in
            let e: UnsafeMutablePointer<GdkEventKey> = cast(event)
            switch Int32(e.pointee.keyval) {
            case GDK_KEY_space, GDK_KEY_Return, GDK_KEY_KP_Enter: tap(); return true
            case GDK_KEY_Delete, GDK_KEY_BackSpace: if !isLocked() { control.send(.hold) }; return true
            default: return false
            }
        }
        onEvent(raw(footswitch), "draw") { [unowned self] cr in drawFootswitch(OpaquePointer(cr!)); return true }
        onEvent(raw(footswitch), "focus-in-event") { [unowned self] _ in gtk_widget_queue_draw(footswitch); return false }
        onEvent(raw(footswitch), "focus-out-event") { [unowned self] _ in gtk_widget_queue_draw(footswitch); return false }
        onSignal(raw(footswitch), "destroy") { [unowned self] in
            cancelHold()
            for g in gestures { g_object_unref(raw(g)) }
            gestures = []
        }
    }

    private func tap() {
        if isLocked() { onLocked?(); return }
        // The looper has to be in the chain to be heard; a tap switches it in.
        if !store.isOn(.looperEnabled) { store.set(.looperEnabled, 1) }
        control.send(.tap)
    }

    private func release() {
        if lockedPress {
            lockedPress = false
            onLocked?()
        }
        pressed = false
        cancelHold()
        gtk_widget_queue_draw(footswitch)
    }

    private func cancelHold() {
        if holdTimer != 0 { g_source_remove(holdTimer); holdTimer = 0 }
    }

    /// Called about 30 times a second: redraws when the looper's state or position moved.
    func update() {
        let undo = control.canUndo
        if (gtk_widget_get_sensitive(undoButton) != 0) != undo { gtk_widget_set_sensitive(undoButton, undo ? 1 : 0) }
        let now = (state: control.state, position: control.position, length: control.length)
        guard now != shown else { return }
        if now.state != shown.state, let accessible = gtk_widget_get_accessible(footswitch) {
            atk_object_set_description(accessible, "\(now.state.name). Tap: record, play, overdub. Hold or Delete: stop and clear.")
        }
        shown = now
        gtk_widget_queue_draw(face)
    }

    var ledColour: (Double, Double, Double)? {
        switch control.state {
        case .recording, .overdubbing: (1.0, 0.16, 0.08)
        case .playing: (0.2, 1.0, 0.3)
        case .stopped: nil
        }
    }

    func drawBar(_ cr: OpaquePointer) {
        // Inside the bar printed on the artwork.
        let x = Double(bar.x + 2), y = Double(bar.y + 2), w = Double(bar.width - 4), h = Double(bar.height - 4)
        let state = control.state, length = control.length, position = control.position
        var fraction = 0.0
        switch state {
        case .recording: fraction = 1
        case .playing, .overdubbing: fraction = length > 0 ? Double(position) / Double(length) : 0
        case .stopped: fraction = 0
        }
        let (r, g, b) = ledColour ?? (0.6, 0.6, 0.6)
        cairo_set_source_rgba(cr, r, g, b, state == .recording ? 0.55 : 0.85)
        roundedRectangle(cr, x, y, max(h, w * min(1, fraction)), h, 3)
        if fraction > 0 { cairo_fill(cr) } else { cairo_new_path(cr) }

        // Locked, the banner across the bar says so; a clock peeking out under it would not.
        guard !isLocked() else { return }
        let seconds = Double(length) / max(1, sampleRate())
        let clock = state == .stopped && length == 0 ? "EMPTY" :
            "\(state.name.uppercased())  \(String(format: "%.1f", Double(position) / max(1, sampleRate()))) / \(String(format: "%.1f", seconds)) s"
        cairo_select_font_face(cr, "DejaVu Sans Mono", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD)
        cairo_set_font_size(cr, 9)
        var extents = cairo_text_extents_t()
        cairo_text_extents(cr, clock, &extents)
        cairo_set_source_rgba(cr, 1, 0.94, 0.92, 0.9)
        cairo_move_to(cr, Double(width) / 2 - extents.width / 2, y + h + 14)
        cairo_show_text(cr, clock)
    }

    private func drawFootswitch(_ cr: OpaquePointer) {
        cairo_scale(cr, zoom, zoom)
        let c = 28.0
        if pressed {
            cairo_set_source_rgba(cr, 0, 0, 0, 0.28)
            cairo_arc(cr, c, c, 21, 0, 2 * .pi)
            cairo_fill(cr)
        }
        if gtk_widget_has_focus(footswitch) != 0 {
            cairo_set_source_rgba(cr, 1.0, 0.85, 0.3, 0.9)
            cairo_set_line_width(cr, 2)
            cairo_arc(cr, c, c, 26, 0, 2 * .pi)
            cairo_stroke(cr)
        }
    }
}
