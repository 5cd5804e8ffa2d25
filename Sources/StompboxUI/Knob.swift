import CGtk
import CStompboxShim
import Foundation
import StompboxDSP

/// A rotary knob for one parameter, drawn with cairo so it turns.
///
/// Input: press and move around the knob (the pointer's angle drives it) or drag up/down; the
/// scroll wheel steps; Shift or Ctrl make any of these fine; double-click resets to the table's
/// default; a two-finger rotate turns it on a touchscreen; arrow keys, Page Up/Down, Home/End
/// and Delete (default) when focused. 270° sweep.
///
/// Accessibility: role "dial", name = `ParameterSpec.name` ("Delay Time"), and AtkValue: the
/// range, the current value with its spoken text ("420 milliseconds"), the step of an arrow key
/// there, and setting a value (Orca's and other assistive tools' way to turn it). The written
/// value ("420 ms") is also the accessible description. Both follow every change.
final class Knob {
    static let sweep = 1.5 * Double.pi

    let parameter: Parameter
    let spec: ParameterSpec
    let store: ParameterStore
    let widget: UnsafeMutablePointer<GtkWidget>
    /// The dial's diameter in the pedal's coordinates (drawn `zoom` times as large).
    let diameter: Double
    let zoom: Double
    let ink: PedalInk
    /// Called with "Delay Time 420 ms" while the knob turns, nil when it stops.
    var onReadout: ((String?) -> Void)?
    /// A finger held still on the knob for a second (not a mouse: a mouse has a right button).
    var onLongPress: (() -> Void)?
    private var holdTimer: UInt32 = 0
    private var held = false

    /// Control travel 0…1; kept as a float so slow turns accumulate.
    private(set) var travel: Float
    private var turning = false
    private var rotating = false
    /// The travel when the two-finger rotation began.
    private var rotateStart: Float = 0
    private var lastPoint = (x: 0.0, y: 0.0)
    private var startPoint = (x: 0.0, y: 0.0)
    private var gestures: [OpaquePointer] = []
    private var readoutTimer: UInt32 = 0

    init(parameter: Parameter, store: ParameterStore, diameter: Int, width: Int, ink: PedalInk, zoom: Double = 1) {
        self.parameter = parameter
        self.spec = parameter.spec
        self.store = store
        self.diameter = Double(diameter)
        self.zoom = zoom
        self.ink = ink
        travel = spec.normalized(store.load(parameter))
        widget = stompbox_value_area_new()
        gtk_widget_set_size_request(widget, zoomed(width, zoom), zoomed(diameter + 26, zoom))
        gtk_widget_set_can_focus(widget, 1)
        gtk_widget_add_events(widget, Int32(bitPattern: GDK_BUTTON_PRESS_MASK.rawValue | GDK_BUTTON_RELEASE_MASK.rawValue
            | GDK_POINTER_MOTION_MASK.rawValue | GDK_SCROLL_MASK.rawValue | GDK_SMOOTH_SCROLL_MASK.rawValue
            | GDK_TOUCH_MASK.rawValue | GDK_KEY_PRESS_MASK.rawValue | GDK_FOCUS_CHANGE_MASK.rawValue))
        gtk_widget_set_tooltip_text(widget, spec.name)
        setAccessible(widget, name: spec.name, description: spec.format(store.load(parameter)), role: ATK_ROLE_DIAL)
        connectSignals()
        var model = StompboxValueModel(
            get: { Double(Knob.from($0).store.load(Knob.from($0).parameter)) },
            set: { context, value in Knob.from(context).setValue(Float(value)) },
            text: { context, value in strdup(Knob.from(context).spec.spokenText(Float(value))) },
            increment: { Knob.from($0).increment },
            minimum: Double(spec.minimum), maximum: Double(spec.maximum),
            context: Unmanaged.passUnretained(self).toOpaque())
        stompbox_value_area_set_model(widget, &model)
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> Knob {
        Unmanaged<Knob>.fromOpaque(context!).takeUnretainedValue()
    }

    /// What one arrow key changes the value by, where the knob is now (log knobs step by ratios).
    private var increment: Double {
        let now = store.load(parameter)
        let up = spec.value(normalized: min(travel + 0.02, 1)), down = spec.value(normalized: max(travel - 0.02, 0))
        return Double(max(up - now, now - down, 0))
    }

    private func connectSignals() {
        let w = raw(widget)
        onEvent(w, "draw") { [unowned self] cr in draw(OpaquePointer(cr!)); return true }
        onEvent(w, "scroll-event") { [unowned self] event in scroll(cast(event)) }
        onEvent(w, "key-press-event") { [unowned self] event in key(cast(event)) }
        onEvent(w, "focus-in-event") { [unowned self] _ in gtk_widget_queue_draw(widget); return false }
        onEvent(w, "focus-out-event") { [unowned self] _ in gtk_widget_queue_draw(widget); return false }
        // GTK 3 widgets do not own their gestures: the knob keeps them and frees them on destroy.
        onSignal(w, "destroy") { [unowned self] in releaseGestures() }

        let drag = gtk_gesture_drag_new(widget)!
        let press = gtk_gesture_multi_press_new(widget)!
        let rotate = gtk_gesture_rotate_new(widget)!
        gtk_gesture_group(press, drag)
        gestures = [drag, press, rotate]
        // Points are kept in the knob's unzoomed coordinates (those `centre` and `diameter` are in).
        onPoint(raw(drag), "drag-begin") { [unowned self] x, y in
            gtk_widget_grab_focus(widget)
            gtk_gesture_set_state(gestures[0], GTK_EVENT_SEQUENCE_CLAIMED)
            startPoint = (x / zoom, y / zoom); lastPoint = startPoint; setTurning(true)
            let sequence = gtk_gesture_single_get_current_sequence(gestures[0])
            // A touch (or the pointer press GTK emulates from one): its source is a touchscreen.
            if onLongPress != nil, let event = gtk_gesture_get_last_event(gestures[0], sequence),
               let device = gdk_event_get_source_device(event), gdk_device_get_source(device) == GDK_SOURCE_TOUCHSCREEN {
                cancelHold()
                holdTimer = addTimeout(milliseconds: 1000) { [weak self] in
                    guard let self else { return false }
                    holdTimer = 0
                    // Held, not turned: the knob stays where it was; the menu opens when the
                    // finger lifts (opened under it, the lift would close it again).
                    held = true
                    setTurning(false)
                    return false
                }
            }
        }
        onPoint(raw(drag), "drag-update") { [unowned self] dx, dy in
            // 8 screen pixels of movement make it a turn, not a hold; once held, it does not turn.
            if held { return }
            if holdTimer != 0 && (dx * dx + dy * dy) > 64 { cancelHold() }
            let p = (x: startPoint.x + dx / zoom, y: startPoint.y + dy / zoom)
            if !rotating { pointerMoved(to: p, fine: isFine(currentModifiers())) }
            lastPoint = p
        }
        onPoint(raw(drag), "drag-end") { [unowned self] _, _ in
            cancelHold()
            setTurning(false)
            if held {
                held = false
                onLongPress?()
            }
        }
        onPress(raw(press), "pressed") { [unowned self] count, _, _ in
            if count == 2 { setValue(spec.defaultValue) }
        }
        // Two fingers: the rotation drives the knob and the first finger's drag is ignored.
        onSignalWithPointer(raw(rotate), "begin") { [unowned self] in
            rotating = true
            rotateStart = travel
            setTurning(true)
        }
        // GTK's angle delta is the angle turned since the gesture began, not since the last event.
        onPoint(raw(rotate), "angle-changed") { [unowned self] _, delta in
            rotating = true
            setTravel(rotateStart + Float(delta / Knob.sweep))
        }
        onSignalWithPointer(raw(rotate), "end") { [unowned self] in rotating = false; setTurning(false) }
    }

    private func cancelHold() {
        if holdTimer != 0 { g_source_remove(holdTimer); holdTimer = 0 }
    }

    private func releaseGestures() {
        cancelHold()
        // The accessible may outlive the knob: it reads nothing through a stale context.
        stompbox_value_area_set_model(widget, nil)
        for g in gestures { g_object_unref(raw(g)) }
        gestures = []
        if readoutTimer != 0 { g_source_remove(readoutTimer); readoutTimer = 0 }
    }

    /// Centre of the dial in the knob's unzoomed coordinates.
    private var centre: (x: Double, y: Double) {
        (Double(gtk_widget_get_allocated_width(widget)) / zoom / 2, 3 + diameter / 2)
    }

    /// Centre of the dial in widget coordinates (logical pixels).
    var centreInWidget: (x: Int, y: Int) {
        (Int(gtk_widget_get_allocated_width(widget)) / 2, Int(((3 + diameter / 2) * zoom).rounded()))
    }

    /// Moving around the knob turns it by the change of the pointer's angle; moving towards or
    /// away from it (a straight drag up/down) turns it by the vertical distance.
    private func pointerMoved(to p: (x: Double, y: Double), fine: Bool) {
        let c = centre
        let mx = p.x - lastPoint.x, my = p.y - lastPoint.y
        let rx = p.x - c.x, ry = p.y - c.y
        let distance = (rx * rx + ry * ry).squareRoot()
        var delta: Double
        let radial = distance > 0 ? abs(mx * rx + my * ry) / distance : 0
        let tangential = distance > 0 ? abs(mx * ry - my * rx) / distance : 0
        if distance > diameter * 0.2 && tangential > radial {
            let before = atan2(lastPoint.x - c.x, -(lastPoint.y - c.y))
            let after = atan2(rx, -ry)
            var d = after - before
            if d > .pi { d -= 2 * .pi }
            if d < -.pi { d += 2 * .pi }
            delta = d / Knob.sweep
        } else {
            // 160 logical pixels of screen for the whole sweep, whatever the zoom.
            delta = -my * zoom / 160
        }
        if fine { delta *= 0.1 }
        turn(by: Float(delta))
    }

    /// Only the vertical wheel turns the knob. A sideways scroll (a touchpad swipe, a tilted
    /// wheel) is not handled, so it reaches the board, which moves: a player scrolling to the
    /// Looper does not change their tone on the way. Returns whether the knob took the event.
    private func scroll(_ event: UnsafeMutablePointer<GdkEventScroll>) -> Bool {
        let e = event.pointee
        var steps: Double
        switch e.direction {
        case GDK_SCROLL_UP: steps = 1
        case GDK_SCROLL_DOWN: steps = -1
        case GDK_SCROLL_SMOOTH:
            // Mostly sideways: the board's. Mostly vertical: the knob's.
            guard abs(e.delta_y) > abs(e.delta_x) else { return false }
            steps = -e.delta_y
        default: return false
        }
        let step = isFine(GdkModifierType(rawValue: e.state)) ? 0.002 : 0.02
        turn(by: Float(steps * step))
        flashReadout()
        return true
    }

    private func key(_ event: UnsafeMutablePointer<GdkEventKey>) -> Bool {
        let e = event.pointee
        let fine = isFine(GdkModifierType(rawValue: e.state))
        let step: Float = fine ? 0.002 : 0.02
        switch Int32(e.keyval) {
        case GDK_KEY_Up, GDK_KEY_Right, GDK_KEY_KP_Up, GDK_KEY_KP_Right, GDK_KEY_plus, GDK_KEY_KP_Add: turn(by: step)
        case GDK_KEY_Down, GDK_KEY_Left, GDK_KEY_KP_Down, GDK_KEY_KP_Left, GDK_KEY_minus, GDK_KEY_KP_Subtract: turn(by: -step)
        case GDK_KEY_Page_Up: turn(by: 0.1)
        case GDK_KEY_Page_Down: turn(by: -0.1)
        case GDK_KEY_Home: setTravel(0)
        case GDK_KEY_End: setTravel(1)
        case GDK_KEY_Delete, GDK_KEY_BackSpace: setValue(spec.defaultValue)
        default: return false
        }
        flashReadout()
        return true
    }

    func turn(by delta: Float) { setTravel(travel + delta) }

    private func setTravel(_ t: Float) {
        travel = min(max(t, 0), 1)
        store.set(parameter, spec.value(normalized: travel))
        changed()
    }

    private func setValue(_ v: Float) {
        store.set(parameter, v)
        travel = spec.normalized(store.load(parameter))
        changed()
        flashReadout()
    }

    private var readout: String { "\(spec.name) \(spec.format(store.load(parameter)))" }

    private func changed() {
        if let accessible = gtk_widget_get_accessible(widget) {
            atk_object_set_description(accessible, spec.format(store.load(parameter)))
        }
        stompbox_value_area_changed(widget)
        gtk_widget_set_tooltip_text(widget, readout)
        if turning || readoutTimer != 0 { onReadout?(readout) }
        gtk_widget_queue_draw(widget)
    }

    private func setTurning(_ on: Bool) {
        turning = on
        // The value shows on the knob and in the strip; a tooltip would cover the knob.
        gtk_widget_set_has_tooltip(widget, on ? 0 : 1)
        onReadout?(on ? readout : nil)
        gtk_widget_queue_draw(widget)
    }

    /// Shows the value for a moment after a scroll or key step.
    private func flashReadout() {
        if readoutTimer != 0 { g_source_remove(readoutTimer) }
        onReadout?(readout)
        gtk_widget_queue_draw(widget)
        readoutTimer = addTimeout(milliseconds: 1200) { [weak self] in
            guard let self else { return false }
            readoutTimer = 0
            if !turning { onReadout?(nil) }
            gtk_widget_queue_draw(widget)
            return false
        }
    }

    /// Follows a value set elsewhere (preset recall, the CLI); ignored while the hand is on it.
    func sync() {
        guard !turning else { return }
        let t = spec.normalized(store.load(parameter))
        if abs(t - travel) > 1e-6 || spec.value(normalized: travel) != store.load(parameter) {
            travel = t
            changed()
        }
    }

    // MARK: drawing

    private func draw(_ cr: OpaquePointer) {
        cairo_scale(cr, zoom, zoom)
        let c = centre
        let r = diameter / 2
        let angle = -0.75 * Double.pi + Knob.sweep * Double(travel)
        let showValue = turning || readoutTimer != 0

        // Scale: 11 ticks printed on the pedal around the knob.
        cairo_set_source_rgba(cr, ink.red, ink.green, ink.blue, 0.85)
        cairo_set_line_width(cr, 1.2)
        for i in 0...10 {
            let a = -0.75 * Double.pi + Knob.sweep * Double(i) / 10
            let inner = r + 2.5, outer = r + (i % 5 == 0 ? 6.5 : 4.5)
            cairo_move_to(cr, c.x + inner * sin(a), c.y - inner * cos(a))
            cairo_line_to(cr, c.x + outer * sin(a), c.y - outer * cos(a))
        }
        cairo_stroke(cr)

        // Shadow under the knob.
        let shadow = cairo_pattern_create_radial(c.x + 2, c.y + 4, r * 0.6, c.x + 2, c.y + 4, r * 1.15)
        cairo_pattern_add_color_stop_rgba(shadow, 0, 0, 0, 0, 0.55)
        cairo_pattern_add_color_stop_rgba(shadow, 1, 0, 0, 0, 0)
        cairo_set_source(cr, shadow)
        cairo_arc(cr, c.x + 2, c.y + 4, r * 1.15, 0, 2 * .pi)
        cairo_fill(cr)
        cairo_pattern_destroy(shadow)

        // Knurled black skirt; its ridges turn with the knob.
        let skirt = cairo_pattern_create_linear(c.x - r, c.y - r, c.x + r, c.y + r)
        cairo_pattern_add_color_stop_rgb(skirt, 0, 0.30, 0.31, 0.33)
        cairo_pattern_add_color_stop_rgb(skirt, 1, 0.04, 0.04, 0.05)
        cairo_set_source(cr, skirt)
        cairo_arc(cr, c.x, c.y, r, 0, 2 * .pi)
        cairo_fill(cr)
        cairo_pattern_destroy(skirt)
        cairo_set_line_width(cr, 1)
        let ridges = 28
        for i in 0..<ridges {
            let a = angle + 2 * Double.pi * Double(i) / Double(ridges)
            let light = 0.5 + 0.5 * cos(a + 0.8)
            cairo_set_source_rgba(cr, 1, 1, 1, 0.05 + 0.18 * light)
            cairo_move_to(cr, c.x + r * 0.80 * sin(a), c.y - r * 0.80 * cos(a))
            cairo_line_to(cr, c.x + r * 0.97 * sin(a), c.y - r * 0.97 * cos(a))
            cairo_stroke(cr)
        }

        // Brushed metal cap, lit from the top left.
        let cap = cairo_pattern_create_radial(c.x - r * 0.25, c.y - r * 0.3, r * 0.05, c.x, c.y, r * 0.72)
        cairo_pattern_add_color_stop_rgb(cap, 0, 0.97, 0.97, 0.98)
        cairo_pattern_add_color_stop_rgb(cap, 0.55, 0.68, 0.70, 0.73)
        cairo_pattern_add_color_stop_rgb(cap, 1, 0.38, 0.40, 0.43)
        cairo_set_source(cr, cap)
        cairo_arc(cr, c.x, c.y, r * 0.70, 0, 2 * .pi)
        cairo_fill_preserve(cr)
        cairo_pattern_destroy(cap)
        cairo_set_source_rgba(cr, 0, 0, 0, 0.5)
        cairo_set_line_width(cr, 1)
        cairo_stroke(cr)

        // Pointer line.
        cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND)
        cairo_set_line_width(cr, max(2.5, r * 0.11))
        cairo_set_source_rgb(cr, 0.08, 0.08, 0.09)
        cairo_move_to(cr, c.x + r * 0.18 * sin(angle), c.y - r * 0.18 * cos(angle))
        cairo_line_to(cr, c.x + r * 0.66 * sin(angle), c.y - r * 0.66 * cos(angle))
        cairo_stroke(cr)
        cairo_set_source_rgb(cr, 1, 1, 1)
        cairo_set_line_width(cr, max(2, r * 0.08))
        cairo_move_to(cr, c.x + r * 0.74 * sin(angle), c.y - r * 0.74 * cos(angle))
        cairo_line_to(cr, c.x + r * 0.97 * sin(angle), c.y - r * 0.97 * cos(angle))
        cairo_stroke(cr)

        if gtk_widget_has_focus(widget) != 0 {
            cairo_set_source_rgba(cr, 1.0, 0.85, 0.3, 0.9)
            cairo_set_line_width(cr, 2)
            cairo_arc(cr, c.x, c.y, r + 8.5, 0, 2 * .pi)
            cairo_stroke(cr)
        }

        // Label printed under the knob; the value while turning.
        let text = showValue ? spec.format(store.load(parameter)) : spec.shortName.uppercased()
        // A name longer than the control is wide (a plugin's port names) is printed smaller.
        let extents = FaceControl.fitFont(cr, text, size: showValue ? 10.5 : 9.5,
                                          maxWidth: Double(gtk_widget_get_allocated_width(widget)) / zoom - 6)
        let tx = c.x - extents.width / 2 - extents.x_bearing
        let ty = c.y + r + 19
        if showValue {
            cairo_set_source_rgba(cr, 0.05, 0.05, 0.06, 0.85)
            roundedRectangle(cr, tx - 4, ty - 11, extents.width + 8, 15, 4)
            cairo_fill(cr)
            cairo_set_source_rgb(cr, 1.0, 0.87, 0.45)
        } else {
            cairo_set_source_rgb(cr, ink.red, ink.green, ink.blue)
        }
        cairo_move_to(cr, tx, ty)
        cairo_show_text(cr, text)
    }
}

func roundedRectangle(_ cr: OpaquePointer, _ x: Double, _ y: Double, _ w: Double, _ h: Double, _ r: Double) {
    cairo_new_sub_path(cr)
    cairo_arc(cr, x + w - r, y + r, r, -.pi / 2, 0)
    cairo_arc(cr, x + w - r, y + h - r, r, 0, .pi / 2)
    cairo_arc(cr, x + r, y + h - r, r, .pi / 2, .pi)
    cairo_arc(cr, x + r, y + r, r, .pi, 1.5 * .pi)
    cairo_close_path(cr)
}
