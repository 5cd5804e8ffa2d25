import CPulse
import Foundation

/// What the live loop needs to know about a source or sink before it opens a stream on it.
struct PulseDeviceInfo {
    var name: String
    var description: String
    var index: UInt32
    var sampleRate: Int
    var channels: Int
    var channelMap: pa_channel_map
    var isMonitor: Bool
    /// For a monitor source: the sink it monitors.
    var monitorOfSink: String? = nil
    /// For a filter sink or source (remap, equalizer, …): the device it plays into or records
    /// from (`device.master_device`).
    var master: String? = nil
    /// The sound card an ALSA device belongs to (`alsa.card`); a card's capture and playback
    /// run on one crystal.
    var card: String? = nil

    var device: AudioDevice {
        AudioDevice(name: name, description: description, sampleRate: sampleRate, channels: channels, isMonitor: isMonitor)
    }
}

let invalidPulseIndex = UInt32.max

/// A connection to a PulseAudio server (or PipeWire's pulse server) through the asynchronous
/// API on a single-threaded `pa_mainloop` that belongs to one thread: the audio thread runs it,
/// so the streams, the device watch and the block loop share one thread and no lock.
///
/// Every wait is an iteration of the mainloop with a timeout, and `wakeup()` (any thread)
/// interrupts it: a stalled device or a server that stopped answering never keeps the thread
/// from seeing a stop request. Nothing here blocks for longer than the timeout it was given.
///
/// Callbacks receive this object as an unretained pointer; the context's callbacks are cleared
/// before it is disconnected, so the pointer never outlives the object.
final class PulseConnection {
    let mainloop: OpaquePointer
    private(set) var context: OpaquePointer?
    /// The record stream's own connection (see `connect`).
    private(set) var recordContext: OpaquePointer?

    /// Raised by the device watch: the watched source or sink was removed.
    private(set) var inputRemoved = false
    private(set) var outputRemoved = false
    /// Counts source and sink events (new, removed).
    private(set) var deviceEvents = 0
    private var watchedSource = invalidPulseIndex
    private var watchedSink = invalidPulseIndex
    /// The server or a device went missing since the last opening: the next one is on a device
    /// that has just (re)appeared, whose timing `PulseSession` restarts (`restartTiming`).
    /// Kept here, with the connection that outlives the sessions (audio thread only).
    var devicesReappeared = false

    init() {
        mainloop = pa_mainloop_new()
    }

    deinit {
        disconnect()
        pa_mainloop_free(mainloop)
    }

    var selfPointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Interrupts a wait in `iterate`. Thread-safe.
    func wakeup() { pa_mainloop_wakeup(mainloop) }

    /// Waits up to `timeout` seconds for anything to happen (server messages, stream data, a
    /// wake-up), then runs the callbacks that are due. Returns false if the mainloop failed.
    @discardableResult
    func iterate(timeout: Double) -> Bool {
        let usec = Int32(max(0, min(timeout, 10)) * 1e6)
        if pa_mainloop_prepare(mainloop, usec) < 0 { return false }
        if pa_mainloop_poll(mainloop) < 0 { return false }
        return pa_mainloop_dispatch(mainloop) >= 0
    }

    var isConnected: Bool {
        guard let context, let recordContext else { return false }
        return pa_context_get_state(context) == PA_CONTEXT_READY && pa_context_get_state(recordContext) == PA_CONTEXT_READY
    }

    /// Connects (again) to the server named by `PULSE_SERVER` or the default one and subscribes
    /// to source and sink events. Never autospawns. Gives up after `timeout` seconds or when
    /// `cancelled` says so.
    ///
    /// Two connections are opened: the record stream has one of its own. PipeWire's pulse
    /// server (0.3.65) holds back a client's capture data, by up to 40 ms at a time, while the
    /// same connection carries a playback stream's block-by-block writes; with the capture on a
    /// connection of its own it arrives every period (measured: 0 late deliveries in 17 s,
    /// against hundreds on one connection). PulseAudio does not mind either way.
    func connect(name: String, timeout: Double, cancelled: () -> Bool) -> Bool {
        disconnect()
        let api = pa_mainloop_get_api(mainloop)
        guard let ctx = pa_context_new(api, name) else { return false }
        context = ctx
        guard let rec = pa_context_new(api, name + " (input)") else {
            disconnect()
            return false
        }
        recordContext = rec
        pa_context_set_subscribe_callback(ctx, PulseConnection.subscribeCallback, selfPointer)
        if pa_context_connect(ctx, nil, PA_CONTEXT_NOAUTOSPAWN, nil) < 0 || pa_context_connect(rec, nil, PA_CONTEXT_NOAUTOSPAWN, nil) < 0 {
            disconnect()
            return false
        }
        let deadline = monotonicSeconds() + timeout
        while true {
            let a = pa_context_get_state(ctx), b = pa_context_get_state(rec)
            if a == PA_CONTEXT_READY && b == PA_CONTEXT_READY { break }
            func ended(_ s: pa_context_state_t) -> Bool { s == PA_CONTEXT_FAILED || s == PA_CONTEXT_TERMINATED }
            if ended(a) || ended(b) || cancelled() || monotonicSeconds() > deadline {
                disconnect()
                return false
            }
            iterate(timeout: 0.05)
        }
        let mask = pa_subscription_mask_t(rawValue: PA_SUBSCRIPTION_MASK_SOURCE.rawValue | PA_SUBSCRIPTION_MASK_SINK.rawValue)
        if let op = pa_context_subscribe(ctx, mask, nil, nil) { pa_operation_unref(op) }
        isPipeWire = serverName()?.contains("PipeWire") ?? false
        return true
    }

    /// True when the server is PipeWire's pulse server ("PulseAudio (on PipeWire 0.3.65)"). It
    /// runs every device on its graph's clock (a device on another crystal is resampled to it
    /// inside PipeWire), so its clients always see one clock: no drift to follow there.
    private(set) var isPipeWire = false

    private func serverName() -> String? {
        guard let ctx = context else { return nil }
        let box = Query()
        let pointer = Unmanaged.passUnretained(box).toOpaque()
        guard let op = pa_context_get_server_info(ctx, PulseConnection.serverInfoCallback, pointer) else { return nil }
        return withExtendedLifetime(box) { wait(for: op, box) ? box.name : nil }
    }

    func disconnect() {
        if let rec = recordContext {
            pa_context_disconnect(rec)
            pa_context_unref(rec)
            recordContext = nil
        }
        guard let ctx = context else { return }
        pa_context_set_subscribe_callback(ctx, nil, nil)
        pa_context_set_state_callback(ctx, nil, nil)
        pa_context_disconnect(ctx)
        pa_context_unref(ctx)
        context = nil
    }

    /// From now on, raises `inputRemoved`/`outputRemoved` when the source/sink with this index
    /// is removed.
    func watch(source: UInt32?, sink: UInt32?) {
        watchedSource = source ?? invalidPulseIndex
        watchedSink = sink ?? invalidPulseIndex
        inputRemoved = false
        outputRemoved = false
    }

    // MARK: Queries (run the mainloop until answered, at most `timeout`)

    static let queryTimeout = 2.0

    func sourceInfo(_ name: String) -> PulseDeviceInfo? { query(name: name, sources: true)?.first }
    func sinkInfo(_ name: String) -> PulseDeviceInfo? { query(name: name, sources: false)?.first }
    /// Nil when the server did not answer.
    func sources() -> [PulseDeviceInfo]? { query(name: nil, sources: true) }
    func sinks() -> [PulseDeviceInfo]? { query(name: nil, sources: false) }

    /// Collects the answers of one introspection request.
    private final class Query {
        var results: [PulseDeviceInfo] = []
        var name: String?
        var done = false
        var success = false
    }

    /// Runs the mainloop until `op` has finished (or the timeout); unrefs it.
    private func wait(for op: OpaquePointer, _ box: Query, timeout: Double = PulseConnection.queryTimeout) -> Bool {
        let deadline = monotonicSeconds() + timeout
        while !box.done && pa_operation_get_state(op) == PA_OPERATION_RUNNING && isConnected && monotonicSeconds() < deadline {
            iterate(timeout: 0.05)
        }
        if pa_operation_get_state(op) == PA_OPERATION_RUNNING { pa_operation_cancel(op) }
        pa_operation_unref(op)
        return box.done
    }

    private func query(name: String?, sources: Bool) -> [PulseDeviceInfo]? {
        guard let ctx = context, isConnected else { return nil }
        let box = Query()
        let pointer = Unmanaged.passUnretained(box).toOpaque()
        let op: OpaquePointer?
        switch (sources, name) {
        case (true, let name?): op = pa_context_get_source_info_by_name(ctx, name, PulseConnection.sourceInfoCallback, pointer)
        case (true, nil): op = pa_context_get_source_info_list(ctx, PulseConnection.sourceInfoCallback, pointer)
        case (false, let name?): op = pa_context_get_sink_info_by_name(ctx, name, PulseConnection.sinkInfoCallback, pointer)
        case (false, nil): op = pa_context_get_sink_info_list(ctx, PulseConnection.sinkInfoCallback, pointer)
        }
        guard let op else { return nil }
        let answered = withExtendedLifetime(box) { wait(for: op, box) }
        return answered ? box.results : nil
    }

    // MARK: Clocks

    /// What drives a device's clock: an ALSA card ("card 1"), or the device at the bottom of a
    /// chain of filters and monitors (a monitor source runs on the sink it monitors; a remap or
    /// other filter device on its master). Nil when the server did not answer.
    func clockRoot(source: PulseDeviceInfo) -> String? {
        var info = source
        for _ in 0..<8 {
            if let sink = info.monitorOfSink { return clockRoot(sinkNamed: sink) }
            guard let master = info.master, master != info.name else { break }
            guard let next = sourceInfo(master) else { return nil }
            info = next
        }
        return info.card.map { "card \($0)" } ?? "source \(info.name)"
    }

    func clockRoot(sink: PulseDeviceInfo) -> String? { clockRoot(sinkNamed: sink.name) }

    private func clockRoot(sinkNamed name: String) -> String? {
        // The bottom of the chain has no master (else a query on the way failed).
        guard let deepest = sinkChain(name).last, let info = sinkInfo(deepest), info.master == nil || info.master == info.name else { return nil }
        return info.card.map { "card \($0)" } ?? "sink \(info.name)"
    }

    // MARK: Restarting a device's timing

    /// The devices whose clock drives `sink`: the sink itself and, for a filter sink, its
    /// master (and the master's master…), deepest last.
    func sinkChain(_ name: String) -> [String] {
        var chain: [String] = []
        var next: String? = name
        while let n = next, chain.count < 8, !chain.contains(n) {
            chain.append(n)
            next = sinkInfo(n)?.master
        }
        return chain
    }

    /// Suspends and resumes the sinks that drive a device that has just (re)appeared, so that
    /// they start their timing again from now at the latency our freshly opened streams ask for.
    ///
    /// Why: an idle sink (a null sink, or the null sink under a remap sink) renders ahead by its
    /// maximum latency (2 s for module-null-sink) and then sleeps until that is used up. When a
    /// low-latency stream arrives it lowers the sink's latency, but the sink's wake-up stays
    /// where it was: nothing flows for up to 2 s. A suspend/resume restarts the sink's clock.
    /// It costs other streams on the same device a few milliseconds, which is why it is done only
    /// for a device that has just come (back), never in the middle of playing.
    @discardableResult
    func restartTiming(sinks names: [String]) -> [String] {
        names.filter { suspend(sink: $0, true) && suspend(sink: $0, false) }
    }

    private func suspend(sink name: String, _ on: Bool) -> Bool {
        guard let ctx = context, isConnected else { return false }
        let box = Query()
        let pointer = Unmanaged.passUnretained(box).toOpaque()
        guard let op = pa_context_suspend_sink_by_name(ctx, name, on ? 1 : 0, PulseConnection.successCallback, pointer) else { return false }
        return withExtendedLifetime(box) { wait(for: op, box) && box.success }
    }

    // MARK: C callbacks (on the thread that iterates the mainloop)

    private static let subscribeCallback: @convention(c) (OpaquePointer?, pa_subscription_event_type_t, UInt32, UnsafeMutableRawPointer?) -> Void = { _, event, index, userdata in
        guard let userdata else { return }
        let connection = Unmanaged<PulseConnection>.fromOpaque(userdata).takeUnretainedValue()
        let facility = event.rawValue & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue
        let type = event.rawValue & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue
        guard type != PA_SUBSCRIPTION_EVENT_CHANGE.rawValue else { return }
        if type == PA_SUBSCRIPTION_EVENT_REMOVE.rawValue {
            if facility == PA_SUBSCRIPTION_EVENT_SOURCE.rawValue && index == connection.watchedSource { connection.inputRemoved = true }
            if facility == PA_SUBSCRIPTION_EVENT_SINK.rawValue && index == connection.watchedSink { connection.outputRemoved = true }
        }
        connection.deviceEvents += 1
    }

    private static let sourceInfoCallback: @convention(c) (OpaquePointer?, UnsafePointer<pa_source_info>?, Int32, UnsafeMutableRawPointer?) -> Void = { _, info, eol, userdata in
        guard let box = query(userdata, endOfList: eol), let i = info?.pointee else { return }
        box.results.append(PulseDeviceInfo(
            name: String(cString: i.name), description: i.description.map { String(cString: $0) } ?? "",
            index: i.index, sampleRate: Int(i.sample_spec.rate), channels: Int(i.sample_spec.channels),
            channelMap: i.channel_map, isMonitor: i.monitor_of_sink != invalidPulseIndex,
            monitorOfSink: i.monitor_of_sink != invalidPulseIndex ? i.monitor_of_sink_name.map { String(cString: $0) } : nil,
            master: PulseConnection.property(i.proplist, PA_PROP_DEVICE_MASTER_DEVICE),
            card: PulseConnection.property(i.proplist, "alsa.card")))
    }

    private static let sinkInfoCallback: @convention(c) (OpaquePointer?, UnsafePointer<pa_sink_info>?, Int32, UnsafeMutableRawPointer?) -> Void = { _, info, eol, userdata in
        guard let box = query(userdata, endOfList: eol), let i = info?.pointee else { return }
        box.results.append(PulseDeviceInfo(
            name: String(cString: i.name), description: i.description.map { String(cString: $0) } ?? "",
            index: i.index, sampleRate: Int(i.sample_spec.rate), channels: Int(i.sample_spec.channels),
            channelMap: i.channel_map, isMonitor: false, master: PulseConnection.property(i.proplist, PA_PROP_DEVICE_MASTER_DEVICE),
            card: PulseConnection.property(i.proplist, "alsa.card")))
    }

    /// The query a device-list callback belongs to; at the end of the list (or an error: the
    /// device does not exist), marks it done and returns nil.
    private static func query(_ userdata: UnsafeMutableRawPointer?, endOfList: Int32) -> Query? {
        guard let userdata else { return nil }
        let box = Unmanaged<Query>.fromOpaque(userdata).takeUnretainedValue()
        guard endOfList == 0 else {
            box.done = true
            return nil
        }
        return box
    }

    private static func property(_ proplist: OpaquePointer?, _ key: String) -> String? {
        guard let proplist, let value = pa_proplist_gets(proplist, key) else { return nil }
        return String(cString: value)
    }

    private static let serverInfoCallback: @convention(c) (OpaquePointer?, UnsafePointer<pa_server_info>?, UnsafeMutableRawPointer?) -> Void = { _, info, userdata in
        guard let userdata else { return }
        let box = Unmanaged<Query>.fromOpaque(userdata).takeUnretainedValue()
        box.name = info?.pointee.server_name.map { String(cString: $0) }
        box.done = true
    }

    private static let successCallback: @convention(c) (OpaquePointer?, Int32, UnsafeMutableRawPointer?) -> Void = { _, success, userdata in
        guard let userdata else { return }
        let box = Unmanaged<Query>.fromOpaque(userdata).takeUnretainedValue()
        box.success = success != 0
        box.done = true
    }
}

/// Seconds on the monotonic clock.
@inline(__always)
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}
