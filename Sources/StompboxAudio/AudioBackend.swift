import Foundation
import StompboxDSP

/// Why a backend's session ended; the engine's retry loop (`LiveEngine.run`) answers each the
/// same way whatever the backend.
enum BackendOutcome {
    /// `LiveEngine.stop`.
    case stopped
    /// New settings (or, on JACK, a new server rate): open again at once.
    case settingsChanged
    /// The server or a device went away: look for it again at once.
    case deviceGone
    /// Something is missing or refused: the state and message are published and the engine
    /// waits `LiveEngine.retryInterval` (or a device event, new settings, stop) before trying again.
    case failed(LiveState, String)
}

/// One audio server as the live loop sees it, in the spirit of jalv's backend interface: opened,
/// activated, watched, deactivated and closed once per session (one set of settings, one pair of
/// devices) on the engine's audio thread. The server's own callbacks (JACK's process thread,
/// PulseAudio's stream callbacks) call the session's `LiveHost` for every block, so what the
/// chain is fed and where its output goes is written once for every backend.
///
/// Each step returns nil to go on, or the outcome that ends the session; `deactivate` and
/// `close` are always called, whatever step ended it (`play`).
protocol AudioBackend: AnyObject {
    /// Connects to the server, finds the devices or registers the ports, and creates the streams
    /// or the client; the chain is prepared for the server's rate here if it must be.
    func open() -> BackendOutcome?
    /// Starts the server calling back: from here the block path runs.
    func activate() -> BackendOutcome?
    /// Watches the session (stop, new settings, devices, latency, status) until it must end.
    func run() -> BackendOutcome
    /// Stops the server calling back; no block is processed after it returns.
    func deactivate()
    /// Lets go of the streams or the client.
    func close()
}

extension AudioBackend {
    /// One session, from opening to closing.
    func play() -> BackendOutcome {
        defer {
            deactivate()
            close()
        }
        if let outcome = open() { return outcome }
        if let outcome = activate() { return outcome }
        return run()
    }
}

/// What every backend's session shares: the settings it was opened with, the stop check, the
/// status it publishes, and the block path: input (or the demo riff) → chain → output, in
/// `process`. A new tap on the live signal (a meter on the input, a recorder) goes there, once.
///
/// Made by the engine for each session on its audio thread. `process` runs on the server's
/// audio callback: it allocates nothing, takes no lock and retains nothing.
final class LiveHost {
    let engine: LiveEngine
    let chain: Chain
    let settings: LiveSettings
    /// The settings generation the session was opened with (`LiveEngine.currentGeneration`).
    let generation: Int
    /// True when the input is the demo riff (the backend has no input to read).
    let playsDemo: Bool
    /// The riff looped in place of the input (`LiveInput.demo`); nil for a real input.
    private let demo: UnsafeMutableBufferPointer<Float>?
    /// The riff's read position (the block path only).
    private var riffPosition = 0

    init(engine: LiveEngine, settings: LiveSettings, generation: Int) {
        self.engine = engine
        chain = engine.chain
        self.settings = settings
        self.generation = generation
        playsDemo = settings.input == .demo
        demo = playsDemo ? engine.demoRiff : nil
    }


    /// Stop, or new settings: the session must end. Atomics only (any thread).
    @inline(__always)
    func interruption() -> BackendOutcome? {
        if engine.isStopRequested { return .stopped }
        if engine.currentGeneration != generation { return .settingsChanged }
        return nil
    }

    /// One block of the live signal, in place. `left` holds the input on entry when `input` is
    /// its own address; another `input` is copied into it, and nil means no input (silence).
    /// The demo riff, when it plays, replaces the input. On return `left` (and `right`, for a
    /// stereo output) holds the chain's output; with `right` nil the chain's mono output.
    @inline(__always)
    func process(input: UnsafePointer<Float>?, left: UnsafeMutableBufferPointer<Float>,
                 right: UnsafeMutableBufferPointer<Float>?) {
        let n = left.count
        if let demo, demo.count > 0 {
            for i in 0..<n {
                left[i] = demo[riffPosition]
                riffPosition += 1
                if riffPosition == demo.count { riffPosition = 0 }
            }
        } else if let input {
            if input != UnsafePointer(left.baseAddress!) { left.baseAddress!.update(from: input, count: n) }
        } else {
            left.update(repeating: 0)
        }
        // Borrowed, not retained: `stopRecording` waits for this block to end before letting go.
        let recorder = engine.recorderAddress.load(ordering: .acquiring)
        if recorder != 0 {
            Unmanaged<Recorder>.fromOpaque(UnsafeRawPointer(bitPattern: recorder)!)._withUnsafeGuaranteedRef {
                $0.takeInput(left.baseAddress!, frames: n)
            }
        }
        if let right {
            chain.process(left: left, right: right)
        } else {
            chain.process(left)
        }
        if recorder != 0 {
            let l = UnsafePointer(left.baseAddress!), r = UnsafePointer(right?.baseAddress ?? left.baseAddress!)
            let heard = Unmanaged<Recorder>.fromOpaque(UnsafeRawPointer(bitPattern: recorder)!)._withUnsafeGuaranteedRef {
                $0.takeOutput(left: l, right: r, frames: n)
                return $0.playBacking(left: left.baseAddress!, right: right?.baseAddress, frames: n)
            }
            if heard > 0 { chain.controls.meters.note(heardOutput: heard) }
        }
        engine.blocksPlayed.add(1, ordering: .releasing)
    }

    // MARK: Status (audio thread: atomics only)

    func publishRunning() { engine.publishRunning() }
    func publishWaiting(_ state: LiveState, _ message: String) { engine.publishWaiting(state, message) }
    func noteBackend(_ backend: LiveBackend) { engine.noteBackend(backend) }
    func noteUnderrun() { engine.noteUnderrun() }
    func noteOverrun() { engine.noteOverrun() }
    func noteLatency(_ ms: Double, targetMs: Double, drift: Double, following: Bool) {
        engine.noteLatency(ms, targetMs: targetMs, drift: drift, following: following)
    }
}
