import CGtk
import Foundation
import StompboxAudio
import StompboxDSP

/// Writes what the engine holds — every parameter (ids from the table), the looper's state and
/// the live status — to a JSON file whenever it changes (at most ten times a second), so tests
/// and scripts can watch the engine without trusting the widgets. Enabled by
/// `STOMPBOX_STATE_FILE=/path/state.json`. The file is replaced atomically (write + rename).
///
/// It also holds `ui_seconds` (advances each second while the main loop runs, so a frozen
/// window shows as a stale file) and `layout`: where the controls are on screen (root window
/// pixels) for tests that aim clicks.
final class StateReporter {
    let path: String
    private var lastWritten = ""

    init(path: String) { self.path = path }

    func report(engine: LiveEngine, status: LiveStatus, uiSeconds: Int, readout: String?,
                layout: [String: Any], statusText: String = "", extra: [String: Any] = [:], closuresAlive: Int? = nil) {
        let controls = engine.chain.controls
        var parameters: [String: Double] = [:]
        for p in Parameter.allCases { parameters[p.id] = Double(controls.parameters.load(p)) }
        var engineState: [String: Any] = [
            "state": status.state.rawValue, "underruns": status.underruns, "overruns": status.overruns,
        ]
        if let l = status.latencyMs { engineState["latency_ms"] = (l * 10).rounded() / 10 }
        if let m = status.message { engineState["message"] = m }
        var object: [String: Any] = [
            "format": "stompbox-ui-state",
            "parameters": parameters,
            "looper": [
                "state": controls.looper.state.name,
                "position": controls.looper.position,
                "length": controls.looper.length,
                "can_undo": controls.looper.canUndo,
            ],
            "engine": engineState,
            "ui_seconds": uiSeconds,
            "readout": readout ?? "",
            // What the status bar says, so a test can check the user is told.
            "status_text": statusText,
            "layout": layout,
        ]
        object.merge(extra) { current, _ in current }
        if let closuresAlive { object["signal_closures_alive"] = closuresAlive; object["closed"] = true }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]),
              let text = String(data: data, encoding: .utf8), text != lastWritten else { return }
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: data),
              rename(temporary, path) == 0 else { return }
        lastWritten = text
    }
}

/// A widget's point (logical pixels within it) in screen pixels of the root window: what
/// xdotool takes, so with `GDK_SCALE=2` twice GTK's logical figures.
func rootPoint(_ widget: UnsafeMutablePointer<GtkWidget>, _ x: Int, _ y: Int) -> [Int] {
    guard let top = gtk_widget_get_toplevel(widget), let window = gtk_widget_get_window(top) else { return [0, 0] }
    var tx: Int32 = 0, ty: Int32 = 0, ox: Int32 = 0, oy: Int32 = 0
    _ = gtk_widget_translate_coordinates(widget, top, Int32(x), Int32(y), &tx, &ty)
    let key = UnsafeMutableRawPointer(window)
    if let cached = originCache?[key] {
        (ox, oy) = cached
    } else {
        gdk_window_get_origin(window, &ox, &oy)
        originCache?[key] = (ox, oy)
    }
    let scale = gtk_widget_get_scale_factor(top)
    return [Int((ox + tx) * scale), Int((oy + ty) * scale)]
}

func rootCentre(_ widget: UnsafeMutablePointer<GtkWidget>) -> [Int] {
    rootPoint(widget, Int(gtk_widget_get_allocated_width(widget)) / 2, Int(gtk_widget_get_allocated_height(widget)) / 2)
}

/// A widget's rectangle (its allocation) in screen pixels of the root window: x, y, width, height.
func rootRect(_ widget: UnsafeMutablePointer<GtkWidget>) -> [Int] {
    let scale = Int(gtk_widget_get_scale_factor(widget))
    return rootPoint(widget, 0, 0) + [Int(gtk_widget_get_allocated_width(widget)) * scale, Int(gtk_widget_get_allocated_height(widget)) * scale]
}

/// Window origins during one `withOriginCache` (each lookup is a round trip to the X server).
nonisolated(unsafe) private var originCache: [UnsafeMutableRawPointer: (Int32, Int32)]?

/// Runs `body` (GTK thread) with each window's origin asked of the X server once: a layout of
/// a hundred points is a hundred round trips otherwise.
func withOriginCache<T>(_ body: () -> T) -> T {
    originCache = [:]
    defer { originCache = nil }
    return body()
}
