import CGtk
import CStompboxShim
import Foundation
import StompboxAudio
import StompboxDSP

/// The GTK application around the pedalboard window. It drives the same `LiveEngine` as
/// `stompbox run --headless`; the caller starts and stops the engine.
public final class PedalboardApp {
    public static let applicationID = "io.github.stompbox.Stompbox"

    public let engine: LiveEngine
    /// `STOMPBOX_STATE_FILE`: see `StateReporter` and `TestHooks`.
    public let stateFile: String?
    public private(set) var window: PedalboardWindow?
    private var closed = false
    /// `--public-key FILE`: verifies licence keys in place of the shipped key (see `Store.open`).
    public var publicKeyFile: String?
    /// What the window does for tests and the benchmark (nil unless asked for: see `TestHooks`).
    private let hooks: TestHooks?
    /// The store and the preset panel (StoreDialog.swift, PresetPanel.swift).
    private var storeFront: StoreFront?
    private var presetPanel: PresetPanel?

    public init(engine: LiveEngine, stateFile: String?) {
        self.engine = engine
        self.stateFile = stateFile
        hooks = TestHooks(stateFile: stateFile)
        // The window draws with cairo only. Without this GDK's X11 backend opens GLX to pick a
        // visual, which loads the GL driver (Mesa's llvmpipe here, radeonsi on many desktops:
        // libLLVM, about 50 MB resident) for nothing. A GDK_GL set by the user wins.
        setenv("GDK_GL", "disable", 0)
    }

    /// Runs the GTK main loop until the window is closed; returns the exit status.
    public func run() -> Int32 {
        // Non-unique: a second `stompbox` (or a test) gets its own window and engine.
        let app = gtk_application_new(PedalboardApp.applicationID, G_APPLICATION_NON_UNIQUE)!
        onSignal(raw(app), "activate") { [unowned self] in
            if let existing = window { if !closed { gtk_window_present(cast(raw(existing.window))) }; return }
            loadTheme()
            let w = PedalboardWindow(application: app, engine: engine, hooks: hooks)
            // The Swift side is dropped after the main loop ends: GTK still destroys the
            // children (and runs their destroy handlers) after the window's own handler.
            w.onClosed = { [unowned self] in closed = true }
            window = w
            let front = StoreFront(window: w, publicKeyFile: publicKeyFile)
            let panel = PresetPanel(window: w, storeFront: front)
            hooks?.extraState = { [unowned front, unowned panel] in
                ["presets": panel.state, "store": front.state, "dialogs": Dialogs.open, "notice": panel.notice]
            }
            hooks?.extraLayout = { [unowned panel] in panel.layout }
            w.onPresetAction = { [unowned panel] in panel.perform($0) }
            w.onNotice = { [unowned panel] kind, text in panel.showInfo(kind, text) }
            if !w.footControls.notices.isEmpty { panel.showInfo(.warning, w.footControls.notices.joined(separator: "\n")) }
            storeFront = front
            presetPanel = panel
            w.open()
        }
        let status = g_application_run(cast(raw(app)), 0, nil)
        window = nil
        presetPanel = nil
        storeFront = nil
        // Dropping the application finalizes it and with it the last signal closures.
        g_object_unref(raw(app))
        hooks?.reportClosed(engine: engine)
        return status
    }

    private func loadTheme() {
        stompbox_prefer_dark_theme()
        guard let css = ResourceLocator.path("stompbox.css"), let screen = gdk_screen_get_default() else {
            FileHandle.standardError.write(Data("stompbox: Resources/stompbox.css not found; set STOMPBOX_RESOURCES_DIR\n".utf8))
            return
        }
        let provider = gtk_css_provider_new()!
        var error: UnsafeMutablePointer<GError>?
        if gtk_css_provider_load_from_path(provider, css, &error) == 0, let error {
            FileHandle.standardError.write(Data("stompbox: \(css): \(String(cString: error.pointee.message))\n".utf8))
            g_error_free(error)
        }
        gtk_style_context_add_provider_for_screen(screen, OpaquePointer(provider), UInt32(GTK_STYLE_PROVIDER_PRIORITY_APPLICATION))
        g_object_unref(raw(provider))
    }
}
