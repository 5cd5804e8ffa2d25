import CGtk
import CStompboxShim
import Synchronization

/// Reinterprets a GObject pointer as another type in its class hierarchy (what GTK_WIDGET() etc. do in C).
@inline(__always)
func cast<T>(_ pointer: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<T> {
    pointer!.assumingMemoryBound(to: T.self)
}

@inline(__always)
func raw<T>(_ pointer: UnsafeMutablePointer<T>?) -> UnsafeMutableRawPointer? {
    UnsafeMutableRawPointer(pointer)
}

/// The owner of one signal handler's Swift closure.
///
/// Connecting retains the box (`Unmanaged.passRetained`) and hands GLib a `GClosureNotify` that
/// releases it, so the closure lives exactly as long as the connection: until the handler is
/// disconnected or the object emitting the signal is finalized. `live` counts boxes not yet
/// released, which lets a test check that closing the window frees every closure.
final class SignalBox<F>: SignalBoxBase {
    let body: F
    init(_ body: F) { self.body = body }
}

class SignalBoxBase {
    private static let liveCount = Atomic<Int>(0)
    /// Signal closures currently alive (connected and not yet released).
    static var live: Int { liveCount.load(ordering: .relaxed) }
    init() { SignalBoxBase.liveCount.add(1, ordering: .relaxed) }
    deinit { SignalBoxBase.liveCount.subtract(1, ordering: .relaxed) }
}

private let releaseBox: GClosureNotify = { data, _ in
    guard let data else { return }
    Unmanaged<SignalBoxBase>.fromOpaque(data).release()
}

@inline(__always)
private func box<F>(_ data: UnsafeMutableRawPointer?) -> F {
    Unmanaged<SignalBox<F>>.fromOpaque(data!).takeUnretainedValue().body
}

private func connect<F>(_ instance: UnsafeMutableRawPointer?, _ signal: String, _ handler: GCallback, _ body: F) -> UInt {
    let data = Unmanaged.passRetained(SignalBox(body) as SignalBoxBase).toOpaque()
    return UInt(stompbox_signal_connect(instance, signal, handler, data, releaseBox))
}

// One trampoline per C signature. Each finds its closure in the box and calls it.
typealias VoidHandler = () -> Void
typealias EventHandler = (UnsafeMutableRawPointer?) -> Bool
typealias PointHandler = (Double, Double) -> Void
typealias PressHandler = (Int, Double, Double) -> Void

private let voidTrampoline: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { _, data in
    (box(data) as VoidHandler)()
}
private let eventTrampoline: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> gboolean = { _, event, data in
    (box(data) as EventHandler)(event) ? 1 : 0
}
private let pointTrampoline: @convention(c) (UnsafeMutableRawPointer?, Double, Double, UnsafeMutableRawPointer?) -> Void = { _, x, y, data in
    (box(data) as PointHandler)(x, y)
}
private let pressTrampoline: @convention(c) (UnsafeMutableRawPointer?, Int32, Double, Double, UnsafeMutableRawPointer?) -> Void = { _, n, x, y, data in
    (box(data) as PressHandler)(Int(n), x, y)
}

/// Signals whose handler takes only the instance: "clicked", "toggled", "value-changed", "destroy", "activate".
@discardableResult
func onSignal(_ instance: UnsafeMutableRawPointer?, _ signal: String, _ body: @escaping VoidHandler) -> UInt {
    connect(instance, signal, unsafeBitCast(voidTrampoline, to: GCallback.self), body)
}

/// Signals with one pointer argument and a gboolean result: "draw" (cairo_t*), "*-event" (GdkEvent*).
@discardableResult
func onEvent(_ instance: UnsafeMutableRawPointer?, _ signal: String, _ body: @escaping EventHandler) -> UInt {
    connect(instance, signal, unsafeBitCast(eventTrampoline, to: GCallback.self), body)
}

/// Gesture signals with two doubles: "drag-begin", "drag-update", "drag-end", "angle-changed".
@discardableResult
func onPoint(_ instance: UnsafeMutableRawPointer?, _ signal: String, _ body: @escaping PointHandler) -> UInt {
    connect(instance, signal, unsafeBitCast(pointTrampoline, to: GCallback.self), body)
}

/// GtkGestureMultiPress "pressed"/"released": press count and position.
@discardableResult
func onPress(_ instance: UnsafeMutableRawPointer?, _ signal: String, _ body: @escaping PressHandler) -> UInt {
    connect(instance, signal, unsafeBitCast(pressTrampoline, to: GCallback.self), body)
}

/// A GLib timeout whose closure is owned by the source: released when the source is removed
/// (the closure returns false, or `g_source_remove`).
@discardableResult
func addTimeout(milliseconds: UInt32, _ body: @escaping () -> Bool) -> UInt32 {
    let data = Unmanaged.passRetained(SignalBox(body) as SignalBoxBase).toOpaque()
    let tick: GSourceFunc = { data in
        (Unmanaged<SignalBox<() -> Bool>>.fromOpaque(data!).takeUnretainedValue().body)() ? 1 : 0
    }
    let destroy: GDestroyNotify = { data in
        Unmanaged<SignalBoxBase>.fromOpaque(data!).release()
    }
    return g_timeout_add_full(G_PRIORITY_DEFAULT, milliseconds, tick, data, destroy)
}

/// Sets what a screen reader says for a widget.
func setAccessible(_ widget: UnsafeMutablePointer<GtkWidget>, name: String, description: String? = nil, role: AtkRole? = nil) {
    guard let accessible = gtk_widget_get_accessible(widget) else { return }
    atk_object_set_name(accessible, name)
    if let description { atk_object_set_description(accessible, description) }
    if let role { atk_object_set_role(accessible, role) }
}

func addClass(_ widget: UnsafeMutablePointer<GtkWidget>, _ name: String) {
    gtk_style_context_add_class(gtk_widget_get_style_context(widget), name)
}

func removeClass(_ widget: UnsafeMutablePointer<GtkWidget>, _ name: String) {
    gtk_style_context_remove_class(gtk_widget_get_style_context(widget), name)
}

/// Modifier state of the event being handled (Shift/Ctrl for fine adjustment).
func currentModifiers() -> GdkModifierType {
    var state = GdkModifierType(rawValue: 0)
    _ = gtk_get_current_event_state(&state)
    return state
}

func isFine(_ state: GdkModifierType) -> Bool {
    state.rawValue & (GDK_SHIFT_MASK.rawValue | GDK_CONTROL_MASK.rawValue) != 0
}

@inline(__always)
func raw(_ pointer: OpaquePointer?) -> UnsafeMutableRawPointer? {
    UnsafeMutableRawPointer(pointer)
}

private let pointerTrampoline: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { _, _, data in
    (box(data) as VoidHandler)()
}

/// Signals with one pointer argument and no result, e.g. GtkGesture "begin"/"end" (the sequence).
@discardableResult
func onSignalWithPointer(_ instance: UnsafeMutableRawPointer?, _ signal: String, _ body: @escaping VoidHandler) -> UInt {
    connect(instance, signal, unsafeBitCast(pointerTrampoline, to: GCallback.self), body)
}
