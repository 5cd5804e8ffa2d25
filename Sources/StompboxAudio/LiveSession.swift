import CPulse
import CSamplerate
import Foundation
import StompboxDSP

/// Buffers the live loop touches, allocated once by the engine (off the audio thread) for the
/// largest block and kept across sessions and block-size changes.
final class LiveBuffers {
    static let maximumBlock = 1024
    static let maximumChannels = 32
    /// Captured guitar samples not yet processed: a linear FIFO, compacted as it is read.
    let fifo: UnsafeMutableBufferPointer<Float>
    /// The block being assembled and processed (the output's left side, on a stereo output).
    let mono: UnsafeMutableBufferPointer<Float>
    /// A stereo output's right side.
    let right: UnsafeMutableBufferPointer<Float>
    /// Interleaved output when the server cannot lend us its own buffer.
    let output: UnsafeMutableBufferPointer<Float>
    /// The resampler's output before it is copied into `mono`.
    let resampled: UnsafeMutableBufferPointer<Float>
    /// The last input samples that went through unresampled, to prime the resampler with.
    let history: UnsafeMutableBufferPointer<Float>
    /// libsamplerate's variable-ratio converter (SRC_SINC_FASTEST: 97 dB SNR, 80 % bandwidth,
    /// about 20 samples of look-ahead).
    let resampler: OpaquePointer
    /// The output last written, to crossfade over when the loop writes over it (each side).
    let splice = OutputSplice()
    let spliceRight = OutputSplice()

    init() {
        fifo = .allocate(capacity: 1 << 16)
        mono = .allocate(capacity: Self.maximumBlock)
        right = .allocate(capacity: Self.maximumBlock)
        output = .allocate(capacity: Self.maximumBlock * Self.maximumChannels)
        resampled = .allocate(capacity: 2 * Self.maximumBlock)
        history = .allocate(capacity: LiveSession.primingLength)
        for b in [fifo, mono, right, output, resampled, history] { b.initialize(repeating: 0) }
        var error: Int32 = 0
        resampler = src_new(Int32(SRC_SINC_FASTEST), 1, &error)!
    }

    deinit {
        for b in [fifo, mono, right, output, resampled, history] { b.deallocate() }
        src_delete(resampler)
    }
}

/// One opening of the streams on a (source, sink) pair, until something changes.
///
/// Capture-driven: whenever the record stream delivers, every complete block is processed and
/// written to the playback stream at once, so a block waits for nothing but its own samples.
/// `LatencyControl` keeps the playback margin at its target: bit-exact while in and out share a
/// clock, through libsamplerate when the input drifts, and with one quick correction after a
/// dropout. Everything runs on the audio thread inside the connection's mainloop callbacks;
/// the block path allocates nothing and takes no lock of ours.
final class LiveSession {
    enum Outcome {
        case stopped, settingsChanged, deviceGone
        case failed(LiveState, String)
    }

    /// Input samples fed to the resampler ahead of the first new one when it is engaged, so its
    /// filter starts from the signal rather than from zeros.
    static let primingLength = 128

    let engine: LiveEngine
    let connection: PulseConnection
    let settings: LiveSettings
    let generation: Int
    let source: PulseDeviceInfo?
    let sink: PulseDeviceInfo
    /// In and out run on one clock (PipeWire's pulse server, or see `PulseConnection.clockRoot`):
    /// the input is never resampled, so the chain's output reaches the output bit for bit.
    let oneClock: Bool
    let restartTiming: Bool
    let buffers: LiveBuffers
    let chain: Chain

    let rate: Double
    let block: Int
    let blockSeconds: Double
    let inChannels: Int
    let outChannels: Int
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
    private var control: LatencyControl
    /// Frames taken from the record stream and written to the playback stream (with seeks):
    /// the client's ends of the two server queues, counted here rather than read back from
    /// libpulse's interpolated timing.
    private var recordFramesTaken = 0
    private var playbackFramesWritten = 0
    /// The server's end of each queue at the moment its last timing reply was current.
    private var capturedAt: ServerPosition?
    private var heardAt: ServerPosition?
    /// Captured − heard at each playback timing reply: the clocks' drift from frame counts.
    private var clockMeter: ClockDriftMeter
    private var latencySum = 0.0
    private var latencyCount = 0
    private var lastPublish = 0.0
    private var lastTimingUpdate = 0.0
    /// The timing requests still on their way (`requestTiming`): cancelled when the streams
    /// close, so a late reply never calls back into a session that is gone.
    private var timingRequests: (record: OpaquePointer?, playback: OpaquePointer?) = (nil, nil)
    private var lastCapture = 0.0
    private var firstBlockAt: Double?
    /// The end-to-end figure, smoothed (seconds), and, after the server reported the output dry, when
    /// (wall clock) and what it was then: once both streams have timed since, a figure grown
    /// by the gap says the server played silence and kept its place (see `observe`).
    private var lastEndToEnd: Double?
    private var lastEndToEndAt = 0.0
    private var endToEndSince = 0.0
    private var dryReportedAt: Double?
    private var endToEndBeforeDry = 0.0
    private var targetBeforeDry = 0.0
    /// The smoothed end to end when the level was last at its target (kept while the margin is
    /// low, dropped at a correction), and, while the control waits for the frame counts'
    /// verdict on a low margin, when (wall clock) it began waiting and the target then (see
    /// `observe`).
    private var endToEndBeforeLow: Double?
    private var fallAskedAt: Double?
    /// How far a figure strays from the smoothed one, on average over ~1 s (seconds): 0.01–0.15 ms
    /// on a sink's monitor and on PipeWire, about 1 ms from a source that delivers in bursts
    /// (a pipe), where one figure cannot tell a fall.
    private var endToEndJitter = 0.0
    /// Above this `endToEndJitter` (seconds) the frame counts do not judge a low margin.
    static let steadyJitter = 0.0004
    private var targetBeforeFall = 0.0
    /// A dropout can leave part of its gap as latency, less than the margin's bands show (the
    /// scope read 1.4–2.5 ms more after six 15 ms stalls of the loop). So when one is counted,
    /// the smoothed end to end just before it (if the figures were steady) and the target then
    /// are kept, and once the figures are steady again the frame counts take back what the level
    /// stands above it (see `observe`). `restoreSince`: when the spell's last dropout was counted.
    private var endToEndBeforeDropout: Double?
    private var targetBeforeDropout = 0.0
    private var restoreSince: Double?
    private var lastActionAt = -Double.infinity
    private var countedControlDropouts = 0
    private var countedOverruns = 0
    private var countedTrims = 0
    /// The output's peak over the last quarter second or so (decaying block by block).
    private var recentPeak: Float = 0
    private let peakDecay: Float
    private var stalled = false
    private var riffPosition = 0

    /// Corrections in the first seconds after sound starts flowing are the server settling
    /// (an idle sink renders ahead, then catches up): mended, not counted as dropouts.
    static let settleSeconds = 2.5
    /// −70 dBFS: below this a dropout cannot be heard.
    static let audibleLevel: Float = 3.2e-4

    init(engine: LiveEngine, connection: PulseConnection, settings: LiveSettings, generation: Int,
         source: PulseDeviceInfo?, sink: PulseDeviceInfo, oneClock: Bool, restartTiming: Bool, buffers: LiveBuffers,
         targetMs: Double) {
        self.engine = engine
        self.connection = connection
        self.settings = settings
        self.generation = generation
        self.source = source
        self.sink = sink
        self.oneClock = oneClock
        self.restartTiming = restartTiming
        self.buffers = buffers
        chain = engine.chain
        rate = Double(settings.sampleRate)
        block = min(LiveBuffers.maximumBlock, max(1, settings.blockSize))
        blockSeconds = Double(block) / rate
        peakDecay = Float(exp(-blockSeconds / 0.25))
        inChannels = source?.channels ?? 1
        outChannels = min(LiveBuffers.maximumChannels, sink.channels)
        channel = settings.inputChannel - 1
        control = LatencyControl(sampleRate: rate, target: targetMs / 1000, blockSeconds: Double(block) / rate)
        clockMeter = ClockDriftMeter(sampleRate: rate)
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

    private func close() {
        LiveSession.forget(timingRequests.record)
        LiveSession.forget(timingRequests.playback)
        timingRequests = (nil, nil)
        for stream in [record, playback] {
            guard let stream else { continue }
            pa_stream_set_read_callback(stream, nil, nil)
            pa_stream_set_write_callback(stream, nil, nil)
            pa_stream_set_underflow_callback(stream, nil, nil)
            if pa_stream_get_state(stream) == PA_STREAM_READY { pa_stream_disconnect(stream) }
            pa_stream_unref(stream)
        }
        record = nil
        playback = nil
    }

    func play() -> Outcome {
        defer { close() }
        let frameOut = UInt32(4 * outChannels)
        let targetFrames = Int(control.target * rate)
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
        pa_stream_set_underflow_callback(p, LiveSession.underflowCallback, selfPointer)
        if source == nil { pa_stream_set_write_callback(p, LiveSession.writeCallback, selfPointer) }
        if let source {
            // Capture: deliver one block at a time (fragsize), the source's latency set to it.
            var recordAttr = pa_buffer_attr(maxlength: none, tlength: none, prebuf: none, minreq: none,
                                            fragsize: UInt32(block * 4 * inChannels))
            guard let r = newStream("guitar in", source, record: true) else {
                return .failed(.waitingForInput, "cannot record from \(source.name): \(errorText(record: true))")
            }
            record = r
            pa_stream_set_read_callback(r, LiveSession.readCallback, selfPointer)
            if pa_stream_connect_record(r, source.name, &recordAttr, flags) < 0 || !waitReady(r) {
                if let stop = interruption() { return stop }
                return .failed(.waitingForInput, "cannot record from \(source.name): \(errorText(record: true))")
            }
        }
        if pa_stream_connect_playback(p, sink.name, &playAttr, flags, nil, nil) < 0 || !waitReady(p) {
            if let stop = interruption() { return stop }
            return .failed(.waitingForOutput, "cannot play to \(sink.name): \(errorText())")
        }
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
        engine.publishRunning()

        // Half the margin as silence in front; the sink's own buffer holds about the other half.
        // Warm-up measures what it really is and sets it exactly.
        writeSilence(targetFrames / 2)
        if source == nil { refillDemo() }
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
                engine.noteStalledInput(quiet ? source?.name : nil)
            }
        }
        if now - lastPublish >= 0.5 {
            lastPublish = now
            if latencyCount > 0 {
                engine.noteLatency(1000 * latencySum / Double(latencyCount), targetMs: 1000 * control.target,
                                   drift: control.drift, following: control.following)
            }
            latencySum = 0
            latencyCount = 0
        }
    }

    /// Asks both servers for their timing; the replies come to `recordTimingArrived` and
    /// `playbackTimingArrived`.
    private func requestTiming() {
        lastTimingUpdate = monotonicSeconds()
        // One request per stream on its way at a time: its reply brings the newest timing anyway.
        if let record, !LiveSession.isRunning(timingRequests.record),
           let op = pa_stream_update_timing_info(record, LiveSession.recordTimingCallback, selfPointer) {
            LiveSession.forget(timingRequests.record)
            timingRequests.record = op
        }
        if let playback, !LiveSession.isRunning(timingRequests.playback),
           let op = pa_stream_update_timing_info(playback, LiveSession.playbackTimingCallback, selfPointer) {
            LiveSession.forget(timingRequests.playback)
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
            engine.noteOverrun()
        }
        base.update(from: base + fifoStart, count: fifoCount)
        fifoEnd -= fifoStart
        fifoStart = 0
    }

    private func pump() {
        while fillBlock() {
            let out = UnsafeMutableBufferPointer(start: buffers.mono.baseAddress, count: block)
            process(out)
            recentPeak = max(chain.lastOutputPeak, recentPeak * peakDecay)
            write(out)
            filled = 0
            observe()
        }
    }

    /// Moves input into the block being assembled; true when it is complete.
    private func fillBlock() -> Bool {
        let mono = buffers.mono.baseAddress!
        let fifo = buffers.fifo.baseAddress!
        if !resampling && control.following { engageResampler() }
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
                                input_frames_used: 0, output_frames_gen: 0, end_of_input: 0, src_ratio: control.ratio)
            if src_process(buffers.resampler, &data) != 0 { return false }
            fifoStart += data.input_frames_used
            var produced = data.output_frames_gen
            var from = buffers.resampled.baseAddress!
            let skipped = min(discardOutput, produced)
            discardOutput -= skipped
            produced -= skipped
            from += skipped
            heldInResampler += Double(data.input_frames_used) - Double(produced) / control.ratio
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
                                input_frames_used: 0, output_frames_gen: 0, end_of_input: 0, src_ratio: control.ratio)
            _ = src_process(buffers.resampler, &data)
            primed += data.output_frames_gen
        }
        discardOutput = max(0, n - primed)
        heldInResampler = 0
    }

    /// Writes one processed block to every output channel.
    /// The chain over the block in `buffers.mono`: its stereo output (the right side in
    /// `buffers.right`) when the output has two channels or more, else its mono one.
    @inline(__always)
    private func process(_ block: UnsafeMutableBufferPointer<Float>) {
        if outChannels >= 2 {
            chain.process(left: block, right: UnsafeMutableBufferPointer(start: buffers.right.baseAddress, count: block.count))
        } else {
            chain.process(block)
        }
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
            let n = min(left, LiveBuffers.maximumBlock)
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

    /// After a block was written: the latency figure and the margin's control.
    private func observe() {
        guard let playback else { return }
        // Until the server reports the stream as playing (an idle sink can take a while to
        // start), its latency reads 0 and says nothing.
        guard let timing = pa_stream_get_timing_info(playback), timing.pointee.playing != 0 else { return }
        var usec: pa_usec_t = 0
        var negative: Int32 = 0
        guard pa_stream_get_latency(playback, &usec, &negative) == 0 else { return }
        let now = monotonicSeconds()
        if firstBlockAt == nil { firstBlockAt = now }
        let playLatency = (negative != 0 ? -1 : 1) * Double(usec) / 1e6
        let waiting = (Double(fifoCount) + (resampling ? heldInResampler : 0)) / rate
        let margin = playLatency - blockSeconds + waiting
        let settled = now - firstBlockAt! > LiveSession.settleSeconds
        let e2e = endToEndLatency(waiting: waiting)
        if settled, let e2e {
            latencySum += e2e
            latencyCount += 1
        }
        if !control.starving && !control.awaitingFallVerdict && control.atTarget, let e = lastEndToEnd {
            endToEndBeforeLow = e
        }
        control.fallsCounted = endToEndBeforeLow != nil && endToEndJitter < Self.steadyJitter
        var action = control.observe(margin: margin, at: now)
        if control.awaitingFallVerdict {
            if fallAskedAt == nil {
                fallAskedAt = Self.wallClockNow()
                targetBeforeFall = control.target
            } else if let asked = fallAskedAt, let before = endToEndBeforeLow, let e2e, let c = capturedAt,
                      let h = heardAt, c.at > asked, h.at > asked {
                // Both servers have timed since the margin stayed low: the end to end in frame
                // counts says whether the level fell, and by how much.
                action = combine(action, control.levelFell(before + (control.target - targetBeforeFall) - e2e, at: now))
            }
        }
        if !control.awaitingFallVerdict { fallAskedAt = nil }
        if action == .none, !control.starving, let since = dryReportedAt, let e2e, let c = capturedAt, let h = heardAt,
           c.at > since, h.at > since {
            // Both servers have reported since the output ran dry. A gap the server kept as
            // latency (prebuf: it stops its read index while dry) grew the end to end by its
            // length in frame counts, exactly, net of what has been corrected since; nothing
            // heard (the sink rewound in time) leaves it where it was. A raised target is meant.
            dryReportedAt = nil
            let grown = e2e - endToEndBeforeDry - (control.target - targetBeforeDry)
            if grown > LatencyControl.countsJitter {
                action = control.gapHeld(grown, at: now)
            }
        }
        if let e2e {
            // Smoothed over ~0.2 s: a single figure can be off by a ms or two while one stream's
            // reply has come in and the other's not yet.
            if let last = lastEndToEnd, lastEndToEndAt > 0 {
                let dt = now - lastEndToEndAt
                endToEndJitter += (1 - exp(-dt / 1.0)) * (abs(e2e - last) - endToEndJitter)
                lastEndToEnd = last + (1 - exp(-dt / 0.2)) * (e2e - last)
            } else {
                lastEndToEnd = e2e
                endToEndSince = now
            }
            lastEndToEndAt = now
        }
        if control.dropouts != countedControlDropouts {
            // A dropout may have stepped the frame counts (a queue that ran empty stopped).
            clockMeter.clear()
            control.clockDrift = nil
            let overran = control.overruns != countedOverruns
            countedControlDropouts = control.dropouts
            if restoreSince == nil {
                endToEndBeforeDropout = endToEndJitter < Self.steadyJitter ? lastEndToEnd : nil
                targetBeforeDropout = control.target
            }
            restoreSince = now
            countedOverruns = control.overruns
            // A gap in silence is heard by nobody (an idle guitar, a device that only just
            // woke up): mended, but neither counted nor a reason to raise the latency.
            // Automatic latency answers gaps in the output (underruns): dropping input that piled
            // up is a glitch too, but a larger margin would not have prevented it.
            if settled && recentPeak > LiveSession.audibleLevel {
                if overran { engine.noteOverrun() } else { engine.noteUnderrun() }
                if !overran, let raised = engine.autoLatencyDropout(at: now) {
                    action = combine(action, control.retarget(raised / 1000))
                }
            }
        }
        if let since = restoreSince, resampling || now - since > 10 { restoreSince = nil }
        if action == .none, let since = restoreSince, now - since >= 1, now - lastActionAt >= 0.5,
           !control.starving, !control.awaitingFallVerdict, dryReportedAt == nil,
           endToEndJitter < Self.steadyJitter, let e = lastEndToEnd, lastEndToEndAt - endToEndSince >= 0.5 {
            // A second after the spell's last dropout, the figures steady for half a second since
            // the last correction: a level above where it stood before the spell (net of a
            // raised target) is brought back, exactly. One clock only: while the input's clock
            // is followed, the resampler holds the level (and a spell not settled in 10 s is
            // let go).
            restoreSince = nil
            if let before = endToEndBeforeDropout {
                let above = e - before - (control.target - targetBeforeDropout)
                if above > LatencyControl.countsJitter { action = control.gapHeld(above, at: now) }
            }
        }
        // A figure from before a correction is no yardstick for the next dry report or fall.
        if action != .none {
            lastActionAt = now
            lastEndToEnd = nil
            endToEndBeforeLow = nil
        }
        // A trim takes back queued output (the level settled high in the server's queue, the
        // input is not waiting): written over under a crossfade, nothing skipped in the input.
        let trimmed = control.trims != countedTrims
        countedTrims = control.trims
        apply(action, fromQueue: trimmed)
    }

    /// Where a server queue's far end stood (frames, in the stream's own count) at the wall-clock
    /// time a timing reply was current.
    struct ServerPosition {
        var frames: Double
        var at: Double
    }

    /// End to end for the block just written (seconds): from the moment the newest waiting
    /// input sample was captured until that sample is heard, or nil before both streams
    /// have reported their timing.
    ///
    /// Computed from the two servers' raw timing replies, not from `pa_stream_get_latency`:
    /// libpulse interpolates each stream's clock on its own and never lets it run backwards,
    /// which is harmless where the server's figures are current (PulseAudio) but biases them
    /// where they are as old as the last graph cycle (PipeWire's pulse server, whose read and
    /// write indices move a quantum at a time): 0.3–2.4 ms too high, measured on the scope.
    /// Here each reply gives the server's end of its queue at the reply's own timestamp; the
    /// two ends are brought to one time at the nominal rate, so the time of the observation
    /// drops out, and a reply's age on PipeWire counts the same on both sides and cancels.
    ///   latency = (captured − processed) + (written − heard), each in its stream's frames
    private func endToEndLatency(waiting: Double) -> Double? {
        guard let captured = capturedAt, let heard = heardAt else { return nil }
        let capturedNow = captured.frames + (heard.at - captured.at) * rate
        let processed = Double(recordFramesTaken) - waiting * rate
        return (capturedNow - processed + Double(playbackFramesWritten) - heard.frames) / rate
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
        capturedAt = ServerPosition(frames: Double(recordFramesTaken) + arrived + queued + device, at: Self.wallClock(timing.timestamp))
    }

    /// A timing reply for the playback stream: the frame being heard lies behind the frames
    /// written so far by the stream's queue on the server (write index, with libpulse's
    /// corrections for writes made since the request, − read index) and what the sink holds.
    private func playbackTimingArrived() {
        guard let playback, let timing = pa_stream_get_timing_info(playback)?.pointee,
              timing.read_index_corrupt == 0, timing.write_index_corrupt == 0 else { return }
        let bytes = Double(4 * outChannels)
        let queued = Double(timing.write_index - timing.read_index) / bytes
        let heard = ServerPosition(frames: Double(playbackFramesWritten) - queued - Double(timing.sink_usec) / 1e6 * rate,
                                   at: Self.wallClock(timing.timestamp))
        heardAt = heard
        // From when the streams have settled: opening them steps the counts by a few ms. Not
        // on one clock: PipeWire brings every device to one itself, and a card's (or a sink's
        // monitor and filters') in and out share one; a busy host can step the counts so that
        // they seem to slope (seen once: "-4 ppm" followed at 128/20 with 44 stalls of the host
        // in 30 s, and that take was no longer bit-exact).
        if !oneClock, let captured = capturedAt, let first = firstBlockAt,
           monotonicSeconds() - first > LiveSession.settleSeconds {
            clockMeter.add(offset: captured.frames + (heard.at - captured.at) * rate - heard.frames, at: heard.at)
            control.clockDrift = clockMeter.drift
        }
    }

    private func combine(_ a: LatencyControl.Action, _ b: LatencyControl.Action) -> LatencyControl.Action {
        func frames(_ x: LatencyControl.Action) -> Int {
            switch x {
            case .none: 0
            case .insertSilence(let n): n
            case .dropInput(let n): -n
            }
        }
        let n = frames(a) + frames(b)
        return n > 0 ? .insertSilence(n) : n < 0 ? .dropInput(-n) : .none
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
        if firstBlockAt != nil { control.outputRanDry(at: monotonicSeconds()) }
        if dryReportedAt == nil, let before = lastEndToEnd, lastEndToEndAt - endToEndSince >= 0.2 {
            dryReportedAt = Self.wallClockNow()
            endToEndBeforeDry = before
            targetBeforeDry = control.target
            // The verdict waits for the regular replies (within 0.2 s): an extra timing request
            // resets libpulse's interpolation, and the margin read through it dipped far enough
            // (6 of 8 ms) for silence to go in.
        }
        clockMeter.clear()
        control.clockDrift = nil
    }

    /// Demo riff: the output asks for data; keep it filled to the target.
    private func refillDemo() {
        guard let playback else { return }
        let bytes = block * outChannels * 4
        let out = UnsafeMutableBufferPointer(start: buffers.mono.baseAddress, count: block)
        while pa_stream_writable_size(playback) >= bytes {
            if let riff = engine.demoRiff, riff.count > 0 {
                for i in 0..<block {
                    out[i] = riff[riffPosition]
                    riffPosition += 1
                    if riffPosition == riff.count { riffPosition = 0 }
                }
            } else {
                for i in 0..<block { out[i] = 0 }
            }
            process(out)
            write(out)
            var usec: pa_usec_t = 0
            var negative: Int32 = 0
            if pa_stream_get_latency(playback, &usec, &negative) == 0 {
                latencySum += Double(usec) / 1e6
                latencyCount += 1
            }
        }
    }

    /// Why the session must end now, if it must. Atomics and plain fields only.
    @inline(__always)
    private func interruption() -> Outcome? {
        if engine.isStopRequested { return .stopped }
        if engine.currentGeneration != generation { return .settingsChanged }
        if !connection.isConnected { return .deviceGone }
        if connection.inputRemoved || connection.outputRemoved { return .deviceGone }
        return nil
    }

    // MARK: C callbacks (audio thread, from the mainloop's dispatch)

    private static let readCallback: @convention(c) (OpaquePointer?, Int, UnsafeMutableRawPointer?) -> Void = { _, _, userdata in
        Unmanaged<LiveSession>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { $0.captured() }
    }

    private static let writeCallback: @convention(c) (OpaquePointer?, Int, UnsafeMutableRawPointer?) -> Void = { _, _, userdata in
        Unmanaged<LiveSession>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { $0.refillDemo() }
    }

    private static let recordTimingCallback: @convention(c) (OpaquePointer?, Int32, UnsafeMutableRawPointer?) -> Void = { _, success, userdata in
        guard success != 0 else { return }
        Unmanaged<LiveSession>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { $0.recordTimingArrived() }
    }

    private static let playbackTimingCallback: @convention(c) (OpaquePointer?, Int32, UnsafeMutableRawPointer?) -> Void = { _, success, userdata in
        guard success != 0 else { return }
        Unmanaged<LiveSession>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { $0.playbackTimingArrived() }
    }

    private static let underflowCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, userdata in
        Unmanaged<LiveSession>.fromOpaque(userdata!)._withUnsafeGuaranteedRef { $0.ranDry() }
    }
}
