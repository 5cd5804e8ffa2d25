import CGtk
import Foundation
import StompboxAudio

/// Everything the window does only for tests and the benchmark, in one place. It exists only
/// when one of its variables is set; the product asks `hooks?.…`, so without them nothing here
/// runs and nothing is reported.
///
/// - `STOMPBOX_STATE_FILE=PATH`: the state file (`StateReporter`): the engine's parameters,
///   looper and status, what the status bar says, `ui_seconds`, the controls' `layout` on
///   screen, the app's `extraState` and `extraLayout` (presets, store, dialogs), and once the
///   application is gone, how many signal closures are still alive (`reportClosed`).
/// - `STOMPBOX_TEST_TOUCH=FIFO`: synthetic touch where there is no touchscreen (`TestTouchFeed`).
/// - `STOMPBOX_LAUNCHED_AT=NANOSECONDS` (CLOCK_MONOTONIC when the benchmark launched the
///   process): the window says on stderr how many milliseconds from then its first frame was
///   drawn ("stompbox: first frame 180.2 ms after launch"), for `make bench`.
final class TestHooks {
    private let reporter: StateReporter?
    private let touchPath: String?
    private let launchedAt: Int?
    private var touchFeed: TestTouchFeed?
    private var firstFrameShown = false
    /// When the window opened (`ui_seconds` counts from here).
    private var started = Date()
    /// More entries for the state file (`extraState`) and its `layout` (`extraLayout`).
    var extraState: (() -> [String: Any])?
    var extraLayout: (() -> [String: Any])?

    /// Nil (no hooks) unless one of the variables is set.
    init?(stateFile: String?, environment: [String: String] = ProcessInfo.processInfo.environment) {
        touchPath = environment["STOMPBOX_TEST_TOUCH"]
        launchedAt = environment["STOMPBOX_LAUNCHED_AT"].flatMap(Int.init)
        guard stateFile != nil || touchPath != nil || launchedAt != nil else { return nil }
        reporter = stateFile.map(StateReporter.init(path:))
    }

    /// True when the state file is written (the benchmark's hooks write none: a report costs
    /// the GUI thread a few % itself).
    var isReporting: Bool { reporter != nil }

    /// The window is built (not yet shown): the first-frame hook and the touch feed attach to it.
    func windowOpened(_ window: UnsafeMutablePointer<GtkWidget>) {
        started = Date()
        if let launched = launchedAt {
            onEvent(raw(window), "draw") { [unowned self] _ in
                if !firstFrameShown {
                    firstFrameShown = true
                    var now = timespec()
                    clock_gettime(CLOCK_MONOTONIC, &now)
                    let ms = Double(Int(now.tv_sec) * 1_000_000_000 + now.tv_nsec - launched) / 1e6
                    FileHandle.standardError.write(Data(String(format: "stompbox: first frame %.1f ms after launch\n", ms).utf8))
                }
                return false
            }
        }
        if let touchPath {
            touchFeed = TestTouchFeed(path: touchPath, window: window)
        }
    }

    /// The window is being destroyed.
    func windowClosed() {
        touchFeed?.stop()
        touchFeed = nil
    }

    /// Writes the state file (when it is on and the state changed). `layout` and `extra` are
    /// asked only then; the layout with each window's origin asked of the X server once.
    func report(engine: LiveEngine, status: LiveStatus, readout: String?, statusText: String,
                layout: () -> [String: Any], extra: () -> [String: Any]) {
        guard let reporter else { return }
        let shown = withOriginCache {
            var shown = layout()
            // An empty layout is a window not on screen yet: nothing to add to it.
            if !shown.isEmpty, let extraLayout { shown.merge(extraLayout()) { $1 } }
            return shown
        }
        reporter.report(engine: engine, status: status, uiSeconds: Int(Date().timeIntervalSince(started)),
                        readout: readout, layout: shown, statusText: statusText,
                        extra: (extraState?() ?? [:]).merging(extra()) { $1 })
    }

    /// After the application is gone: proof for tests that closing released every signal
    /// closure the window connected.
    func reportClosed(engine: LiveEngine) {
        guard let path = reporter?.path else { return }
        StateReporter(path: path).report(engine: engine, status: engine.status(), uiSeconds: 0, readout: nil,
                                         layout: [:], closuresAlive: SignalBoxBase.live)
    }
}
