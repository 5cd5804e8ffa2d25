// `make bench`: the full chain, every pedal on, on 60 s of a generated guitar riff at 48 kHz in
// blocks of 128 — ns per sample, real-time factor, heap allocations inside `chain.process`
// (must be 0), and the same chain in sox for comparison.
//
// Options: --seconds S (60), --runs N (5), --no-sox, --no-latency, --allocations-only (no timing, no sox:
// what the test suite runs), --latency-seconds S (30: per latency setting), --latency-setting BLOCK/MS
// (repeatable: measure these instead of the default and the low-latency one). Exits 1 if `chain.process` allocated or allocations cannot be counted.
// --lv2-allocations URI… counts the allocations in LV2Pedal.process instead (see LV2Allocations.swift).
// --window-only measures only the window (WindowBench.swift: first frame, idle GUI CPU, memory);
// --no-window leaves it out. --sessions-only measures only sessions (SessionBench.swift: recording, the
// loop tracks' memory, a 10-minute session); --no-sessions leaves them out. --neural-only measures only
// the neural amp models (NeuralBench.swift; with NAM_BENCHMODEL set, beside NeuralAmpModelerCore);
// --neural-model TEXT only those whose name contains TEXT; --no-neural leaves them out. Exits 1 too
// if a neural network's process allocated. --package-only measures only the package's build against
// the native one (PackageBench.swift); --no-package leaves it out; --native PATH compares with that
// `stompbox` rather than the one beside this bench.

import CAudioShim
import Foundation
import MallocInterposerSwift
import StompboxAudio
import StompboxDSP
import StompboxTestSupport

let sampleRate = 48_000.0
let blockSize = 128
/// Every pedal on, the cabinet with 2048 taps (issue 12: it was 40 for the seven pedals before the gate and the cabinet).
let targetNanosecondsPerSample = 60.0

struct Options {
    var seconds = 60.0
    var runs = 5
    var sox = true
    var allocationsOnly = false
    var latency = true
    var latencySeconds = 30.0
    var latencySettings: [LatencyBench.Setting] = []
    var latencyOnly = false
    var servers: [AudioServerKind] = []
    var driftSeconds = 60.0
    var window = true
    var windowOnly = false
    var jack = true
    var jackOnly = false
    var jackSeconds = 20.0
    var tuner = true
    var tunerOnly = false
    var sessions = true
    var sessionsOnly = false
    var neural = true
    var neuralOnly = false
    var neuralModel: String?
    var package = true
    var packageOnly = false
    var native: String?

    init(_ arguments: [String]) {
        var i = 1
        func value() -> String {
            i += 1
            guard i < arguments.count else { fatal("\(arguments[i - 1]) needs a value") }
            return arguments[i]
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--seconds": seconds = Double(value()) ?? { fatal("--seconds takes a number") }()
            case "--runs": runs = max(1, Int(value()) ?? { fatal("--runs takes a whole number") }())
            case "--no-sox": sox = false
            case "--no-latency": latency = false
            case "--latency-only": latencyOnly = true
            case "--no-window": window = false
            case "--window-only": windowOnly = true
            case "--no-jack": jack = false
            case "--jack-only": jackOnly = true
            case "--tuner-only": tunerOnly = true
            case "--no-tuner": tuner = false
            case "--sessions-only": sessionsOnly = true
            case "--no-sessions": sessions = false
            case "--neural-only": neuralOnly = true
            case "--no-neural": neural = false
            case "--neural-model": neuralModel = value(); neuralOnly = true
            case "--no-package": package = false
            case "--package-only": packageOnly = true
            case "--native": native = value()
            case "--jack-seconds": jackSeconds = Double(value()) ?? { fatal("--jack-seconds takes a number") }()
            case "--server": servers.append(AudioServerKind(rawValue: value()) ?? { fatal("--server takes pulseaudio or pipewire") }())
            case "--drift-seconds": driftSeconds = Double(value()) ?? { fatal("--drift-seconds takes a number") }()
            case "--allocations-only": allocationsOnly = true; sox = false; latency = false
            case "--lv2-allocations": return // the rest are plugin URIs (see LV2Allocations)
            case "--latency-seconds": latencySeconds = Double(value()) ?? { fatal("--latency-seconds takes a number") }()
            case "--latency-setting":
                let parts = value().split(separator: "/")
                guard parts.count == 2, let block = Int(parts[0]), let ms = Double(parts[1]) else { fatal("--latency-setting takes BLOCK/MS, e.g. 128/10") }
                latencySettings.append(LatencyBench.Setting(name: "\(block)/\(parts[1])", block: block, latencyMs: ms))
            default: fatal("unknown option \(arguments[i]) (use --seconds S, --runs N, --no-sox, --no-latency, --allocations-only, --latency-seconds S, --latency-setting BLOCK/MS, --window-only, --no-window, --jack-only, --no-jack, --jack-seconds S, --tuner-only, --no-tuner, --sessions-only, --no-sessions, --neural-only, --neural-model TEXT, --no-neural, --package-only, --no-package, --native PATH)")
            }
            i += 1
        }
    }
}

func fatal(_ message: String) -> Never {
    FileHandle.standardError.write(Data("StompboxBench: \(message)\n".utf8))
    exit(2)
}

// MARK: Making allocations countable

nonisolated(unsafe) var probe: UnsafeMutableRawPointer?

/// True when the interposer sees this process's mallocs (checked with one deliberate allocation).
func interposerCounts() -> Bool {
    MallocInterposerSwift.reset()
    MallocInterposerSwift.hook()
    probe = malloc(64)   // kept in a global, so the optimiser cannot drop the pair
    MallocInterposerSwift.unhook()
    free(probe)
    let seen = MallocInterposerSwift.getStatistics().mallocCount
    MallocInterposerSwift.reset()
    return seen > 0
}

/// On Linux the interposer must be preloaded; if it is not, run this program again with
/// LD_PRELOAD naming the library built beside it.
func ensureInterposerIsLoaded() {
    if interposerCounts() { return }
    let env = ProcessInfo.processInfo.environment
    let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    let library = exe.deletingLastPathComponent().appendingPathComponent("libMallocInterposerSwift.so").path
    guard env["STOMPBOX_BENCH_PRELOADED"] == nil, FileManager.default.fileExists(atPath: library) else {
        FileHandle.standardError.write(Data("""
            StompboxBench: cannot count heap allocations: the malloc interposer is not active \
            (run with LD_PRELOAD=\(library)).\n
            """.utf8))
        exit(1)
    }
    setenv("LD_PRELOAD", [library, env["LD_PRELOAD"]].compactMap { $0 }.joined(separator: ":"), 1)
    setenv("STOMPBOX_BENCH_PRELOADED", "1", 1)
    let argv = ([exe.path] + CommandLine.arguments.dropFirst()).map { strdup($0) } + [nil]
    execv(exe.path, argv)
    fatal("could not restart with LD_PRELOAD: \(String(cString: strerror(errno)))")
}

// MARK: The chain with every pedal on

/// The cabinet's response in the bench: the bundled 4×12 cut (or, beyond its 4096 taps, carried
/// on by a decaying noise tail) to `taps` taps, for every cab.ir choice.
struct BenchCabinet: CabinetSource {
    let taps: Int
    func impulseResponse(cabinet id: String, sampleRate: Double) throws -> ImpulseResponse {
        var h = try TestCabinets.files.impulseResponse(cabinet: Cabinet.bundled[2], sampleRate: sampleRate).channels[0]
        if h.count < taps {
            let tail = Signal.noise(length: taps - h.count, amplitude: 0.01, seed: 11)
            h += tail.enumerated().map { i, v in v * Float(exp(-Double(i) / Double(taps) * 6)) }
        }
        return ImpulseResponse(channels: [Array(h.prefix(taps))], sampleRate: sampleRate)
    }
    func impulseResponse(file path: String, sampleRate: Double) throws -> ImpulseResponse {
        try TestCabinets.files.impulseResponse(file: path, sampleRate: sampleRate)
    }
}
/// The full chain is measured with a 2048-tap cabinet (the issue's goal), and once with a 1 s one.
Cabinet.install(BenchCabinet(taps: 2_048))

/// Every pedal on, knobs off their defaults where a default might let a pedal take a short cut.
func makeChain() -> Chain {
    let chain = Chain()
    let p = chain.parameters
    for kind in PedalKind.builtIn { p.set(kind.enabledParameter, 1) }
    p.set(.overdriveDrive, 0.6)
    p.set(.overdriveTone, 0.6)
    for (band, gain) in zip(Parameter.eqBands, [3, -2, 1.5, 2, -3, 1] as [Float]) { p.set(band, gain) }
    p.set(.flangerRate, 0.4)
    p.set(.tremoloRate, 5)
    p.set(.tremoloShape, 0)
    p.set(.delayTime, 350)
    p.set(.delayFeedback, 0.4)
    p.set(.reverbSize, 0.6)
    p.set(.reverbMix, 0.3)
    p.set(.looperLevel, 0.8)
    chain.prepare(sampleRate: sampleRate, maximumBlockSize: blockSize)
    return chain
}

/// The looper's footwork: record 8 s on track 1; a second track recorded in sync (it starts on
/// the next cycle boundary and closes on one), then overdubbed, played, overdubbed, undone,
/// redone, and played on.
let looperTimeline: [(seconds: Double, action: LooperAction)] = [
    (1, .tap), (9, .tap), (10, .recordNext), (12, .tap), (17, .tap), (25, .tap), (33, .tap), (41, .tap), (45, .undo),
    (47, .redo), (49, .tap), (53, .tap),
]

/// Looper actions by block index (scaled to the render's length when it is shorter than 60 s).
func looperActions(seconds: Double) -> [Int: LooperAction] {
    var byBlock: [Int: LooperAction] = [:]
    let scale = min(1, seconds / 60)
    for (t, action) in looperTimeline {
        byBlock[Int(t * scale * sampleRate) / blockSize] = action
    }
    return byBlock
}

/// The board rearranged every 2 s (reversed, the Looper taken off and put back first), so the
/// allocation count covers the audio thread's side of a board handover too.
func boardChanges(seconds: Double) -> [Int: [PedalKind]] {
    let arrangements: [[PedalKind]] = [
        PedalKind.builtIn.reversed(),
        PedalKind.builtIn.filter { $0 != .looper },
        [.looper] + PedalKind.builtIn.filter { $0 != .looper },
        PedalKind.builtIn,
    ]
    var byBlock: [Int: [PedalKind]] = [:]
    var t = 2.0, i = 0
    while t < seconds {
        byBlock[Int(t * sampleRate) / blockSize] = arrangements[i % arrangements.count]
        t += 2
        i += 1
    }
    return byBlock
}

/// The right side of the stereo output (the product plays the board in stereo).
nonisolated(unsafe) let rightSide = UnsafeMutableBufferPointer<Float>.allocate(capacity: blockSize)

/// One pass over `signal` in blocks, its stereo output's left side in place. With
/// `countAllocations`, only `chain.process` runs with the interposer counting. Returns the
/// elapsed seconds.
func run(_ chain: Chain, _ signal: UnsafeMutableBufferPointer<Float>, actions: [Int: LooperAction],
         boards: [Int: [PedalKind]] = [:], countAllocations: Bool) -> Double {
    let blocks = signal.count / blockSize
    let base = signal.baseAddress!
    let right = rightSide
    let start = DispatchTime.now().uptimeNanoseconds
    for b in 0..<blocks {
        if let action = actions[b] { chain.controls.looper.send(action) }
        // As the window does: the board is rebuilt off the audio thread; only its handover counts.
        if let board = boards[b] {
            chain.collectRetiredBoard()
            try! chain.setBoard(board)
        }
        let block = UnsafeMutableBufferPointer(start: base + b * blockSize, count: blockSize)
        if countAllocations {
            MallocInterposerSwift.hook()
            chain.process(left: block, right: right)
            MallocInterposerSwift.unhook()
        } else {
            chain.process(left: block, right: right)
        }
    }
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

// MARK: sox

/// Where sox is installed, or nil.
let soxPath = ["/usr/bin/sox", "/usr/local/bin/sox"].first(where: FileManager.default.isExecutableFile)

/// Runs `program` once, as it would run from a shell (without our malloc interposer preloaded,
/// its output discarded): the wall-clock seconds it took and its CPU seconds (user + system,
/// as `time` counts them), or nil (with one line saying so) when it cannot start or fails.
func runChild(_ program: String, _ arguments: [String], environment extra: [String: String] = [:]) -> (wall: Double, cpu: Double)? {
    func childrenCPU() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    var environment = ProcessInfo.processInfo.environment
    environment["LD_PRELOAD"] = nil
    environment.merge(extra) { $1 }
    process.environment = environment
    let cpu = childrenCPU(), start = DispatchTime.now().uptimeNanoseconds
    do { try process.run() } catch { return nil }
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        FileHandle.standardError.write(Data("StompboxBench: \(program) \(arguments.joined(separator: " ")) failed\n".utf8))
        return nil
    }
    return (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, childrenCPU() - cpu)
}

/// Seconds sox takes for `effects` on `input` (best of `runs`), or nil when sox is missing.
func timeSox(input: String, output: String, effects: [String], runs: Int) -> Double? {
    guard let soxPath else { return nil }
    var best = Double.infinity
    for _ in 0..<runs {
        guard let run = runChild(soxPath, ["-q", input, output] + effects) else { return nil }
        best = min(best, run.wall)
    }
    return best
}

/// The same pedals in sox, in the same order and close to the same settings.
let soxChain: [String] = [
    "overdrive", "20", "20",
    "equalizer", "100", "1q", "3", "equalizer", "250", "1q", "-2", "equalizer", "630", "1q", "1.5",
    "equalizer", "1600", "1q", "2", "equalizer", "4000", "1q", "-3", "equalizer", "10000", "1q", "1",
    "flanger",
    "tremolo", "5", "100",
    "echos", "0.8", "0.7", "350", "0.4",
    "reverb", "60",
]

func writeWAV(_ samples: [Float], to path: String) {
    do {
        try AudioFile.write(AudioBuffer(samples: samples, sampleRate: Int(sampleRate), channels: 1), to: path)
    } catch {
        fatal("cannot write the input for sox: \(error)")
    }
}

func fatalAllocation(_ count: Int) -> Never {
    FileHandle.standardError.write(Data("StompboxBench: FAIL: a neural network's process allocated (\(count) times); the audio thread must not allocate\n".utf8))
    exit(1)
}

func format(_ value: Double, _ places: Int = 1) -> String { String(format: "%.\(places)f", value) }

// MARK: Main

let options = Options(CommandLine.arguments)
if options.windowOnly {
    do { try WindowBench.run(runs: 3) } catch { fatal("window bench: \(error)") }
    exit(0)
}
if options.tunerOnly {
    TunerBench.run()
    exit(0)
}
if options.sessionsOnly {
    SessionBench.run()
    exit(0)
}
if options.packageOnly {
    PackageBench.run(riff: Signal.guitarRiff(seconds: options.seconds, sampleRate: sampleRate), runs: max(options.runs, 7), native: options.native)
    exit(0)
}
if options.jackOnly {
    do { try JackBench.run(periods: [64, 128], seconds: options.jackSeconds) } catch { fatal("JACK bench: \(error)") }
    exit(0)
}
if options.latencyOnly {
    do {
        try LatencyBench.run(options.latencySettings.isEmpty ? LatencyBench.settings : options.latencySettings,
                             seconds: options.latencySeconds, driftSeconds: options.driftSeconds,
                             servers: options.servers.isEmpty ? AudioServerKind.allCases : options.servers)
    } catch {
        fatal("latency bench: \(error)")
    }
    exit(0)
}
ensureInterposerIsLoaded()
// As the live audio thread does: denormals flushed to zero.
stompbox_enable_flush_to_zero()
if options.neuralOnly {
    let allocated = NeuralBench.run(runs: options.runs, only: options.neuralModel)
    if allocated != 0 { fatalAllocation(allocated) }
    exit(0)
}
if let at = CommandLine.arguments.firstIndex(of: "--lv2-allocations") {
    LV2Allocations.run(Array(CommandLine.arguments[(at + 1)...]))
}

let frames = Int(options.seconds * sampleRate) / blockSize * blockSize
guard frames > 0 else { fatal("--seconds is too short for one block") }
let riff = Signal.guitarRiff(seconds: Double(frames) / sampleRate, sampleRate: sampleRate)
let actions = looperActions(seconds: options.seconds)
let work = UnsafeMutableBufferPointer<Float>.allocate(capacity: frames)
defer { work.deallocate() }

print("Stompbox bench: \(format(Double(frames) / sampleRate)) s of guitar at \(Int(sampleRate)) Hz, blocks of \(blockSize), stereo out, every pedal on, looper recording/playing/overdubbing")

// Allocations: full passes with counting on around each `chain.process` call only. The first
// pass on a fresh process also counts the Swift runtime's one-time set-up of type metadata,
// which unspecialised debug code does lazily on first use; the second pass, on a new chain, is
// the steady state every block must meet. Release builds must show 0 in both.
/// A recorder's tap on the loop tracks is called inside `chain.process`: counted with it set.
final class SilentTap: LoopTrackTap {
    var frames = 0
    func loopTrackBlock(track: Int, position: Int, length: Int, cycleFrame: Int,
                        left: UnsafePointer<Float>, right: UnsafePointer<Float>, frames: Int) { self.frames += frames }
}
let silentTap = SilentTap()
/// A 64-tap Linear model at 44.1 kHz for the Amp Model pedal while allocations are counted: its
/// first block takes it in and crossfades to it, and every block resamples in and out.
let benchModel: String = {
    let path = NSTemporaryDirectory() + "/stompbox-bench-\(getpid()).nam"
    let taps = (0..<64).map { Float(exp(-Double($0) / 8)) * 0.2 }
    try? Data(TestModels.linear(taps, sampleRate: 44_100).utf8).write(to: URL(fileURLWithPath: path))
    return path
}()
func countAllocations() -> (count: Int, bytes: Int) {
    let chain = makeChain()
    do { try (chain.effect(.neural) as? NeuralAmp)?.load(file: benchModel) } catch { fatal("the bench model: \(error)") }
    chain.controls.looper.setTap(silentTap)
    defer { chain.controls.looper.setTap(nil) }
    _ = work.update(fromContentsOf: riff)
    MallocInterposerSwift.reset()
    _ = run(chain, work, actions: actions, boards: boardChanges(seconds: options.seconds), countAllocations: true)
    let stats = MallocInterposerSwift.getStatistics()
    return (stats.mallocCount, stats.mallocBytesCount)
}
_ = work.initialize(from: riff)
let firstPass = countAllocations()
let steady = countAllocations()
let blocks = frames / blockSize
#if DEBUG
let isDebugBuild = true
#else
let isDebugBuild = false
#endif
print("  heap allocations in chain.process: \(steady.count) in \(blocks) blocks (\(format(Double(steady.count) / Double(blocks), 3)) per block, \(steady.bytes) bytes); first pass: \(firstPass.count)\(isDebugBuild && firstPass.count > 0 ? " (one-time runtime metadata of a debug build)" : ""); a tap on the loop tracks took \(silentTap.frames) frames")
guard Measure.allFinite(work), Measure.peak(work) <= 1 else { fatal("the chain's output is not finite or exceeds ±1") }
let allocationFailure = steady.count != 0 || (!isDebugBuild && firstPass.count != 0)

if !options.allocationsOnly {
    var best = Double.infinity
    var checksum: Float = 0
    for _ in 0..<options.runs {
        let chain = makeChain()
        _ = work.update(fromContentsOf: riff)
        best = min(best, run(chain, work, actions: actions, countAllocations: false))
        checksum += Measure.rms(work)
    }
    let ns = best * 1e9 / Double(frames)
    let realTime = Double(frames) / sampleRate / best
    print("  stompbox: \(format(ns)) ns/sample, real-time factor \(format(realTime, 0))× (best of \(options.runs); output rms \(format(Double(checksum) / Double(options.runs), 4)))")
    print("  target ≤ \(format(targetNanosecondsPerSample, 0)) ns/sample with a 2048-tap cabinet: \(ns <= targetNanosecondsPerSample ? "met" : "NOT met")")
    do {
        // The same chain with a 1 s cabinet (48 000 taps).
        Cabinet.install(BenchCabinet(taps: Int(sampleRate)))
        defer { Cabinet.install(BenchCabinet(taps: 2_048)) }
        var longBest = Double.infinity
        for _ in 0..<options.runs {
            let chain = makeChain()
            _ = work.update(fromContentsOf: riff)
            longBest = min(longBest, run(chain, work, actions: actions, countAllocations: false))
        }
        print("  with a 1 s cabinet (48 000 taps): \(format(longBest * 1e9 / Double(frames))) ns/sample")
        print("  cabinet transforms: \(Convolver(longestKernel: 2_048).transformsFromWisdom ? "FFTW plans from the wisdom kept with the convolver" : "FFTW's estimated plans (the wisdom kept with the convolver does not apply on this machine)")")
    }

    // Where the time goes: the chain with one pedal on at a time, less the chain with none.
    func nanosecondsPerSample(only kind: PedalKind?) -> Double {
        var fastest = Double.infinity
        for _ in 0..<options.runs {
            let chain = makeChain()
            for other in PedalKind.builtIn where other != kind { chain.parameters.set(other.enabledParameter, 0) }
            chain.reset()
            _ = work.update(fromContentsOf: riff)
            fastest = min(fastest, run(chain, work, actions: kind == .looper ? actions : [:], countAllocations: false))
        }
        return fastest * 1e9 / Double(frames)
    }
    let bare = nanosecondsPerSample(only: nil)
    let pedals = PedalKind.builtIn.map { "\($0.id) \(format(nanosecondsPerSample(only: $0) - bare))" }
    print("  per pedal (ns/sample above the bare chain's \(format(bare))): \(pedals.joined(separator: ", "))")

    if options.sox {
        let folder = TemporaryFolder("stompbox-bench")
        let input = folder.file("riff.wav"), output = folder.file("out.wav")
        writeWAV(riff, to: input)
        let soxRuns = min(options.runs, 3)
        if let withEffects = timeSox(input: input, output: output, effects: soxChain, runs: soxRuns),
           let copyOnly = timeSox(input: input, output: output, effects: [], runs: soxRuns) {
            let soxNs = withEffects * 1e9 / Double(frames)
            let ioNs = copyOnly * 1e9 / Double(frames)
            print("  sox:      \(format(soxNs)) ns/sample for overdrive, 6× equalizer, flanger, tremolo, echos, reverb (of which \(format(ioNs)) ns/sample is reading and writing the files); stompbox is \(format(soxNs / ns))× faster")
        } else {
            print("  sox:      not installed (apt-get install sox) — no comparison")
        }
        // Whole process, side by side: `stompbox render` of the same file with the six pedals
        // sox has, against sox, each counted from exec to exit (CPU, start-up and files included).
        let pedals = ["overdrive", "eq", "flanger", "tremolo", "delay", "reverb"]
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let stompbox = URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("stompbox").path
        // The EQ's bands at sox's gains (a flat EQ would cost us nothing and flatter the figure).
        let bands = zip(Parameter.eqBands, ["3", "-2", "1.5", "2", "-3", "1"]).flatMap { ["--set", "\($0.id)=\($1)"] }
        // Mono out, as sox's chain is (a stereo render does each stereo pedal's work twice).
        let renderArguments = ["render", input, output, "--channels", "1", "--chain", pedals.joined(separator: ",")]
            + pedals.flatMap { ["--set", "\($0).enabled=on"] } + bands
        let wholeRuns = max(options.runs, 9)
        // Interleaved, one of each in turn, so a busy spell of the host weighs on both sides of
        // a pair alike; the figure is the median of the pairs' ratios.
        var ours: [Double] = [], theirs: [Double] = []
        if let soxPath, FileManager.default.isExecutableFile(atPath: stompbox) {
            for _ in 0..<wholeRuns {
                guard let a = runChild(stompbox, renderArguments), let b = runChild(soxPath, ["-q", input, output] + soxChain) else {
                    ours = []; break
                }
                ours.append(a.cpu); theirs.append(b.cpu)
            }
        }
        if !ours.isEmpty {
            func median(_ x: [Double]) -> Double { let s = x.sorted(); return s[s.count / 2] }
            let ratios = zip(theirs, ours).map { $0 / $1 }
            print("  whole process, \(format(Double(frames) / sampleRate, 0)) s render (CPU from exec to exit, \(wholeRuns) interleaved pairs): stompbox render \(format(median(ours), 3)) s median (best \(format(ours.min()!, 3))), sox \(format(median(theirs), 3)) s (best \(format(theirs.min()!, 3))): \(format(median(ratios), 2))× cheaper, median of the pairs (pairs \(format(ratios.min()!, 2))–\(format(ratios.max()!, 2))×, best to best \(format(theirs.min()! / ours.min()!, 2))×; goal ≥ 3.5×)")
        } else if !FileManager.default.isExecutableFile(atPath: stompbox) {
            print("  whole process: \(stompbox) is not built (swift build -c release --product stompbox) — no comparison")
        } else {
            print("  whole process: no comparison (sox is missing or a render failed, see above)")
        }
    }
}

// The package's build (make deb) against this native one, the same chain in `stompbox render`.
if options.package && !options.allocationsOnly { PackageBench.run(riff: riff, runs: max(options.runs, 7), native: options.native) }

// The tuner: its error table and how soon it reads a plucked note.
if options.tuner && !options.allocationsOnly { TunerBench.run() }

// Neural amp models (issue 39): each size the issue names, beside NeuralAmpModelerCore when NAM_BENCHMODEL is set.
var neuralAllocations = 0
if options.neural && !options.allocationsOnly { neuralAllocations = NeuralBench.run(runs: options.runs, only: options.neuralModel) }

// Sessions: recording's cost, the loop tracks' memory, a 10-minute session opened and saved.
if options.sessions && !options.allocationsOnly { SessionBench.run() }

// The live loop through a private PulseAudio server: end-to-end latency and dropouts, 30 s each.
if options.latency {
    do {
        try LatencyBench.run(options.latencySettings.isEmpty ? LatencyBench.settings : options.latencySettings,
                             seconds: options.latencySeconds, driftSeconds: options.driftSeconds,
                             servers: options.servers.isEmpty ? AudioServerKind.allCases : options.servers)
    } catch { print("  latency bench failed: \(error)") }
}

// The JACK backend (issue 9): added delay, the process callback's cost, xruns beside a pass-through.
if options.jack && !options.allocationsOnly {
    do { try JackBench.run(periods: [64, 128], seconds: options.jackSeconds) } catch { print("  JACK bench failed: \(error)") }
}

// The window (issue 10): first frame, the GUI thread's CPU untouched, resident memory.
if options.window && !options.allocationsOnly {
    do { try WindowBench.run(runs: 3) } catch { print("  window bench failed: \(error)") }
}

if neuralAllocations != 0 { fatalAllocation(neuralAllocations) }
if allocationFailure {
    FileHandle.standardError.write(Data("StompboxBench: FAIL: chain.process allocated (\(firstPass.count) times on the first pass, \(steady.count) after); the audio thread must not allocate\n".utf8))
    exit(1)
}
