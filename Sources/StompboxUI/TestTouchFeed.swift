import CGtk
import CStompboxShim
import Foundation

/// Tests only: touch input where there is no touchscreen (Xvfb). With `STOMPBOX_TEST_TOUCH` set to
/// the path of a FIFO, the window reads lines from it every few milliseconds and feeds each to
/// GTK as a touch event from a touchscreen device, at a point of the screen (root pixels, as in
/// the state file's layout), so the widgets' real gesture objects handle it:
///
///     down SEQUENCE X Y     a finger touches (sequence: a small number per finger)
///     move SEQUENCE X Y     it moves
///     up SEQUENCE X Y       it lifts
///
/// A line that is not one of these is ignored and named on stderr.
final class TestTouchFeed {
    private let fd: Int32
    private let window: UnsafeMutablePointer<GtkWidget>
    private var pending = ""
    private var timer: UInt32 = 0

    init?(path: String, window: UnsafeMutablePointer<GtkWidget>) {
        // Read and write: the FIFO always has a writer, so an empty one reads EAGAIN, never EOF.
        let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            FileHandle.standardError.write(Data("stompbox: STOMPBOX_TEST_TOUCH: cannot open \(path)\n".utf8))
            return nil
        }
        self.fd = fd
        self.window = window
        timer = addTimeout(milliseconds: 4) { [weak self] in self?.read() ?? false }
    }

    func stop() {
        if timer != 0 { g_source_remove(timer); timer = 0 }
        close(fd)
    }

    private func read() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            pending += String(decoding: buffer[0..<n], as: UTF8.self)
        }
        while let newline = pending.firstIndex(of: "\n") {
            let line = String(pending[..<newline])
            pending.removeSubrange(...newline)
            feed(line)
        }
        return true
    }

    private func feed(_ line: String) {
        let f = line.split(separator: " ")
        let types: [Substring: GdkEventType] = ["down": GDK_TOUCH_BEGIN, "move": GDK_TOUCH_UPDATE, "up": GDK_TOUCH_END]
        guard f.count == 4, let type = types[f[0]], let sequence = UInt32(f[1]), let x = Double(f[2]), let y = Double(f[3]) else {
            FileHandle.standardError.write(Data("stompbox: STOMPBOX_TEST_TOUCH: not a touch line: \(line)\n".utf8))
            return
        }
        _ = stompbox_test_touch(window, type, sequence, x, y)
    }
}
