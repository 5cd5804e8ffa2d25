import CPulse
import Foundation
import Synchronization

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

    var device: AudioDevice {
        AudioDevice(name: name, description: description, sampleRate: sampleRate, channels: channels, isMonitor: isMonitor)
    }
}

/// A connection to the PulseAudio server through the asynchronous API (`pa_context` on a
/// `pa_threaded_mainloop`), used to list devices and to notice when the one we play on goes away.
///
/// The simple API cannot tell us that: when a device is unplugged PulseAudio moves the stream to
/// another one. So this object subscribes to source and sink events and lowers `inputPresent` /
/// `outputPresent` the moment the watched device's index is removed; the audio loop polls those
/// atomics once per block. Every callback runs on the mainloop's thread with its lock held and
/// receives this object as an unretained pointer: the context is disconnected (callbacks cleared)
/// before the object can go away, so the pointer never dangles.
private let invalidIndex = UInt32.max

final class PulseServer: @unchecked Sendable {
    private let mainloop: OpaquePointer
    /// Guarded by the mainloop lock.
    private var context: OpaquePointer?
    private var watchedSource = invalidIndex
    private var watchedSink = invalidIndex

    let connected = Atomic<Bool>(false)
    let inputPresent = Atomic<Bool>(false)
    let outputPresent = Atomic<Bool>(false)
    /// Bumped on every source or sink that appears or goes away (wakes a waiting loop early).
    let deviceEvents = Atomic<Int>(0)
    /// Called on the mainloop thread after any event that may change what the loop can do.
    private let onEvent: @Sendable () -> Void

    init(onEvent: @escaping @Sendable () -> Void = {}) {
        self.onEvent = onEvent
        mainloop = pa_threaded_mainloop_new()
        pa_threaded_mainloop_start(mainloop)
    }

    deinit {
        disconnect()
        pa_threaded_mainloop_stop(mainloop)
        pa_threaded_mainloop_free(mainloop)
    }

    private var selfPointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Connects (again) to the server named by `PULSE_SERVER` or the default one, and subscribes
    /// to device events. Blocks until the connection is ready or has failed. Never autospawns.
    @discardableResult
    func connect() -> Bool {
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        dropContextLocked()
        guard let ctx = pa_context_new(pa_threaded_mainloop_get_api(mainloop), "Stompbox (device watch)") else { return false }
        context = ctx
        pa_context_set_state_callback(ctx, PulseServer.stateCallback, selfPointer)
        if pa_context_connect(ctx, nil, PA_CONTEXT_NOAUTOSPAWN, nil) < 0 {
            dropContextLocked()
            return false
        }
        while true {
            let state = pa_context_get_state(ctx)
            if state == PA_CONTEXT_READY { break }
            if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED {
                dropContextLocked()
                return false
            }
            pa_threaded_mainloop_wait(mainloop)
        }
        pa_context_set_subscribe_callback(ctx, PulseServer.subscribeCallback, selfPointer)
        let mask = pa_subscription_mask_t(rawValue: PA_SUBSCRIPTION_MASK_SOURCE.rawValue | PA_SUBSCRIPTION_MASK_SINK.rawValue)
        if let op = pa_context_subscribe(ctx, mask, nil, nil) { pa_operation_unref(op) }
        connected.store(true, ordering: .releasing)
        return true
    }

    func disconnect() {
        pa_threaded_mainloop_lock(mainloop)
        dropContextLocked()
        pa_threaded_mainloop_unlock(mainloop)
    }

    private func dropContextLocked() {
        connected.store(false, ordering: .releasing)
        guard let ctx = context else { return }
        pa_context_set_state_callback(ctx, nil, nil)
        pa_context_set_subscribe_callback(ctx, nil, nil)
        pa_context_disconnect(ctx)
        pa_context_unref(ctx)
        context = nil
    }

    /// From now on, lowers `inputPresent`/`outputPresent` when the source/sink with this index
    /// is removed. `nil` watches nothing (the flag stays raised).
    func watch(source: UInt32?, sink: UInt32?) {
        pa_threaded_mainloop_lock(mainloop)
        watchedSource = source ?? invalidIndex
        watchedSink = sink ?? invalidIndex
        inputPresent.store(true, ordering: .releasing)
        outputPresent.store(true, ordering: .releasing)
        pa_threaded_mainloop_unlock(mainloop)
    }

    // MARK: Queries (block the calling thread, never the audio loop's processing)

    func sourceInfo(_ name: String) -> PulseDeviceInfo? { query(name: name, sources: true).first }
    func sinkInfo(_ name: String) -> PulseDeviceInfo? { query(name: name, sources: false).first }
    func sources() -> [PulseDeviceInfo] { query(name: nil, sources: true) }
    func sinks() -> [PulseDeviceInfo] { query(name: nil, sources: false) }

    /// Collects the answers of one introspection request; lives on the caller's stack frame
    /// for as long as the request runs.
    private final class Query {
        let mainloop: OpaquePointer
        var results: [PulseDeviceInfo] = []
        var done = false
        var success = false
        init(mainloop: OpaquePointer) { self.mainloop = mainloop }
    }

    private func query(name: String?, sources: Bool) -> [PulseDeviceInfo] {
        let box = Query(mainloop: mainloop)
        let boxPointer = Unmanaged.passUnretained(box).toOpaque()
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        guard let ctx = context, pa_context_get_state(ctx) == PA_CONTEXT_READY else { return [] }
        let op: OpaquePointer?
        switch (sources, name) {
        case (true, let name?): op = pa_context_get_source_info_by_name(ctx, name, PulseServer.sourceInfoCallback, boxPointer)
        case (true, nil): op = pa_context_get_source_info_list(ctx, PulseServer.sourceInfoCallback, boxPointer)
        case (false, let name?): op = pa_context_get_sink_info_by_name(ctx, name, PulseServer.sinkInfoCallback, boxPointer)
        case (false, nil): op = pa_context_get_sink_info_list(ctx, PulseServer.sinkInfoCallback, boxPointer)
        }
        guard let op else { return [] }
        // Cancelled when the server goes away; the state callback signals then too.
        while !box.done && pa_operation_get_state(op) == PA_OPERATION_RUNNING {
            pa_threaded_mainloop_wait(mainloop)
        }
        pa_operation_unref(op)
        return withExtendedLifetime(box) { box.results }
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
    /// where it was and the rewind a new stream asks for is capped by the new, small latency:
    /// nothing flows for up to 2 s. A suspend/resume restarts the sink's clock from now.
    /// It costs other streams on the same device a few milliseconds, which is why it is done only
    /// for a device that has just come (back), never in the middle of playing.
    /// Returns the sinks it restarted.
    @discardableResult
    func restartTiming(sinks names: [String]) -> [String] {
        var restarted: [String] = []
        for name in names {
            if suspend(sink: name, true) && suspend(sink: name, false) { restarted.append(name) }
        }
        return restarted
    }

    private func suspend(sink name: String, _ on: Bool) -> Bool {
        let box = Query(mainloop: mainloop)
        let boxPointer = Unmanaged.passUnretained(box).toOpaque()
        pa_threaded_mainloop_lock(mainloop)
        defer { pa_threaded_mainloop_unlock(mainloop) }
        guard let ctx = context, pa_context_get_state(ctx) == PA_CONTEXT_READY,
              let op = pa_context_suspend_sink_by_name(ctx, name, on ? 1 : 0, PulseServer.successCallback, boxPointer) else { return false }
        while !box.done && pa_operation_get_state(op) == PA_OPERATION_RUNNING {
            pa_threaded_mainloop_wait(mainloop)
        }
        pa_operation_unref(op)
        return withExtendedLifetime(box) { box.success }
    }

    // MARK: C callbacks (mainloop thread, lock held)

    private static let stateCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { ctx, userdata in
        guard let ctx, let userdata else { return }
        let server = Unmanaged<PulseServer>.fromOpaque(userdata).takeUnretainedValue()
        let state = pa_context_get_state(ctx)
        if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED {
            server.connected.store(false, ordering: .releasing)
            server.onEvent()
        }
        pa_threaded_mainloop_signal(server.mainloop, 0)
    }

    private static let subscribeCallback: @convention(c) (OpaquePointer?, pa_subscription_event_type_t, UInt32, UnsafeMutableRawPointer?) -> Void = { _, event, index, userdata in
        guard let userdata else { return }
        let server = Unmanaged<PulseServer>.fromOpaque(userdata).takeUnretainedValue()
        let facility = event.rawValue & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue
        let type = event.rawValue & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue
        guard type != PA_SUBSCRIPTION_EVENT_CHANGE.rawValue else { return }
        if type == PA_SUBSCRIPTION_EVENT_REMOVE.rawValue {
            if facility == PA_SUBSCRIPTION_EVENT_SOURCE.rawValue && index == server.watchedSource {
                server.inputPresent.store(false, ordering: .releasing)
            }
            if facility == PA_SUBSCRIPTION_EVENT_SINK.rawValue && index == server.watchedSink {
                server.outputPresent.store(false, ordering: .releasing)
            }
        }
        server.deviceEvents.add(1, ordering: .releasing)
        server.onEvent()
    }

    private static let sourceInfoCallback: @convention(c) (OpaquePointer?, UnsafePointer<pa_source_info>?, Int32, UnsafeMutableRawPointer?) -> Void = { _, info, eol, userdata in
        guard let box = query(userdata, endOfList: eol), let i = info?.pointee else { return }
        box.results.append(PulseDeviceInfo(
            name: String(cString: i.name), description: i.description.map { String(cString: $0) } ?? "",
            index: i.index, sampleRate: Int(i.sample_spec.rate), channels: Int(i.sample_spec.channels),
            channelMap: i.channel_map, isMonitor: i.monitor_of_sink != invalidIndex,
            monitorOfSink: i.monitor_of_sink != invalidIndex ? i.monitor_of_sink_name.map { String(cString: $0) } : nil,
            master: PulseServer.master(i.proplist)))
    }

    private static let sinkInfoCallback: @convention(c) (OpaquePointer?, UnsafePointer<pa_sink_info>?, Int32, UnsafeMutableRawPointer?) -> Void = { _, info, eol, userdata in
        guard let box = query(userdata, endOfList: eol), let i = info?.pointee else { return }
        box.results.append(PulseDeviceInfo(
            name: String(cString: i.name), description: i.description.map { String(cString: $0) } ?? "",
            index: i.index, sampleRate: Int(i.sample_spec.rate), channels: Int(i.sample_spec.channels),
            channelMap: i.channel_map, isMonitor: false, master: PulseServer.master(i.proplist)))
    }

    /// The query a device-list callback belongs to; at the end of the list, marks it done and
    /// wakes the thread waiting for it, and returns nil.
    private static func query(_ userdata: UnsafeMutableRawPointer?, endOfList: Int32) -> Query? {
        guard let userdata else { return nil }
        let box = Unmanaged<Query>.fromOpaque(userdata).takeUnretainedValue()
        guard endOfList == 0 else {
            box.done = true
            pa_threaded_mainloop_signal(box.mainloop, 0)
            return nil
        }
        return box
    }

    private static func master(_ proplist: OpaquePointer?) -> String? {
        guard let proplist, let value = pa_proplist_gets(proplist, PA_PROP_DEVICE_MASTER_DEVICE) else { return nil }
        return String(cString: value)
    }

    private static let successCallback: @convention(c) (OpaquePointer?, Int32, UnsafeMutableRawPointer?) -> Void = { _, success, userdata in
        guard let userdata else { return }
        let box = Unmanaged<Query>.fromOpaque(userdata).takeUnretainedValue()
        box.success = success != 0
        box.done = true
        pa_threaded_mainloop_signal(box.mainloop, 0)
    }
}
