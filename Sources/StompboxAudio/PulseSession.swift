import CPulse
import CSamplerate
import Foundation
import StompboxDSP

/// The PulseAudio backend: one opening of the streams on a (source, sink) pair, until something
/// changes.
///
/// Capture-driven: whenever the record stream delivers, every complete block is processed and
/// written to the playback stream at once, so a block waits for nothing but its own samples.
/// `LatencyControl` keeps the playback margin at its target: bit-exact while in and out share a
/// clock, through libsamplerate when the input drifts, and with one quick correction after a
/// dropout; `PulseLatencyPolicy` adds what the servers' frame counts and dry reports tell. The
/// session feeds the policy what it saw and applies what it returns. Everything runs on the
/// audio thread inside the connection's mainloop callbacks; the block path (the host's
/// `LiveHost.process`) allocates nothing and takes no lock of ours.
final class PulseSession: AudioBackend {
    /// Input samples fed to the resampler ahead of the first new one when it is engaged, so its
    /// filter starts from the signal rather than from zeros.
    static let primingLength = 128

    let host: LiveHost
    let connection: PulseConnection
    let settings: LiveSettings
    /// The engine's stop flag, for the connection's own waits.
    private let cancelled: () -> Bool
    /// Found by `open`.
    private(set) var source: PulseDeviceInfo?
    private(set) var sink: PulseDeviceInfo!
    /// The devices have just (re)appeared: their timing is restarted once the streams are open.
    private var restartTiming = false
    let buffers: PulseBuffers

    let rate: Double
    let block: Int
    let blockSeconds: Double
    private(set) var inChannels = 1
    private(set) var outChannels = 1
    let channel: Int

    private var record: OpaquePointer?
    private var playback: OpaquePointer?

    // FIFO state (frames).
    private var fifoStart = 0
    private var fifoEnd = 0
    private var fifoCount: Int { fifoEnd - fifoStart }
    /// Frames of `mono` filled so far.
    private var filled = 0
    /// Queued output to take back (written over) with the next block.
    private var pendingRewind = 0
    private var historyPosition = 0

    // Resampler state.
    private var resampling = false
    private var discardOutput = 0
    /// Input the resampler has taken but not yet turned into output (frames): its look-ahead,
    /// plus whatever it buffered beyond (libsamplerate takes all the input it is offered, up
    /// to its own buffer's size, however little output is asked for). Counted as waiting input,
    /// or the margin would seem to drop by that much whenever it buffers.
    private var heldInResampler = 0.0

    // Measurements.
    /// The margin's control and the end-to-end policy around it.
    private var policy: PulseLatencyPolicy
    /// Frames taken from the record stream and written to the playback stream (with seeks):
    /// the client's ends of the two server queues, counted here rather than read back from
    /// libpulse's interpolated timing.
    private var recordFramesTaken = 0
    private var playbackFramesWritten = 0
    /// The margin's target when the streams were opened (frames).
    private var targetFrames = 0
    private var lastPublish = 0.0
    private var lastTimingUpdate = 0.0
    /// The timing requests still on their way (`requestTiming`): cancelled when the streams
    /// close, so a late reply never calls back into a session that is gone.
    private var timingRequests: (record: OpaquePointer?, playback: OpaquePointer?) = (nil, nil)
    private var lastCapture = 0.0
    private var stalled = false

    init(host: LiveHost, connection: PulseConnection, buffers: PulseBuffers, targetMs: Double, cancelled: @escaping () -> Bool) {
        self.host = host
        self.connection = connection
        settings = host.settings
        self.cancelled = cancelled
        self.buffers = buffers
        rate = Double(settings.sampleRate)
        block = min(PulseBuffers.maximumBlock, max(1, settings.blockSize))
        blockSeconds = Double(block) / rate
        channel = settings.inputChannel - 1
        policy = PulseLatencyPolicy(sampleRate: rate, block: block, targetMs: targetMs, oneClock: false)
        buffers.splice.reset(sampleRate: rate)
        buffers.spliceRight.reset(sampleRate: rate)
    }

    private var selfPointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private func errorText(record: Bool = false) -> String {
        guard let ctx = record ? connection.recordContext : connection.context else { return "no connection" }
        return String(cString: pa_strerror(pa_context_errno(ctx)))
    }

    private var flags: pa_stream_flags_t {
        // DONT_MOVE: when the device goes away the server ends our stream instead of moving it
        // to another device (a laptop microphone, or the monitor of our own output).
        pa_stream_flags_t(rawValue: PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_INTERPOLATE_TIMING.rawValue
                          | PA_STREAM_AUTO_TIMING_UPDATE.rawValue | PA_STREAM_DONT_MOVE.rawValue)
    }

    private func newStream(_ name: String, _ device: PulseDeviceInfo, record: Bool) -> OpaquePointer? {
        guard let ctx = record ? connection.recordContext : connection.context else { return nil }
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(settings.sampleRate), channels: UInt8(device.channels))
        var map = device.channelMap
        return pa_stream_new(ctx, name, &spec, &map)
    }

    /// Waits until the stream is ready; false if it failed or the wait was interrupted.
    private func waitReady(_ stream: OpaquePointer) -> Bool {
        let deadline = monotonicSeconds() + 3
        while monotonicSeconds() < deadline {
            let state = pa_stream_get_state(stream)
            if state == PA_STREAM_READY { return true }
            if state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED || interruption() != nil { return false }
            connection.iterate(timeout: 0.05)
        }
        return false
    }

    // MARK: AudioBackend (the engine's audio thread)

    /// Finds the devices (connecting first if need be), then opens and connects the streams.
    func open() -> BackendOutcome? {
        if let outcome = findDevices() { return outcome }
        return openStreams().map(ended)
    }

    /// Connects to the server and looks the devices up; nil when both are there.
    private func findDevices() -> BackendOutcome? {
        if !connection.isConnected && !connection.connect(name: "Stompbox", timeout: 2, cancelled: cancelled) {
            connection.devicesReappeared = true
            return .failed(.noServer, (settings.backend == .auto ? "no JACK server answers, and " : "")
                           + "cannot reach \(LiveEngine.serverDescription); retrying twice a second")
        }
        if settings.input != .demo {
            let name = settings.input.sourceName ?? "@DEFAULT_SOURCE@"
            guard let info = connection.sourceInfo(name) else {
                connection.devicesReappeared = true
                return connection.isConnected
                    ? .failed(.waitingForInput, "input \(settings.input.sourceName ?? "(default source)") is not there; waiting for it")
                    : .deviceGone
            }
            guard (1...info.channels).contains(settings.inputChannel) else {
                return .failed(.waitingForInput, "input \(info.name) has \(info.channels) channel(s); channel \(settings.inputChannel) does not exist")
            }
            source = info
        }
        guard let sink = connection.sinkInfo(settings.output ?? "@DEFAULT_SINK@") else {
            connection.devicesReappeared = true
            return connection.isConnected
                ? .failed(.waitingForOutput, "output \(settings.output ?? "(default sink)") is not there; waiting for it")
                : .deviceGone
        }
        self.sink = sink
        connection.watch(source: source?.index, sink: sink.index)
        host.noteBackend(.pulse)
        // In and out on one clock (PipeWire runs every device on its graph's; otherwise one
        // card, or monitors and filters of one sink): never resampled, whatever the frame
        // counts seem to say. Unknown: the counts decide.
        policy.oneClock = connection.isPipeWire || source.map { input in
            connection.clockRoot(source: input).map { $0 == connection.clockRoot(sink: sink) } ?? false
        } ?? true
        restartTiming = connection.devicesReappeared
        connection.devicesReappeared = false
        inChannels = source?.channels ?? 1
        outChannels = min(PulseBuffers.maximumChannels, sink.channels)
        return nil
    }

    /// How a session that had found its devices ended, as the engine takes it: a device gone,
    /// or a failure, means the next opening is on devices that have just (re)appeared; a failure
    /// after the connection itself went is looked for again at once (the next opening says
    /// what is missing).
    private func ended(_ outcome: BackendOutcome) -> BackendOutcome {
        switch outcome {
        case .stopped, .settingsChanged:
            return outcome
        case .deviceGone:
            connection.devicesReappeared = true
            return outcome
        case .failed:
            connection.devicesReappeared = true
            return connection.isConnected ? outcome : .deviceGone
        }
    }

    /// Stops the callbacks: no timing reply, block or dry report reaches the session after this.
    func deactivate() {
        PulseSession.forget(timingRequests.record)
        PulseSession.forget(timingRequests.playback)
        timingRequests = (nil, nil)
        for stream in [record, playback] {
            guard let stream else { continue }
            pa_stream_set_read_callback(stream, nil, nil)
            pa_stream_set_write_callback(stream, nil, nil)
            pa_stream_set_underflow_callback(stream, nil, nil)
        }
    }

    func close() {
        for stream in [record, playback] {
            guard let stream else { continue }
            if pa_stream_get_state(stream) == PA_STREAM_READY { pa_stream_disconnect(stream) }
            pa_stream_unref(stream)
        }
        record = nil
        playback = nil
    }

    private func openStreams() -> BackendOutcome? {
        let frameOut = UInt32(4 * outChannels)
        targetFrames = Int(policy.control.target * rate)
        let none = UInt32.max

        // Playback: the server sizes the sink's own buffer from tlength (about half of it with
        // ADJUST_LATENCY); we keep the margin ourselves. prebuf of one block: after running dry
        // the stream plays again as soon as we write.
        var playAttr = pa_buffer_attr(maxlength: none, tlength: UInt32(targetFrames + block) * frameOut,
                                      prebuf: UInt32(block) * frameOut, minreq: UInt32(block) * frameOut, fragsize: none)
        guard let p = newStream("amp out", sink, record: false) else {
            return .failed(.waitingForOutput, "cannot play to \(sink.name): \(errorText())")
        }
        playback = p
        pa_stream_set_underflow_callback(p, PulseSession.underflowCallback, selfPointer)
        if source == nil { pa_stream_set_write_callback(p, PulseSession.writeCallback, selfPointer) }
        if let source {
            // Capture: deliver one block at a time (fragsize), the source's latency set to it.
            var recordAttr = pa_buffer_attr(maxlength: none, tlength: none, prebuf: none, minreq: none,
                                            fragsize: UInt32(block * 4 * inChannels))
            guard let r = newStream("guitar in", source, record: true) else {
                return .failed(.waitingForInput, "cannot record from \(source.name): \(errorText(record: true))")
            }
            record = r
            pa_stream_set_read_callback(r, PulseSession.readCallback, selfPointer)
            if pa_stream_connect_record(r, source.name, &recordAttr, flags) < 0 || !waitReady(r) {
                if let stop = interruption() { return stop }
                return .failed(.waitingForInput, "cannot record from \(source.name): \(errorText(record: true))")
            }
        }
        if pa_stream_connect_playback(p, sink.name, &playAttr, flags, nil, nil) < 0 || !waitReady(p) {
            if let stop = interruption() { return stop }
            return .failed(.waitingForOutput, "cannot play to \(sink.name): \(errorText())")
        }
        return nil
    }

    /// The streams are open: restarts an idle device's timing, then starts the output.
    func activate() -> BackendOutcome? {
        if restartTiming {
            // A device that has just come (back) may be an idle sink that rendered far ahead at
            // its largest latency and sleeps until that is used up (2 s for a null sink): restart
            // its clock (and that of a filter sink's master) now that our streams are open.
            var sinks = connection.sinkChain(sink.name)
            if let monitored = source?.monitorOfSink {
                for name in connection.sinkChain(monitored) where !sinks.contains(name) { sinks.append(name) }
            }
            connection.restartTiming(sinks: sinks)
        }
        host.publishRunning()

        // Half the margin as silence in front; the sink's own buffer holds about the other half.
        // Warm-up measures what it really is and sets it exactly.
        writeSilence(targetFrames / 2)
        if source == nil { refillDemo() }
        return nil
    }

    func run() -> BackendOutcome { ended(watch()) }

    /// Runs the mainloop (the callbacks) until the session must end.
    private func watch() -> BackendOutcome {
        let started = monotonicSeconds()
        lastCapture = started
        lastPublish = started
        while true {
            if let stop = interruption() { return stop }
            for stream in [record, playback] {
                guard let stream else { continue }
                let state = pa_stream_get_state(stream)
                if state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED {
                    // With DONT_MOVE the server ends the stream when its device goes away.
                    if let stop = interruption() { return stop }
                    return connection.isConnected ? .deviceGone : .failed(.noServer, "lost the connection to \(LiveEngine.serverDescription)")
                }
            }
            if !connection.iterate(timeout: 0.1) {
                return .failed(.noServer, "the PulseAudio connection failed")
            }
            housekeeping(now: monotonicSeconds())
        }
    }

    /// A few times a second: fresh timing from the server, the latency figure, a stalled input.
    private func housekeeping(now: Double) {
        if now - lastTimingUpdate >= 0.1 {
            requestTiming()
        }
        if record != nil {
            let quiet = now - lastCapture > max(0.5, 4 * blockSeconds)
            if quiet != stalled {
                stalled = quiet
                host.engine.noteStalledInput(quiet ? source?.name : nil)
            }
        }
        if now - lastPublish >= 0.5 {
            lastPublish = now
            if let ms = policy.takeLatencyMs() {
                host.noteLatency(ms, targetMs: 1000 * policy.control.target,
                                 drift: policy.control.drift, following: policy.control.following)
            }
        }
    }

    /// Asks both servers for their timing; the replies come to `recordTimingArrived` and
    /// `playbackTimingArrived`.
    private func requestTiming() {
        lastTimingUpdate = monotonicSeconds()
        // One request per stream on its way at a time: its reply brings the newest timing anyway.
        if let record, !PulseSession.isRunning(timingRequests.record),
           let op = pa_stream_update_timing_info(record, PulseSession.recordTimingCallback, selfPointer) {
            PulseSession.forget(timingRequests.record)
            timingRequests.record = op
        }
        if let playback, !PulseSession.isRunning(timingRequests.playback),
           let op = pa_stream_update_timing_info(playback, PulseSession.playbackTimingCallback, selfPointer) {
            PulseSession.forget(timingRequests.playback)
            timingRequests.playback = op
        }
    }

    private static func isRunning(_ op: OpaquePointer?) -> Bool {
        op.map { pa_operation_get_state($0) == PA_OPERATION_RUNNING } ?? false
    }

    /// Lets go of a request, cancelled first if it is still on its way (its callback then never comes).
    private static func forget(_ op: OpaquePointer?) {
        guard let op else { return }
        if pa_operation_get_state(op) == PA_OPERATION_RUNNING { pa_operation_cancel(op) }
        pa_operation_unref(op)
    }

    // MARK: The block path (audio thread, inside mainloop callbacks)

    /// The record stream has data: take all of it, then process every complete block.
    private func captured() {
        guard let record else { return }
        var data: UnsafeRawPointer? = nil
        var bytes = 0
        let frameBytes = 4 * inChannels
        while pa_stream_peek(record, &data, &bytes) == 0 && bytes > 0 {
            let frames = bytes / frameBytes
            makeRoom(frames)
            let fifo = buffers.fifo.baseAddress! + fifoEnd
            if let data {
                let samples = data.assumingMemoryBound(to: Float.self)
                for i in 0..<frames { fifo[i] = samples[i * inChannels + channel] }
            } else {
                // A hole (the server dropped data): silence in its place.
                for i in 0..<frames { fifo[i] = 0 }
            }
            fifoEnd += frames
            recordFramesTaken += frames
            pa_stream_drop(record)
        }
        lastCapture = monotonicSeconds()
        pump()
    }

    /// Keeps `frames` of room at the FIFO's end: compacts it, or (if the loop fell a second
    /// behind) drops the oldest input.
    private func makeRoom(_ frames: Int) {
        let capacity = buffers.fifo.count
        if fifoEnd + frames <= capacity { return }
        let base = buffers.fifo.baseAddress!
        if fifoCount + frames > capacity {
            fifoStart = fifoEnd - max(0, capacity - frames)
            host.noteOverrun()
        }
        base.update(from: base + fifoStart, count: fifoCount)
        fifoEnd -= fifoStart
        fifoStart = 0
    }

    private func pump() {
        while fillBlock() {
            let out = UnsafeMutableBufferPointer(start: buffers.mono.baseAddress, count: block)
            process(out, input: UnsafePointer(out.baseAddress))
            policy.notePeak(host.chain.lastOutputPeak)
            write(out)
            filled = 0
            observe()
        }
    }

    /// Moves input into the block being assembled; true when it is complete.
    private func fillBlock() -> Bool {
        let mono = buffers.mono.baseAddress!
        let fifo = buffers.fifo.baseAddress!
        if !resampling && policy.control.following { engageResampler() }
        if !resampling {
            let n = min(block - filled, fifoCount)
            if n > 0 {
                (mono + filled).update(from: fifo + fifoStart, count: n)
                remember(fifo + fifoStart, n)
                filled += n
                fifoStart += n
            }
            return filled == block
        }
        while filled < block {
            var data = SRC_DATA(data_in: fifo + fifoStart, data_out: buffers.resampled.baseAddress,
                                input_frames: fifoCount, output_frames: block - filled + discardOutput,
                                input_frames_used: 0, output_frames_gen: 0, end_of_input: 0, src_ratio: policy.control.ratio)
            if src_process(buffers.resampler, &data) != 0 { return false }
            fifoStart += data.input_frames_used
            var produced = data.output_frames_gen
            var from = buffers.resampled.baseAddress!
            let skipped = min(discardOutput, produced)
            discardOutput -= skipped
            produced -= skipped
            from += skipped
            heldInResampler += Double(data.input_frames_used) - Double(produced) / policy.control.ratio
            if produced > 0 {
                (mono + filled).update(from: from, count: produced)
                filled += produced
            }
            if data.output_frames_gen == 0 && data.input_frames_used == 0 { break }
        }
        return filled == block
    }

    private func remember(_ samples: UnsafeMutablePointer<Float>, _ n: Int) {
        let h = buffers.history
        for i in 0..<n {
            h[historyPosition] = samples[i]
            historyPosition = (historyPosition + 1) % h.count
        }
    }

    /// From now on the input goes through the resampler. Its filter is primed with the last
    /// samples that went through directly, and as many output samples are discarded, so the
    /// signal goes on without a seam.
    private func engageResampler() {
        resampling = true
        src_reset(buffers.resampler)
        let h = buffers.history
        let n = h.count
        // Oldest first: history[historyPosition...] then history[..<historyPosition].
        var primed = 0
        for part in [historyPosition..<n, 0..<historyPosition] where !part.isEmpty {
            var data = SRC_DATA(data_in: h.baseAddress! + part.lowerBound, data_out: buffers.resampled.baseAddress,
                                input_frames: part.count, output_frames: buffers.resampled.count,
                                input_frames_used: 0, output_frames_gen: 0, end_of_input: 0, src_ratio: policy.control.ratio)
            _ = src_process(buffers.resampler, &data)
            primed += data.output_frames_gen
        }
        discardOutput = max(0, n - primed)
        heldInResampler = 0
    }

    /// The host's block path over the block in `buffers.mono` (`input`: the captured block in
    /// place, or nil for the demo): its stereo output (the right side in `buffers.right`) when
    /// the output has two channels or more, else its mono one.
    @inline(__always)
    private func process(_ block: UnsafeMutableBufferPointer<Float>, input: UnsafePointer<Float>?) {
        host.process(input: input, left: block,
                     right: outChannels >= 2 ? UnsafeMutableBufferPointer(start: buffers.right.baseAddress, count: block.count) : nil)
    }

    /// Writes the block (and on a stereo output `buffers.right` beside it).
    private func write(_ block: UnsafeMutableBufferPointer<Float>) {
        guard let playback else { return }
        let frames = block.count
        let bytes = frames * outChannels * 4
        var buffer: UnsafeMutableRawPointer? = nil
        var size = bytes
        var lent = pa_stream_begin_write(playback, &buffer, &size) == 0 && buffer != nil && size >= bytes
        if !lent && buffer != nil { pa_stream_cancel_write(playback) }
        if !lent { buffer = UnsafeMutableRawPointer(buffers.output.baseAddress!); lent = false }
        let out = buffer!.assumingMemoryBound(to: Float.self)
        // Written over queued output: the new output fades in over the old (see OutputSplice).
        buffers.splice.rewind(pendingRewind)
        buffers.splice.apply(block)
        if outChannels == 1 {
            out.update(from: block.baseAddress!, count: frames)
        } else {
            let right = UnsafeMutableBufferPointer(start: buffers.right.baseAddress, count: frames)
            buffers.spliceRight.rewind(pendingRewind)
            buffers.spliceRight.apply(right)
            // Left, right, left, … over the sink's channels.
            for i in 0..<frames {
                let l = block[i], r = right[i]
                for c in 0..<outChannels { out[i * outChannels + c] = c & 1 == 0 ? l : r }
            }
        }
        let rewind = Int64(pendingRewind * outChannels * 4)
        playbackFramesWritten += frames - pendingRewind
        pendingRewind = 0
        pa_stream_write(playback, buffer, bytes, nil, -rewind, PA_SEEK_RELATIVE)
    }

    /// Puts `frames` of silence in the playback queue.
    private func writeSilence(_ frames: Int) {
        guard let playback else { return }
        var left = frames
        while left > 0 {
            let n = min(left, PulseBuffers.maximumBlock)
            let bytes = n * outChannels * 4
            var buffer: UnsafeMutableRawPointer? = nil
            var size = bytes
            if pa_stream_begin_write(playback, &buffer, &size) != 0 || buffer == nil || size < bytes {
                if buffer != nil { pa_stream_cancel_write(playback) }
                buffer = UnsafeMutableRawPointer(buffers.output.baseAddress!)
            }
            memset(buffer!, 0, bytes)
            buffers.splice.silence(n)
            if outChannels >= 2 { buffers.spliceRight.silence(n) }
            pa_stream_write(playback, buffer, bytes, nil, 0, PA_SEEK_RELATIVE)
            playbackFramesWritten += n
            left -= n
        }
    }

    /// After a block was written: the latency figure and the margin's control, from the policy.
    private func observe() {
        guard let playback else { return }
        // Until the server reports the stream as playing (an idle sink can take a while to
        // start), its latency reads 0 and says nothing.
        guard let timing = pa_stream_get_timing_info(playback), timing.pointee.playing != 0 else { return }
        var usec: pa_usec_t = 0
        var negative: Int32 = 0
        guard pa_stream_get_latency(playback, &usec, &negative) == 0 else { return }
        let now = monotonicSeconds()
        let playLatency = (negative != 0 ? -1 : 1) * Double(usec) / 1e6
        let waiting = (Double(fifoCount) + (resampling ? heldInResampler : 0)) / rate
        let margin = playLatency - blockSeconds + waiting
        let verdict = policy.observe(.init(margin: margin, waiting: waiting, framesTaken: recordFramesTaken,
                                           framesWritten: playbackFramesWritten, resampling: resampling,
                                           now: now, wallNow: Self.wallClockNow()),
                                     autoLatency: &host.engine.autoLatency)
        if verdict.overrun { host.noteOverrun() }
        if verdict.underrun { host.noteUnderrun() }
        if let raised = verdict.raisedTargetMs { host.engine.noteLatencyRaised(toMs: raised) }
        apply(verdict.action, fromQueue: verdict.fromQueue)
    }

    private static func wallClock(_ tv: timeval) -> Double { Double(tv.tv_sec) + Double(tv.tv_usec) * 1e-6 }

    private static func wallClockNow() -> Double {
        var tv = timeval()
        gettimeofday(&tv, nil)
        return wallClock(tv)
    }

    /// A timing reply for the record stream. Its queue on the server (write index − read
    /// index: all it sent before this reply has reached us, the socket keeps order), what has
    /// arrived but not been taken yet, and what the device still holds (less, for a monitor,
    /// what the monitored sink has yet to play, as `pa_stream_get_time` counts it) lie ahead of
    /// the frames taken so far. Counted from our own end, not the server's absolute indices:
    /// those differ from ours by whatever the server skipped.
    private func recordTimingArrived() {
        guard let record, let timing = pa_stream_get_timing_info(record)?.pointee,
              timing.write_index_corrupt == 0, timing.read_index_corrupt == 0 else { return }
        let bytes = Double(4 * inChannels)
        let queued = Double(timing.write_index - timing.read_index) / bytes
        let arrived = Double(pa_stream_readable_size(record)) / bytes
        let device = (Double(timing.source_usec) - Double(timing.sink_usec)) / 1e6 * rate
        policy.recordTiming(.init(frames: Double(recordFramesTaken) + arrived + queued + device, at: Self.wallClock(timing.timestamp)))
    }

    /// A timing reply for the playback stream: the frame being heard lies behind the frames
    /// written so far by the stream's queue on the server (write index, with libpulse's
    /// corrections for writes made since the request, − read index) and what the sink holds.
    private func playbackTimingArrived() {
        guard let playback, let timing = pa_stream_get_timing_info(playback)?.pointee,
              timing.read_index_corrupt == 0, timing.write_index_corrupt == 0 else { return }
        let bytes = Double(4 * outChannels)
        let queued = Double(timing.write_index - timing.read_index) / bytes
        let heard = PulseLatencyPolicy.ServerPosition(frames: Double(playbackFramesWritten) - queued - Double(timing.sink_usec) / 1e6 * rate,
                                                      at: Self.wallClock(timing.timestamp))
        policy.playbackTiming(heard, now: monotonicSeconds())
    }

    private func apply(_ action: LatencyControl.Action, fromQueue: Bool = false) {
        switch action {
        case .none:
            break
        case .insertSilence(let n):
            writeSilence(n)
        case .dropInput(let n):
            // Waiting input first (it piled up there); what is already queued for playback is
            // written over by the next block, crossfaded.
            let fromInput = fromQueue ? 0 : min(n, fifoCount)
            fifoStart += fromInput
            pendingRewind += n - fromInput
        }
    }

    /// The server says the output ran dry: a dropout (`LatencyControl.outputRanDry`); the next
    /// block's margin tells whether it collapsed, and the end to end once both servers have timed
    /// again whether the gap was kept as latency.
    private func ranDry() {
        policy.outputRanDry(now: monotonicSeconds(), wallNow: Self.wallClockNow())
    }

    /// Demo riff: the output asks for data; keep it filled to the target.
    private func refillDemo() {
        guard let playback else { return }
        let bytes = block * outChannels * 4
        let out = UnsafeMutableBufferPointer(start: buffers.mono.baseAddress, count: block)
        while pa_stream_writable_size(playback) >= bytes {
            process(out, input: nil)
            write(out)
            var usec: pa_usec_t = 0
            var negative: Int32 = 0
            if pa_stream_get_latency(playback, &usec, &negative) == 0 {
                policy.noteLatency(Double(usec) / 1e6)
            }
        }
    }

    /// Why the session must end now, if it must. Atomics and plain fields only.
    @inline(__always)
    private func interruption() -> BackendOutcome? {
        if let outcome = host.interruption() { return outcome }
        if !connection.isConnected { return .deviceGone }
        if connection.inputRemoved || connection.outputRemoved { return .deviceGone }
        return nil
    }

    // MARK: C callbacks (audio thread, from the mainloop's dispatch)

    private static let readCallback: @convention(c) (OpaquePointer?, Int, UnsafeMutableRawPointer?) -> Void = { _, _, userdata in
        Unmanaged<PulseSession>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { $0.captured() }
    }

    private static let writeCallback: @convention(c) (OpaquePointer?, Int, UnsafeMutableRawPointer?) -> Void = { _, _, userdata in
        Unmanaged<PulseSession>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { $0.refillDemo() }
    }

    private static let recordTimingCallback: @convention(c) (OpaquePointer?, Int32, UnsafeMutableRawPointer?) -> Void = { _, success, userdata in
        guard success != 0 else { return }
        Unmanaged<PulseSession>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { $0.recordTimingArrived() }
    }

    private static let playbackTimingCallback: @convention(c) (OpaquePointer?, Int32, UnsafeMutableRawPointer?) -> Void = { _, success, userdata in
        guard success != 0 else { return }
        Unmanaged<PulseSession>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { $0.playbackTimingArrived() }
    }

    private static let underflowCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, userdata in
        Unmanaged<PulseSession>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { $0.ranDry() }
    }
}
