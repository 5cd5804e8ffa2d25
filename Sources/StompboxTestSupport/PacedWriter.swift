import Foundation

/// Feeds a FIFO (a `module-pipe-source`'s) with a mono float32 signal at an exact rate of
/// CLOCK_MONOTONIC time, so the source behaves like a device with its own crystal:
/// `rate: 48_014.4` is a source 300 ppm fast, `47_985.6` one 300 ppm slow. `stall()` stops
/// writing with the FIFO still open (readers of a PulseAudio pipe source then block, as with a
/// hung USB device; on PipeWire 0.3.65 they get silence, see
/// `AudioServerKind.pipeSourceRunsOnWriterClock`); `resume()` goes on; `stop()` closes the FIFO.
///
/// Pacing: at start, `prefill` samples go in at once; after that a chunk of `chunkFrames`
/// (default 4 ms) is written when its last sample is due, i.e. sample `n` (counted from the
/// end of the prefill) is written at `start + n / rate`. The thread sleeps until each chunk is
/// due with `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)`, so lateness never accumulates:
/// a late wake-up writes every chunk already due at once, and the rate over any long span is
/// exact. The thread asks for SCHED_FIFO (priority 10; it is root here) and runs without it
/// when refused (`isRealtime`). Even so, wake-ups on this 2-core VM come 0.1–0.4 ms late
/// (median 0.15 ms), and that lateness wanders by ~50 µs from one second to the next, which
/// alone moved the rate measured over 10 s by up to 4 ppm; so the thread wakes
/// `spinMicroseconds` (default 300) early and spins on the clock until the chunk is due
/// (0.15–0.25 ms of spinning per 4 ms chunk, 4–6 % of one core). Then the measured rate is
/// within 1 ppm. `spinMicroseconds: 0` turns the spinning off.
///
/// Signal: a looping array (`signal[index % signal.count]`) or a generator closure called on
/// the writer thread with the index of the first sample and a buffer to fill (at most 1024
/// samples; keep it cheap, it runs between two deadlines). Indices run on without a gap
/// across a stall: after `resume()` the next chunk carries the next samples, and its schedule
/// restarts from the moment of `resume()` (a new `segment`).
///
/// The FIFO is written non-blocking in chunks of at most PIPE_BUF bytes, so each chunk goes in
/// whole or not at all. When the FIFO is full (nobody reads the source) the chunk is dropped
/// and counted in `droppedSamples`: the clock goes on, as a device's does when the host does
/// not read it. Its indices are skipped, so the signal jumps. Neither server reads a pipe
/// source's FIFO while nobody records the source: the FIFO takes 15 360 samples (320 ms) and
/// then everything is dropped, and whoever starts recording later first gets those 320 ms of
/// old samples. Start the reader (the engine, a `startRecording`) before the writer.
///
/// Measured here (10 s at 48 014.4/s, 2 551 chunks, SCHED_FIFO, into a pipe source with a
/// reader): −0.4 to +1.0 ppm from the asked rate over eight runs on PulseAudio and PipeWire with
/// the spinning, some with both cores busy; −1.6 to +2.5 ppm (once −4.0) without it.
///
/// For analysis every written chunk is kept: its first sample index, size, and the
/// CLOCK_MONOTONIC times at which it was due, handed to `write` and `write` returned.
/// `measuredRate` fits the written sample count against the hand-over times (least squares):
/// that is when the samples became readable, whatever the writer's wake-up lateness.
public final class PacedWriter: @unchecked Sendable {
    public typealias Generator = @Sendable (_ firstSample: Int, _ buffer: UnsafeMutableBufferPointer<Float>) -> Void

    /// One chunk that went into the FIFO.
    public struct Chunk: Sendable {
        /// Index of its first sample in the signal.
        public let firstSample: Int
        public let count: Int
        /// CLOCK_MONOTONIC nanoseconds at which it was due.
        public let due: UInt64
        /// … at which `write` was called (the samples are readable from then on).
        public let time: UInt64
        /// … at which `write` returned: median 22 µs after `time` into a PulseAudio pipe
        /// source, 6 µs into PipeWire's, up to ~40 µs (the write wakes the server's reader).
        public let returned: UInt64
        /// 0 for the first run, +1 after each `resume()`.
        public let segment: Int
        /// Part of the prefill written at start (not paced).
        public let isPrefill: Bool
    }

    public let path: String
    public let rate: Double
    public let chunkFrames: Int
    public let prefillFrames: Int
    private let spinNanoseconds: UInt64
    /// Largest chunk written in one `write` (PIPE_BUF bytes of float32).
    public static let maxChunkFrames = Int(PIPE_BUF) / 4

    private let generator: Generator
    private let fd: Int32
    private let lock = NSLock()
    private let finished = DispatchSemaphore(value: 0)
    private var state = State.running
    private var stallRequested = false
    private var written: [Chunk] = []
    private var dropped = 0
    private var realtime = false
    private var maxLate: UInt64 = 0

    private enum State { case running, stalled, stopping, stopped }

    /// Monotonic clock, nanoseconds.
    public static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Writes `signal` in a loop into `source`'s FIFO.
    public convenience init(source: PipeSource, rate: Double, looping signal: [Float],
                            chunkMilliseconds: Double = 4, prefillMilliseconds: Double = 20, realtime: Bool = true,
                            spinMicroseconds: Double = 300) throws {
        try self.init(fifo: source.fifoPath, rate: rate, looping: signal, chunkMilliseconds: chunkMilliseconds,
                      prefillMilliseconds: prefillMilliseconds, realtime: realtime, spinMicroseconds: spinMicroseconds)
    }

    /// Writes `signal` in a loop into the FIFO at `fifo`.
    public convenience init(fifo: String, rate: Double, looping signal: [Float],
                            chunkMilliseconds: Double = 4, prefillMilliseconds: Double = 20, realtime: Bool = true,
                            spinMicroseconds: Double = 300) throws {
        precondition(!signal.isEmpty)
        try self.init(fifo: fifo, rate: rate, chunkMilliseconds: chunkMilliseconds, prefillMilliseconds: prefillMilliseconds,
                      realtime: realtime, spinMicroseconds: spinMicroseconds) { first, buffer in
            let n = signal.count
            var j = first % n
            for i in 0..<buffer.count {
                buffer[i] = signal[j]
                j += 1
                if j == n { j = 0 }
            }
        }
    }

    /// Opens the FIFO for writing (waiting up to `openTimeout` seconds for it to exist and have
    /// a reader) and starts writing at once.
    public init(fifo: String, rate: Double, chunkMilliseconds: Double = 4, prefillMilliseconds: Double = 20,
                realtime: Bool = true, spinMicroseconds: Double = 300, openTimeout: Double = 5,
                generator: @escaping Generator) throws {
        precondition(rate > 0)
        spinNanoseconds = UInt64(max(0, spinMicroseconds) * 1000)
        path = fifo
        self.rate = rate
        chunkFrames = min(Self.maxChunkFrames, max(1, Int((rate * chunkMilliseconds / 1000).rounded())))
        prefillFrames = max(0, Int((rate * prefillMilliseconds / 1000).rounded()))
        self.generator = generator
        let deadline = Date().addingTimeInterval(openTimeout)
        var opened: Int32 = -1
        while true {
            // Non-blocking: fails with ENXIO rather than waiting while nobody reads the FIFO.
            opened = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            if opened >= 0 { break }
            let e = errno
            guard (e == ENOENT || e == ENXIO || e == EINTR) && Date() < deadline else {
                throw PulseTestError.failed("cannot open \(fifo) for writing: \(String(cString: strerror(e)))")
            }
            usleep(10_000)
        }
        var st = stat()
        guard fstat(opened, &st) == 0, (st.st_mode & S_IFMT) == S_IFIFO else {
            close(opened)
            throw PulseTestError.failed("\(fifo) is not a FIFO")
        }
        fd = opened
        let wantsRealtime = realtime
        // Unretained: the writer runs until `stop()` or deinit (which stops and joins it
        // before the object goes away).
        let thread = Thread { [unowned(unsafe) self] in
            self.run(realtime: wantsRealtime)
            self.finished.signal()
        }
        thread.name = "PacedWriter"
        thread.stackSize = 1 << 20
        thread.start()
    }

    deinit { stop() }

    /// Stops writing; the FIFO stays open (readers of a PulseAudio pipe source block).
    public func stall() {
        lock.lock(); defer { lock.unlock() }
        if state == .running { stallRequested = true }
    }

    /// Writes again, from the next sample, on a schedule that starts now.
    public func resume() {
        lock.lock(); defer { lock.unlock() }
        stallRequested = false
    }

    /// Stops the thread and closes the FIFO (a PulseAudio pipe source then sees no writer).
    public func stop() {
        lock.lock()
        let wasRunning = state == .running || state == .stalled
        if wasRunning { state = .stopping }
        lock.unlock()
        guard wasRunning else { return }
        finished.wait()
        close(fd)
        lock.lock(); state = .stopped; lock.unlock()
    }

    /// True while stalled (after `stall()` has taken effect).
    public var isStalled: Bool { lock.lock(); defer { lock.unlock() }; return state == .stalled }
    /// Whether the writer thread got SCHED_FIFO.
    public var isRealtime: Bool { lock.lock(); defer { lock.unlock() }; return realtime }
    /// Chunks written so far (a copy).
    public var chunks: [Chunk] { lock.lock(); defer { lock.unlock() }; return written }
    /// Samples written so far.
    public var samplesWritten: Int { lock.lock(); defer { lock.unlock() }; return written.reduce(0) { $0 + $1.count } }
    /// Samples dropped because the FIFO was full.
    public var droppedSamples: Int { lock.lock(); defer { lock.unlock() }; return dropped }
    /// Paced chunks handed over more than `seconds` after they were due.
    public func lateChunks(over seconds: Double = 0.001) -> Int {
        chunks.filter { !$0.isPrefill && $0.time > $0.due && Double($0.time - $0.due) / 1e9 > seconds }.count
    }
    /// The latest a paced chunk was written after it was due, in seconds (load on the machine).
    public var maxLateness: Double { lock.lock(); defer { lock.unlock() }; return Double(maxLate) / 1e9 }

    /// The achieved rate in samples per second over the paced chunks of `segment`: the least-
    /// squares slope of samples written against the time each chunk went in. Chunks handed over
    /// more than `ignoringLaterThan` seconds after they were due (a wake-up delayed by load:
    /// 18 ms once here with both cores busy, when the VM's vCPU was not running) are left out
    /// of the fit, since one of them near either end moves a 10 s fit by several ppm; they are
    /// counted by `lateChunks`. Pass `.infinity` to fit every chunk. Nil with fewer than 10 chunks.
    public func measuredRate(segment: Int = 0, ignoringLaterThan limit: Double = 0.001) -> Double? {
        let paced = chunks.filter { $0.segment == segment && !$0.isPrefill }
        guard paced.count >= 10, let t0 = paced.first?.time else { return nil }
        // x: seconds since the first chunk; y: samples written up to the end of each chunk.
        var sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0
        var total = 0.0
        var n = 0.0
        for c in paced {
            total += Double(c.count)
            if c.time > c.due && Double(c.time - c.due) / 1e9 > limit { continue }
            let x = Double(Int64(bitPattern: c.time &- t0)) / 1e9
            sx += x; sy += total; sxx += x * x; sxy += x * total
            n += 1
        }
        guard n >= 10 else { return nil }
        let d = n * sxx - sx * sx
        return d > 0 ? (n * sxy - sx * sy) / d : nil
    }

    /// The time (CLOCK_MONOTONIC ns) at which sample `index` went into the FIFO; nil if it was
    /// not written (not yet, or dropped).
    public func writeTime(ofSample index: Int) -> UInt64? {
        let all = chunks
        var lo = 0, hi = all.count - 1
        while lo <= hi {
            let mid = (lo + hi) / 2
            let c = all[mid]
            if index < c.firstSample { hi = mid - 1 } else if index >= c.firstSample + c.count { lo = mid + 1 } else { return c.time }
        }
        return nil
    }

    // MARK: The writer thread

    private func run(realtime wantsRealtime: Bool) {
        // A FIFO whose reader went away raises SIGPIPE at the writing thread: keep it blocked
        // here (write then fails with EPIPE) and discard it.
        var pipeSet = sigset_t()
        sigemptyset(&pipeSet)
        sigaddset(&pipeSet, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSet, nil)
        if wantsRealtime {
            var param = sched_param()
            param.sched_priority = 10
            let ok = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0
            lock.lock(); realtime = ok; lock.unlock()
        }
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: Self.maxChunkFrames)
        defer { buffer.deallocate() }
        lock.lock()
        written.reserveCapacity(Int(60 * rate) / chunkFrames + 64)
        lock.unlock()

        var next = 0                 // index of the next sample to write
        var segment = 0
        var anchorTime = Self.now()  // when sample `anchorIndex` is due
        // Prefill, at once.
        while next < prefillFrames {
            let n = min(Self.maxChunkFrames, prefillFrames - next)
            write(buffer, first: next, count: n, due: anchorTime, segment: segment, prefill: true)
            next += n
        }
        var anchorIndex = next
        let nanosPerSample = 1e9 / rate

        while true {
            lock.lock()
            if state == .stopping { lock.unlock(); return }
            if stallRequested && state == .running { state = .stalled }
            if !stallRequested && state == .stalled {
                state = .running
                segment += 1
                anchorTime = Self.now()
                anchorIndex = next
            }
            let stalled = state == .stalled
            lock.unlock()
            if stalled {
                sleep(until: Self.now() + 1_000_000)
                continue
            }
            let due = anchorTime + UInt64((Double(next + chunkFrames - anchorIndex) * nanosPerSample).rounded())
            let now = Self.now()
            if now + spinNanoseconds < due {
                // Sleep in steps of at most 10 ms so stop/stall take effect promptly.
                sleep(until: min(due - spinNanoseconds, now + 10_000_000))
                continue
            }
            while Self.now() < due {}   // the last few hundred µs: wake-ups are 0.1–0.4 ms late here
            write(buffer, first: next, count: chunkFrames, due: due, segment: segment, prefill: false)
            next += chunkFrames
        }
    }

    private func write(_ buffer: UnsafeMutableBufferPointer<Float>, first: Int, count: Int, due: UInt64, segment: Int, prefill: Bool) {
        let slice = UnsafeMutableBufferPointer(rebasing: buffer[0..<count])
        generator(first, slice)
        let bytes = count * MemoryLayout<Float>.size
        var result: Int
        var time: UInt64
        repeat {
            time = Self.now()
            result = Foundation.write(fd, slice.baseAddress, bytes)
        } while result < 0 && errno == EINTR
        let returned = Self.now()
        if result < 0 && errno == EPIPE {
            var pipeSet = sigset_t()
            sigemptyset(&pipeSet)
            sigaddset(&pipeSet, SIGPIPE)
            var zero = timespec()
            _ = sigtimedwait(&pipeSet, nil, &zero)
        }
        lock.lock()
        if result == bytes {
            written.append(Chunk(firstSample: first, count: count, due: due, time: time, returned: returned, segment: segment,
                                 isPrefill: prefill))
            if !prefill && time > due { maxLate = max(maxLate, time - due) }
        } else {
            dropped += count   // full (EAGAIN) or no reader (EPIPE); ≤ PIPE_BUF bytes never go in part
        }
        lock.unlock()
    }

    private func sleep(until deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}
