import Foundation
import StompboxCore
import ZIPFoundation

/// How much a session file may hold. Every entry's declared size is checked against these before
/// a byte is inflated, and an entry that inflates past its declared size is cut off, so a ZIP
/// bomb is refused instead of filling memory or disk.
public struct SessionLimits: Sendable {
    public var manifestBytes: UInt64 = 16 << 20
    /// One audio file: 2 GiB is over three hours of stereo 24-bit FLAC at 48 kHz.
    public var entryBytes: UInt64 = 2 << 30
    public var totalBytes: UInt64 = 8 << 30
    public var entries = 4096

    public init() {}
    public static let standard = SessionLimits()
}

/// The ZIP side of a session file: which entries it holds, read safely, and the whole archive
/// written at once.
enum SessionArchive {
    static let manifestPath = "session.json"

    /// What was read: the manifest's bytes, and the bytes of every other file entry by path.
    struct Contents {
        var manifest: Data
        var files: [String: Data]
    }

    /// A relative path that stays inside the archive: not absolute, no `..` or `.`, no empty
    /// parts (but a folder's trailing `/`), no backslash or drive letter that another system's
    /// unzip would take for a folder.
    static func isSafeEntryPath(_ path: String) -> Bool {
        guard !path.isEmpty, !path.hasPrefix("/"), !path.contains("\\"), !path.contains("\0") else { return false }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        if parts[0].contains(":") { return false }
        for (i, part) in parts.enumerated() {
            if part == ".." || part == "." { return false }
            if part.isEmpty && i != parts.count - 1 { return false }
        }
        return true
    }

    /// Reads the archive at `url` whole, after checking every entry's path, type and declared
    /// size: any problem refuses the file before any content is used.
    static func read(_ url: URL, limits: SessionLimits) throws(SessionError.Problem) -> Contents {
        let archive: Archive
        do { archive = try Archive(url: url, accessMode: .read) } catch {
            throw .notAnArchive(String(describing: error))
        }
        var entries: [Entry] = []
        var total: UInt64 = 0
        var seen = Set<String>()
        for entry in archive {
            guard entries.count < limits.entries else {
                throw .badManifest("the archive holds more than \(limits.entries) entries")
            }
            let path = entry.path
            guard isSafeEntryPath(path) else { throw .unsafePath(path) }
            guard entry.type != .symlink else { throw .link(path) }
            guard seen.insert(path).inserted else { throw .badManifest("the entry '\(path)' appears twice in the archive") }
            let limit = path == manifestPath ? limits.manifestBytes : limits.entryBytes
            guard entry.uncompressedSize <= limit else {
                throw .tooLarge(entry: path, declared: entry.uncompressedSize, limit: limit)
            }
            total += entry.uncompressedSize
            guard total <= limits.totalBytes else {
                throw .tooLarge(entry: path, declared: entry.uncompressedSize, limit: limits.totalBytes)
            }
            if entry.type == .file { entries.append(entry) }
        }
        guard let manifestEntry = entries.first(where: { $0.path == manifestPath }) else { throw .noManifest }
        // Stored entries (all a session writes) are taken from the file mapped into memory, not
        // read: a session of hours costs pages the system can drop, not memory of its own.
        let mapped = try? Data(contentsOf: url, options: .alwaysMapped)
        let stored = mapped.map { ZipLayout.storedData(in: $0) } ?? [:]
        var files: [String: Data] = [:]
        for entry in entries where entry.path != manifestPath {
            if !entry.isCompressed, let mapped, let range = stored[entry.path], UInt64(range.count) == entry.uncompressedSize {
                let slice = mapped[range]
                guard slice.crc32(checksum: 0) == entry.checksum else {
                    throw .notAnArchive("the entry '\(entry.path)' is damaged (its checksum or length is wrong)")
                }
                files[entry.path] = slice
            } else {
                files[entry.path] = try extract(entry, from: archive)
            }
        }
        return Contents(manifest: try extract(manifestEntry, from: archive), files: files)
    }

    /// An entry's bytes, never more than it declares, its CRC checked.
    private static func extract(_ entry: Entry, from archive: Archive) throws(SessionError.Problem) -> Data {
        let declared = entry.uncompressedSize
        var data = Data()
        // Reserved up to 64 MiB only: the declared size is the file's word, not yet its bytes.
        data.reserveCapacity(Int(min(declared, 64 << 20)))
        var overflowed = false
        let crc: CRC32
        do {
            crc = try archive.extract(entry) { chunk in
                guard UInt64(data.count) + UInt64(chunk.count) <= declared else {
                    overflowed = true
                    throw Overflow()
                }
                data.append(chunk)
            }
        } catch {
            if overflowed { throw .overflowing(entry.path) }
            throw .notAnArchive("the entry '\(entry.path)' cannot be read: \(error)")
        }
        guard crc == entry.checksum, UInt64(data.count) == declared else {
            throw .notAnArchive("the entry '\(entry.path)' is damaged (its checksum or length is wrong)")
        }
        return data
    }

    private struct Overflow: Error {}

    /// Entries' dates are fixed, so the same session always gives the same bytes.
    private static let entryDate = Date(timeIntervalSince1970: 315_532_800)

    /// Writes the archive to `url` (a new file): `session.json` first (compressed), then `files`
    /// in path order, stored as they are (audio is compressed already, and a copied track keeps
    /// its bytes). Each file is handed over a slice at a time, so a file mapped from disk is never
    /// read into memory whole.
    static func write(manifest: Data, files: [String: Data], to url: URL) throws(SessionError.Problem) {
        do {
            let archive = try Archive(url: url, accessMode: .create)
            func add(_ path: String, _ bytes: Data, _ method: CompressionMethod) throws {
                try archive.addEntry(with: path, type: .file, uncompressedSize: Int64(bytes.count),
                                     modificationDate: entryDate, compressionMethod: method,
                                     bufferSize: method == .none ? 1 << 20 : defaultWriteChunkSize) { position, size in
                    // A mapped entry is a slice of its archive: its indices start where it does.
                    let from = bytes.startIndex + Int(position)
                    return bytes.subdata(in: from..<(from + size))
                }
            }
            try add(manifestPath, manifest, .deflate)
            for path in files.keys.sorted() { try add(path, files[path]!, .none) }
        } catch {
            throw .unwritable("the archive cannot be made (\(error))")
        }
    }
}

/// Where a ZIP archive's stored (uncompressed) entries' bytes lie in the file, read from its
/// central directory and local headers (ZIP64 too). Anything it cannot place is left out, and
/// is then read the ordinary way.
enum ZipLayout {
    static func storedData(in zip: Data) -> [String: Range<Int>] {
        zip.withUnsafeBytes { raw -> [String: Range<Int>] in
            let n = raw.count
            func u16(_ at: Int) -> Int? { at >= 0 && at + 2 <= n ? Int(raw[at]) | Int(raw[at + 1]) << 8 : nil }
            func u32(_ at: Int) -> Int? {
                guard let lo = u16(at), let hi = u16(at + 2) else { return nil }
                return lo | hi << 16
            }
            func u64(_ at: Int) -> Int? {
                guard let lo = u32(at), let hi = u32(at + 4), hi < 1 << 30 else { return nil }
                return lo | hi << 32
            }
            // The end of central directory record: within the last 64 KiB + 22 bytes.
            var eocd = -1
            var at = n - 22
            while at >= max(0, n - 22 - 65_535) {
                if u32(at) == 0x0605_4b50 { eocd = at; break }
                at -= 1
            }
            guard eocd >= 0, var count = u16(eocd + 10), var directory = u32(eocd + 16) else { return [:] }
            // ZIP64: its locator sits just before, pointing at the ZIP64 end record.
            if (count == 0xFFFF || directory == 0xFFFF_FFFF), u32(eocd - 20) == 0x0706_4b50,
               let record = u64(eocd - 12), u32(record) == 0x0606_4b50, let c = u64(record + 32), let d = u64(record + 48) {
                count = c
                directory = d
            }
            var result: [String: Range<Int>] = [:]
            var entry = directory
            for _ in 0..<count {
                guard u32(entry) == 0x0201_4b50, let method = u16(entry + 10), var size = u32(entry + 24),
                      let nameLength = u16(entry + 28), let extraLength = u16(entry + 30), let commentLength = u16(entry + 32),
                      var local = u32(entry + 42), entry + 46 + nameLength <= n else { break }
                let name = String(decoding: UnsafeRawBufferPointer(rebasing: raw[(entry + 46)..<(entry + 46 + nameLength)]), as: UTF8.self)
                // ZIP64 extra field: the 64-bit values, in order, for those marked 0xFFFFFFFF.
                var field = entry + 46 + nameLength
                let end = field + extraLength
                while field + 4 <= end, let id = u16(field), let length = u16(field + 2) {
                    if id == 0x0001 {
                        var value = field + 4
                        if size == 0xFFFF_FFFF, let v = u64(value) { size = v; value += 8 }
                        if u32(entry + 20) == 0xFFFF_FFFF { value += 8 }
                        if local == 0xFFFF_FFFF, let v = u64(value) { local = v }
                    }
                    field += 4 + length
                }
                entry = end + commentLength
                guard method == 0, u32(local) == 0x0403_4b50, let localName = u16(local + 26), let localExtra = u16(local + 28) else { continue }
                let start = local + 30 + localName + localExtra
                guard start + size <= n else { continue }
                result[name] = start..<(start + size)
            }
            return result
        }
    }
}
