import Foundation
import Synchronization
import StompboxAudio
import StompboxDSP
import StompboxSession
import StompboxTestSupport

/// Sessions: what recording costs the audio thread and the writer, what eight full loop tracks
/// with their undo steps hold in memory, how long a 10-minute session takes to open and save, and
/// what packing a long take into its session costs in time and memory.
enum SessionBench {
    static let rate = 48_000

    static func run() {
        print("Sessions:")
        do {
            try recording()
            looperMemory()
            try tenMinutes()
            try packLongTake()
        } catch {
            print("  session bench failed: \(error)")
        }
    }

    /// The block path's hand-over of DI + wet (blocks of 128, as fast as it goes) and the writer
    /// thread's CPU for it, written to a temporary folder on this machine's disk.
    static func recording() throws {
        let folder = TemporaryFolder("stompbox-bench-record")
        let seconds = 60.0
        let block = 128
        let recorder = try Recorder(folder: folder.file("take.recording"), sampleRate: rate, author: "bench", ringSeconds: 10)
        let riff = Signal.guitarRiff(seconds: 1, sampleRate: Double(rate))
        let left = riff.map { $0 * 0.5 }, right = riff.map { $0 * -0.5 }
        let blocks = Int(seconds * Double(rate)) / block
        var handOver: UInt64 = 0
        let writerStart = threadCPU(named: "stompbox-record")
        let wall = DispatchTime.now().uptimeNanoseconds
        for b in 0..<blocks {
            let at = (b * block) % (rate - block)
            let t0 = DispatchTime.now().uptimeNanoseconds
            riff.withUnsafeBufferPointer { r in
                left.withUnsafeBufferPointer { l in right.withUnsafeBufferPointer { rr in
                    recorder.takeInput(r.baseAddress! + at, frames: block)
                    recorder.takeOutput(left: l.baseAddress! + at, right: rr.baseAddress! + at, frames: block)
                } }
            }
            handOver += DispatchTime.now().uptimeNanoseconds - t0
            // Paced at 20× real time, so the writer keeps up as it must live.
            let due = wall + UInt64(Double(b + 1) * Double(block) / Double(rate) / 20 * 1e9)
            while DispatchTime.now().uptimeNanoseconds < due { usleep(50) }
        }
        // The writer's CPU is read while it still runs (a thread's count goes with it).
        while recorder.frames < blocks * block { usleep(1_000) }
        let writerCPU = threadCPU(named: "stompbox-record") - writerStart
        let status = recorder.finish()
        let frames = Double(blocks * block)
        print("  recording DI + wet: \(format(Double(handOver) / frames, 2)) ns per frame on the audio thread (blocks of \(block)); "
              + "writer thread \(format(writerCPU, 2)) s of CPU for \(format(seconds, 0)) s of audio; "
              + "\(status.droppedFrames) frames dropped; loop tracks cost the audio thread nothing while recording (copied once the take stops)")
    }

    /// CPU seconds the thread whose name starts with `prefix` has used (0 if it is gone).
    static func threadCPU(named prefix: String) -> Double {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return 0 }
        var total = 0.0
        for task in tasks {
            guard let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                  name.hasPrefix(prefix),
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            // utime and stime are fields 14 and 15 of stat (11 and 12 after the name).
            if fields.count > 12, let u = Double(fields[11]), let s = Double(fields[12]) { total += (u + s) / 100 }
        }
        return total
    }

    static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }

    /// Eight tracks of the longest loop (120 s) and 16 overdubs of 10 s on each, measured as the
    /// process's resident memory before the Looper is made and after.
    static func looperMemory() {
        let before = residentBytes()
        let controls = EngineControls()
        let looper = Looper(parameters: controls.parameters, control: controls.looper)
        let block = 1024
        looper.prepare(sampleRate: Double(rate), maximumBlockSize: block)
        let prepared = residentBytes()
        let input = UnsafeMutableBufferPointer<Float>.allocate(capacity: block)
        defer { input.deallocate() }
        var seed: UInt32 = 1
        func play(_ frames: Int, then action: (() -> Void)? = nil) {
            var left = frames
            while left > 0 {
                let n = min(block, left)
                for j in 0..<n {
                    seed = seed &* 1_664_525 &+ 1_013_904_223
                    input[j] = Float(Int32(bitPattern: seed)) / Float(Int32.max) * 0.2
                }
                looper.process(UnsafeMutableBufferPointer(rebasing: input[0..<n]))
                left -= n
            }
            action?()
        }
        let loop = Int(Looper.minimumCapacity) * rate - 2 * rate
        let control = controls.looper
        control.send(.tap, track: 0)
        play(loop) { control.send(.tap, track: 0) }
        play(block)
        for t in 1..<LooperControl.trackCount {
            // Pressed one block after a boundary (within the 80 ms a late press is on it), closed a
            // tenth of a second later: it records one cycle, from that boundary to the next.
            control.send(.tap, track: t)
            play(rate / 10) { control.send(.tap, track: t) }
            play(loop - rate / 10)
        }
        let lengths = (0..<LooperControl.trackCount).map { control.track($0).length }
        let recorded = residentBytes()
        for t in 0..<LooperControl.trackCount {
            for _ in 0..<16 {
                control.send(.tap, track: t)
                play(10 * rate) { control.send(.tap, track: t) }
                play(block)
            }
        }
        let dubbed = residentBytes()
        let steps = (0..<LooperControl.trackCount).map { control.track($0).undoSteps }
        let mb = { (bytes: Int) in format(Double(bytes) / 1_048_576, 0) + " MB" }
        print("  looper memory: reserved at prepare +\(mb(prepared - before)) resident; 8 tracks × \(format(Double(loop) / Double(rate), 0)) s recorded +\(mb(recorded - before)); "
              + "16 overdubs of 10 s on each +\(mb(dubbed - before)) (track lengths \(Set(lengths).map { format(Double($0) / Double(rate), 1) + " s" }.joined(separator: ",")); undo steps kept per track: \(steps.map(String.init).joined(separator: ",")); the pool holds \(Int(Looper.undoPoolSeconds)) s of stereo layers, the oldest go first)"
              + (steps.allSatisfy { $0 == 16 } ? "; target 16 steps on every track: met" : "; TARGET MISSED: 16 steps on every track"))
    }

    /// A 10-minute session: DI (mono) and wet (stereo) and two stereo loop tracks of 8 s,
    /// encoded to FLAC and saved, opened (hashes and headers checked), and saved again.
    static func tenMinutes() throws {
        let folder = TemporaryFolder("stompbox-bench-session")
        let path = folder.file("ten.stompsession")
        let frames = 600 * rate
        var dry = [Float](repeating: 0, count: frames)
        let riff = Signal.guitarRiff(seconds: 4, sampleRate: Double(rate))
        for i in 0..<frames { dry[i] = riff[i % riff.count] * 0.5 }
        var wet = [Float](repeating: 0, count: 2 * frames)
        for i in 0..<frames { wet[2 * i] = dry[i] * 0.9; wet[2 * i + 1] = dry[(i + 240) % frames] * 0.8 }
        let clock = ContinuousClock()
        let session = try Session(path: path, sampleRate: rate, tempoBPM: 120)
        let encode = try clock.measure {
            try session.addTrack(AudioBuffer(samples: dry, sampleRate: rate, channels: 1), kind: .di, author: "bench", mute: true)
            try session.addTrack(AudioBuffer(samples: wet, sampleRate: rate, channels: 2), kind: .wet, author: "bench")
            for k in 0..<2 {
                try session.addTrack(AudioBuffer(samples: Array(wet[(k * 16 * rate)..<((k + 1) * 16 * rate)]), sampleRate: rate, channels: 2),
                                     kind: .loop, author: "bench")
            }
        }
        let save = try clock.measure { try session.save() }
        let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        var opened: Session?
        let privateBefore = anonymousBytes()
        let open = try clock.measure { opened = try Session.open(path) }
        let openPrivate = anonymousBytes() - privateBefore
        let resave = try clock.measure { try opened!.save(to: folder.file("again.stompsession")) }
        let s = { (d: Duration) in format(Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18, 2) + " s" }
        print("  10-minute session (DI + wet + 2 loops, \(format(Double(bytes) / 1_048_576, 0)) MB of FLAC): encode \(s(encode)), save \(s(save)), open \(s(open)) (+\(format(Double(max(0, openPrivate)) / 1_048_576, 0)) MB private: the audio is mapped), save again \(s(resave))")
    }

    /// Heap and other private memory the process holds now (RssAnon): a file mapped from disk
    /// is not counted, so this is what a long take costs when it is packed.
    static func anonymousBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }) else { return 0 }
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    /// A 30-minute take (DI and wet as the Recorder leaves them: float WAV) packed into a new
    /// session as FLAC: the time, and the most private memory the process held meanwhile above
    /// what it held before (sampled every 5 ms), against the take's size as floats.
    static func packLongTake() throws {
        let folder = TemporaryFolder("stompbox-bench-pack")
        let path = folder.file("long.stompsession")
        let recording = SessionRecording.folder(for: path)
        try FileManager.default.createDirectory(atPath: recording, withIntermediateDirectories: true)
        let frames = 1_800 * rate, block = 48_000
        let riff = Signal.guitarRiff(seconds: 4, sampleRate: Double(rate))
        let di = try AudioFileWriter(path: recording + "/" + RecordingFolder.di, format: .wav, sampleRate: rate, channels: 1, samples: .float32, large: true)
        let wet = try AudioFileWriter(path: recording + "/" + RecordingFolder.wet, format: .wav, sampleRate: rate, channels: 2, samples: .float32, large: true)
        var d = [Float](repeating: 0, count: block), w = [Float](repeating: 0, count: 2 * block)
        for b in 0..<(frames / block) {
            for j in 0..<block {
                let x = riff[(b * block + j) % riff.count] * 0.5
                d[j] = x; w[2 * j] = x * 0.9; w[2 * j + 1] = x * -0.8
            }
            try di.write(d, frames: block)
            try wet.write(w, frames: block)
        }
        try di.close()
        try wet.close()
        let manifest = #"{"format":"stompbox-recording","sample_rate":48000,"author":"bench","complete":true}"#
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: recording + "/" + RecordingFolder.manifest))
        let before = anonymousBytes()
        let peak = Atomic<Int>(before)
        let done = Atomic<Bool>(false)
        let sampler = Thread {
            while !done.load(ordering: .relaxed) {
                let now = anonymousBytes()
                if now > peak.load(ordering: .relaxed) { peak.store(now, ordering: .relaxed) }
                usleep(5_000)
            }
        }
        sampler.start()
        let clock = ContinuousClock()
        let took = try clock.measure {
            try SessionRecording.pack(into: path, tempoBPM: 120, board: nil)
        }
        done.store(true, ordering: .relaxed)
        usleep(20_000)
        let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        let mb = { (b: Int) in format(Double(b) / 1_048_576, 0) + " MB" }
        let seconds = Double(took.components.seconds) + Double(took.components.attoseconds) * 1e-18
        print("  packing a 30-minute take (DI + wet, \(mb(frames * 12)) of float WAV) into a session: \(format(seconds, 1)) s, "
              + "\(mb(bytes)) of FLAC; private memory at most +\(mb(max(0, peak.load(ordering: .relaxed) - before))) while packing (\(mb(before)) before)")
    }
}
