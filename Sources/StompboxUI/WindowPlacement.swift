import CGtk
import Foundation
import StompboxCore

/// Where the window opens and how big (see `PedalboardWindow`), and keeping where the person
/// left it in `window.json` (logical pixels), written about a second after it moved.
final class WindowPlacement {
    private let window: UnsafeMutablePointer<GtkWidget>
    private var geometry: WindowGeometry?
    private var changed = false
    private let file = WindowGeometry.file(in: UserDirectories())

    init(window: UnsafeMutablePointer<GtkWidget>) {
        self.window = window
    }

    /// Sizes and places the window before it is shown: where it was left, else at its natural
    /// size (larger on a large screen, for its pedals to zoom into), maximised where that does
    /// not fit.
    func place() {
        gtk_widget_show_all(gtk_bin_get_child(cast(raw(window))))
        var minimum = GtkRequisition(), natural = GtkRequisition()
        gtk_widget_get_preferred_size(window, &minimum, &natural)
        var areas: [(x: Int, y: Int, width: Int, height: Int)] = []
        if let display = gdk_display_get_default() {
            // The primary monitor first: an unknown or lost place opens there.
            let primary = gdk_display_get_primary_monitor(display)
            var monitors = primary.map { [$0] } ?? []
            for i in 0..<gdk_display_get_n_monitors(display) {
                if let m = gdk_display_get_monitor(display, i), m != primary { monitors.append(m) }
            }
            for m in monitors {
                var r = GdkRectangle()
                gdk_monitor_get_workarea(m, &r)
                areas.append((Int(r.x), Int(r.y), Int(r.width), Int(r.height)))
            }
        }
        let (saved, problem) = WindowGeometry.load(from: file)
        if let problem { FileHandle.standardError.write(Data("stompbox: \(problem)\n".utf8)) }
        guard let g = WindowGeometry.placement(saved: saved, natural: (Int(natural.width), Int(natural.height)), workAreas: areas) else {
            // The natural size fits: on a large screen the window opens larger (its pedals
            // zoom to fill it), in the middle of the primary area.
            guard let area = areas.first else { return }
            let size = BoardZoom.openingSize(natural: (Int(natural.width), Int(natural.height)), area: (area.width, area.height))
            guard size.width > Int(natural.width) else { return }
            gtk_window_set_default_size(cast(raw(window)), Int32(size.width), Int32(size.height))
            gtk_window_move(cast(raw(window)), Int32(area.x + (area.width - size.width) / 2), Int32(area.y + (area.height - size.height) / 2))
            return
        }
        gtk_window_set_default_size(cast(raw(window)), Int32(g.width), Int32(g.height))
        gtk_window_move(cast(raw(window)), Int32(g.x), Int32(g.y))
        if g.maximized { gtk_window_maximize(cast(raw(window))) }
    }

    /// The window moved, was resized, maximised or restored.
    func note() {
        let gtkWindow: UnsafeMutablePointer<GtkWindow> = cast(raw(window))
        guard gtk_widget_get_realized(window) != 0 else { return }
        let maximized = gtk_window_is_maximized(gtkWindow) != 0
        var x: Int32 = 0, y: Int32 = 0, w: Int32 = 0, h: Int32 = 0
        gtk_window_get_position(gtkWindow, &x, &y)
        gtk_window_get_size(gtkWindow, &w, &h)
        // A maximised window keeps the size it will return to.
        var g = WindowGeometry(x: Int(x), y: Int(y), width: Int(w), height: Int(h), maximized: maximized)
        if maximized, let old = geometry { g.width = old.width; g.height = old.height; g.x = old.x; g.y = old.y }
        if g != geometry { geometry = g; changed = true }
    }

    /// Writes `window.json` if the place changed since the last time.
    func save() {
        guard changed, let geometry else { return }
        changed = false
        do { try geometry.save(to: file) } catch {
            FileHandle.standardError.write(Data("stompbox: the window's place was not kept: \(error.description)\n".utf8))
        }
    }
}
