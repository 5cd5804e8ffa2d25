import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// File operations that never leave a half-written file behind and never clobber one.
///
/// `write` puts the bytes in a temporary file in the same folder, fsyncs it, renames it over
/// the target and fsyncs the folder: after a crash or a power cut the target is either the
/// old complete file or the new complete file. The previous file can be kept as `<name>.bak`
/// (a hard link made before the rename, so the `.bak` is always a complete file too).
public enum SafeFile {
    /// The file's bytes, or nil when it does not exist.
    public static func read(_ url: URL) throws(FileError) -> Data? {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw FileError(action: "read", path: url.path, errno: errno)
        }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw FileError(action: "read", path: url.path, errno: errno)
            }
            if n == 0 { break }
            data.append(contentsOf: buffer[0..<n])
        }
        return data
    }

    public static func exists(_ url: URL) -> Bool {
        var st = stat()
        return lstat(url.path, &st) == 0
    }

    /// Creates the folder and its parents when missing.
    public static func makeDirectory(_ url: URL, mode: Int = 0o755) throws(FileError) {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: mode])
        } catch {
            throw FileError(action: "create the folder", path: url.path, detail: "\((error as NSError).localizedDescription)")
        }
    }

    /// Replaces `url` with `data` atomically (see the type's comment). The folder is created
    /// when missing. `backup` keeps the file being replaced as `<name>.bak`.
    public static func write(_ data: Data, to target: URL, backup: Bool = false, mode: mode_t = 0o644) throws(FileError) {
        // Through a symbolic link (a dotfiles set-up), replace the file it points to, not the link.
        let url = target.resolvingSymlinksInPath()
        let dir = url.deletingLastPathComponent()
        try makeDirectory(dir)
        let tmp = temporaryURL(for: url)
        unlink(tmp.path)
        let fd = open(tmp.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        if fd < 0 { throw FileError(action: "write", path: tmp.path, errno: errno) }
        var ok = false
        defer { if !ok { unlink(tmp.path) } }
        do {
            defer { close(fd) }
            let half = data.count / 2
            try writeAll(fd, data.prefix(half), path: tmp.path)
            testPause()
            try writeAll(fd, data.dropFirst(half), path: tmp.path)
            if fsync(fd) != 0 { throw FileError(action: "write", path: tmp.path, errno: errno) }
        }
        testPause()
        if backup, exists(url) {
            try keepBackup(of: url)
            testPause()
        }
        if rename(tmp.path, url.path) != 0 { throw FileError(action: "replace", path: url.path, errno: errno) }
        ok = true
        syncDirectory(dir)
    }

    /// Where a file too large to hold in memory is written before `commit` puts it in place of
    /// `target` (beside it, so the rename stays on one file system); nothing is there yet.
    public static func temporary(for target: URL) -> URL {
        let tmp = temporaryURL(for: target.resolvingSymlinksInPath())
        unlink(tmp.path)
        return tmp
    }

    /// Puts the finished file at `temporary` (from `temporary(for:)`) in place of `target`
    /// atomically, as `write` does: synced first, renamed over it, the folder synced. On failure
    /// the temporary file is removed and `target` is as it was.
    public static func commit(_ temporary: URL, to target: URL) throws(FileError) {
        let url = target.resolvingSymlinksInPath()
        var ok = false
        defer { if !ok { unlink(temporary.path) } }
        let fd = open(temporary.path, O_RDONLY | O_CLOEXEC)
        if fd < 0 { throw FileError(action: "write", path: temporary.path, errno: errno) }
        let synced = fsync(fd) == 0
        let e = errno
        close(fd)
        if !synced { throw FileError(action: "write", path: temporary.path, errno: e) }
        if rename(temporary.path, url.path) != 0 { throw FileError(action: "replace", path: url.path, errno: errno) }
        ok = true
        syncDirectory(url.deletingLastPathComponent())
    }

    /// Writes a new file, refusing when one exists already (for exported presets and keys).
    public static func create(_ data: Data, at url: URL, mode: mode_t = 0o644) throws(FileError) {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        if fd < 0 {
            if errno == EEXIST { throw FileError(action: "write", path: url.path, detail: "it exists already and is left as it is") }
            throw FileError(action: "write", path: url.path, errno: errno)
        }
        var ok = false
        defer { if !ok { unlink(url.path) } }
        do {
            defer { close(fd) }
            try writeAll(fd, data, path: url.path)
            if fsync(fd) != 0 { throw FileError(action: "write", path: url.path, errno: errno) }
        }
        // O_CREAT's mode is filtered by the umask; a private key must be 0600 whatever it is.
        if chmod(url.path, mode) != 0 { throw FileError(action: "set the permissions of", path: url.path, errno: errno) }
        ok = true
        syncDirectory(url.deletingLastPathComponent())
    }

    /// Moves a file out of the way as `<name>.<tag>-<yyyyMMdd-HHmmss>` (then `-2`, `-3`… when that
    /// name is taken: an existing file is never clobbered) and returns where it went.
    public static func moveAside(_ url: URL, tag: String, date: Date = Date()) throws(FileError) -> URL {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let stem = "\(url.lastPathComponent).\(tag)-\(formatter.string(from: date))"
        let dir = url.deletingLastPathComponent()
        for n in 1...1000 {
            let dest = dir.appendingPathComponent(n == 1 ? stem : "\(stem)-\(n)")
            // link() fails rather than replace an existing name, so two processes cannot race.
            if link(url.path, dest.path) == 0 {
                if unlink(url.path) != 0 { throw FileError(action: "move aside", path: url.path, errno: errno) }
                syncDirectory(dir)
                return dest
            }
            let e = errno
            if e == EEXIST { continue }
            if e == EPERM || e == EXDEV || e == ENOTSUP || e == EMLINK {
                // A file system without hard links: check, then rename.
                if exists(dest) { continue }
                if rename(url.path, dest.path) != 0 { throw FileError(action: "move aside", path: url.path, errno: errno) }
                syncDirectory(dir)
                return dest
            }
            throw FileError(action: "move aside", path: url.path, errno: e)
        }
        throw FileError(action: "move aside", path: url.path, detail: "too many files named \(stem)-…")
    }

    /// Removes temporary files a killed writer left behind. Call only while holding the folder's lock.
    public static func removeStaleTemporaries(for url: URL) {
        let dir = url.deletingLastPathComponent()
        let prefix = ".\(url.lastPathComponent).tmp-"
        let bakPrefix = ".\(url.lastPathComponent).bak.tmp-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir.path) else { return }
        for name in names where name.hasPrefix(prefix) || name.hasPrefix(bakPrefix) {
            unlink(dir.appendingPathComponent(name).path)
        }
    }

    /// Test hook: `STOMPBOX_TEST_SAVE_PAUSE_MS` pauses between the steps of `write`, so the
    /// interrupted-save test can kill a process in every state of a save (not only before or after it).
    static let pauseMicroseconds: UInt32 = {
        guard let text = ProcessInfo.processInfo.environment["STOMPBOX_TEST_SAVE_PAUSE_MS"],
              let ms = UInt32(text), ms <= 1000 else { return 0 }
        return ms * 1000
    }()

    static func testPause() {
        if pauseMicroseconds > 0 { usleep(pauseMicroseconds) }
    }

    static func temporaryURL(for url: URL) -> URL {
        url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())")
    }

    /// `<name>.bak` becomes the current file, replaced atomically.
    static func keepBackup(of url: URL) throws(FileError) {
        let bak = URL(fileURLWithPath: url.path + ".bak")
        let tmp = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).bak.tmp-\(getpid())")
        unlink(tmp.path)
        if link(url.path, tmp.path) != 0 {
            // No hard links here: copy, fsync.
            guard let data = try read(url) else { return }
            let fd = open(tmp.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if fd < 0 { throw FileError(action: "write", path: tmp.path, errno: errno) }
            defer { close(fd) }
            do { try writeAll(fd, data, path: tmp.path) } catch { unlink(tmp.path); throw error }
            if fsync(fd) != 0 { unlink(tmp.path); throw FileError(action: "write", path: tmp.path, errno: errno) }
        }
        if rename(tmp.path, bak.path) != 0 {
            let e = errno
            unlink(tmp.path)
            throw FileError(action: "replace", path: bak.path, errno: e)
        }
        // When the .bak is already a link to the same file (a save killed after this step),
        // rename() does nothing and leaves the temporary name behind.
        unlink(tmp.path)
    }

    static func writeAll(_ fd: Int32, _ data: Data, path: String) throws(FileError) {
        var failure: Int32 = 0
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += n
            }
        }
        if failure != 0 { throw FileError(action: "write", path: path, errno: failure) }
    }

    static func syncDirectory(_ dir: URL) {
        let fd = open(dir.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}

/// An exclusive lock on a folder's lock file (flock), held until released or the process dies,
/// so two Stompbox processes (the window and a script) never interleave their saves.
public final class FileLock {
    private var fd: Int32

    public init(_ url: URL) throws(FileError) {
        try SafeFile.makeDirectory(url.deletingLastPathComponent())
        fd = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0 { throw FileError(action: "lock", path: url.path, errno: errno) }
        while flock(fd, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            let e = errno
            close(fd)
            throw FileError(action: "lock", path: url.path, errno: e)
        }
    }

    public func release() {
        if fd >= 0 { close(fd); fd = -1 }
    }

    deinit { release() }
}

/// A file operation that failed, in words: "cannot write /home/…/presets.json: No space left on device".
public struct FileError: Error, Equatable, CustomStringConvertible {
    public let action: String
    public let path: String
    public let detail: String

    public init(action: String, path: String, detail: String) {
        self.action = action
        self.path = path
        self.detail = detail
    }

    public init(action: String, path: String, errno code: Int32) {
        self.init(action: action, path: path, detail: String(cString: strerror(code)))
    }

    public var description: String { "cannot \(action) \(path): \(detail)" }
}
