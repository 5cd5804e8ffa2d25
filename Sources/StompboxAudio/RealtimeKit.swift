import CAudioShim
import CDBus
import Foundation

/// Real-time priority for the calling thread, the way PulseAudio and PipeWire clients get it on
/// a desktop: SCHED_FIFO directly when the user may take it (root, or an rtprio limit), else
/// from RealtimeKit (`rtkit-daemon`) over the system D-Bus, within its rules (the process's
/// RLIMIT_RTTIME set to at most its `RTTimeUSecMax`, the priority at most its
/// `MaxRealtimePriority`). `DBUS_SYSTEM_BUS_ADDRESS` points it at another system bus.
public enum RealtimePriority: Equatable, Sendable, CustomStringConvertible {
    case none
    /// SCHED_FIFO set by the thread itself.
    case fifo(Int)
    /// SCHED_FIFO granted by RealtimeKit.
    case rtkit(Int)

    /// As the status line says it: `none`, `fifo:10`, `rtkit:10`.
    public var description: String {
        switch self {
        case .none: "none"
        case .fifo(let p): "fifo:\(p)"
        case .rtkit(let p): "rtkit:\(p)"
        }
    }

    /// Asks for `priority` for the calling thread: directly, then through RealtimeKit. Returns
    /// what it got, and why not when it got none. Blocks for at most about 2 s (a bus that does
    /// not answer); call it before the thread's audio starts, never inside a block.
    public static func request(_ priority: Int32) -> (granted: RealtimePriority, refused: String?) {
        let direct = stompbox_request_realtime(priority)
        if direct == 0 { return (.fifo(Int(priority)), nil) }
        let why = String(cString: strerror(direct))
        switch RealtimeKit.makeThreadRealtime(priority: priority) {
        case .success(let granted): return (.rtkit(granted), nil)
        case .failure(let error): return (.none, "SCHED_FIFO refused (\(why)), and RealtimeKit: \(error.reason)")
        }
    }
}

/// RealtimeKit's D-Bus interface (org.freedesktop.RealtimeKit1 on the system bus).
public enum RealtimeKit {
    public struct Failure: Error, Equatable { public let reason: String }

    static let service = "org.freedesktop.RealtimeKit1", path = "/org/freedesktop/RealtimeKit1"

    /// Asks RealtimeKit to make the calling thread SCHED_FIFO at `priority` (lowered to its
    /// maximum); returns the priority granted.
    public static func makeThreadRealtime(priority: Int32, timeoutMilliseconds: Int32 = 2_000) -> Result<Int, Failure> {
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        // A private connection: closed here, never shared with (or closing) anyone else's.
        guard let bus = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error) else {
            return .failure(Failure(reason: "no system bus (\(message(error)))"))
        }
        dbus_connection_set_exit_on_disconnect(bus, 0)
        defer { dbus_connection_close(bus); dbus_connection_unref(bus) }

        let maximum = property(bus, "MaxRealtimePriority", timeoutMilliseconds)
        guard let maximum, maximum > 0 else {
            return .failure(Failure(reason: "it does not answer on the system bus (is rtkit installed and running?)"))
        }
        let granted = min(Int64(priority), maximum)
        // RealtimeKit only serves a process whose RLIMIT_RTTIME is at most its own limit, so a
        // runaway real-time thread is stopped by the kernel rather than freezing the desktop.
        if let rttime = property(bus, "RTTimeUSecMax", timeoutMilliseconds), rttime > 0 {
            let refused = stompbox_limit_rttime(rttime)
            if refused != 0 {
                return .failure(Failure(reason: "cannot set RLIMIT_RTTIME to \(rttime) µs (\(String(cString: strerror(refused))))"))
            }
        }
        guard let call = dbus_message_new_method_call(service, path, service, "MakeThreadRealtime") else {
            return .failure(Failure(reason: "out of memory"))
        }
        defer { dbus_message_unref(call) }
        var arguments = DBusMessageIter()
        dbus_message_iter_init_append(call, &arguments)
        var thread = UInt64(stompbox_thread_id())
        var wanted = UInt32(granted)
        _ = dbus_message_iter_append_basic(&arguments, Int32(UInt8(ascii: "t")), &thread)
        _ = dbus_message_iter_append_basic(&arguments, Int32(UInt8(ascii: "u")), &wanted)
        guard let reply = dbus_connection_send_with_reply_and_block(bus, call, timeoutMilliseconds, &error) else {
            return .failure(Failure(reason: "refused: \(message(error))"))
        }
        dbus_message_unref(reply)
        return .success(Int(granted))
    }

    /// An integer property of RealtimeKit's (nil when it does not answer).
    static func property(_ bus: OpaquePointer, _ name: String, _ timeout: Int32) -> Int64? {
        guard let call = dbus_message_new_method_call(service, path, "org.freedesktop.DBus.Properties", "Get") else { return nil }
        defer { dbus_message_unref(call) }
        var arguments = DBusMessageIter()
        dbus_message_iter_init_append(call, &arguments)
        for text in [service, name] {
            _ = text.withCString { pointer in
                var p: UnsafePointer<CChar>? = pointer
                return dbus_message_iter_append_basic(&arguments, Int32(UInt8(ascii: "s")), &p)
            }
        }
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let reply = dbus_connection_send_with_reply_and_block(bus, call, timeout, &error) else { return nil }
        defer { dbus_message_unref(reply) }
        var top = DBusMessageIter(), variant = DBusMessageIter()
        guard dbus_message_iter_init(reply, &top) != 0, dbus_message_iter_get_arg_type(&top) == Int32(UInt8(ascii: "v")) else { return nil }
        dbus_message_iter_recurse(&top, &variant)
        switch UInt8(truncatingIfNeeded: dbus_message_iter_get_arg_type(&variant)) {
        case UInt8(ascii: "i"): var v: Int32 = 0; dbus_message_iter_get_basic(&variant, &v); return Int64(v)
        case UInt8(ascii: "x"): var v: Int64 = 0; dbus_message_iter_get_basic(&variant, &v); return v
        case UInt8(ascii: "u"): var v: UInt32 = 0; dbus_message_iter_get_basic(&variant, &v); return Int64(v)
        default: return nil
        }
    }

    static func message(_ error: DBusError) -> String {
        error.message.map { String(cString: $0) } ?? "unknown error"
    }
}
