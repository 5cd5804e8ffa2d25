import Foundation
import StompboxAudio
import StompboxCore
import StompboxSession
import StompboxTestSupport
import ZIPFoundation

/// A riff as a track's audio: mono, or stereo with the sides at different levels.
func riff(seconds: Double = 0.5, rate: Int = 48_000, channels: Int = 1, level: Float = 0.4, seed: UInt64 = 7) -> AudioBuffer {
    let mono = Signal.guitarRiff(seconds: seconds, sampleRate: Double(rate), seed: seed).map { $0 * level }
    guard channels == 2 else { return AudioBuffer(samples: mono, sampleRate: rate, channels: 1) }
    var samples = [Float](repeating: 0, count: mono.count * 2)
    for i in mono.indices {
        samples[2 * i] = mono[i]
        samples[2 * i + 1] = 0.5 * mono[i]
    }
    return AudioBuffer(samples: samples, sampleRate: rate, channels: 2)
}

/// A saved session of two tracks by "ana" (a mono DI and a stereo wet) in `folder`.
func twoTrackSession(in folder: TemporaryFolder, name: String = "song.stompsession") throws -> Session {
    let session = try Session(path: folder.file(name), sampleRate: 48_000, tempoBPM: 100)
    try session.addTrack(riff(), kind: .di, author: "ana", mute: true)
    try session.addTrack(riff(channels: 2, seed: 3), kind: .wet, author: "ana", start: 480, gainDB: -3, pan: 0.25)
    try session.save()
    return session
}

/// The entries of an archive by path, as `(path, bytes)` in the archive's order.
func entries(of path: String) throws -> [(String, Data)] {
    let archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
    return try archive.map { entry in
        var data = Data()
        _ = try archive.extract(entry) { data.append($0) }
        return (entry.path, data)
    }
}

/// An archive of `files` (stored, or deflated when `deflate`), written to `path`.
func writeArchive(_ files: [(String, Data)], to path: String, deflate: Bool = false,
                  symlinks: [(String, String)] = []) throws {
    let archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .create)
    for (name, data) in files {
        try archive.addEntry(with: name, type: .file, uncompressedSize: Int64(data.count),
                             compressionMethod: deflate ? .deflate : .none) { position, size in
            data.subdata(in: Int(position)..<Int(position) + size)
        }
    }
    for (name, target) in symlinks {
        let data = Data(target.utf8)
        try archive.addEntry(with: name, type: .symlink, uncompressedSize: Int64(data.count)) { position, size in
            data.subdata(in: Int(position)..<Int(position) + size)
        }
    }
}

/// The manifest of the session at `path`, as a JSON object.
func manifestObject(_ files: [(String, Data)]) throws -> [String: JSONValue] {
    guard let data = files.first(where: { $0.0 == "session.json" })?.1,
          case .object(let object) = try JSONValue.parse(data) else { throw CraftError() }
    return object
}

/// `files` with session.json replaced by `object`.
func replacingManifest(_ files: [(String, Data)], with object: [String: JSONValue]) -> [(String, Data)] {
    files.map { $0.0 == "session.json" ? ($0.0, JSONValue.object(object).serialized()) : $0 }
}

/// `object`'s track `index` changed by `change`.
func changingTrack(_ object: [String: JSONValue], _ index: Int, _ change: (inout [String: JSONValue]) -> Void) -> [String: JSONValue] {
    guard case .array(var tracks)? = object["tracks"], case .object(var track) = tracks[index] else { return object }
    change(&track)
    tracks[index] = .object(track)
    var changed = object
    changed["tracks"] = .array(tracks)
    return changed
}

/// Writes `value` as a little-endian UInt32 at every central directory and local header of the
/// entry named `name`, in the field for its uncompressed size: a declared size that lies.
func patchDeclaredSize(of name: String, in path: String, to value: UInt32) throws {
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    let nameBytes = Array(name.utf8)
    func put(_ offset: Int) {
        for k in 0..<4 { bytes[offset + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(k))) }
    }
    var i = 0
    var patched = 0
    while i + 46 < bytes.count {
        if bytes[i..<i + 4] == [0x50, 0x4B, 0x01, 0x02][...] {
            let nameLength = Int(bytes[i + 28]) | Int(bytes[i + 29]) << 8
            if Array(bytes[i + 46..<i + 46 + nameLength]) == nameBytes { put(i + 24); patched += 1 }
        } else if bytes[i..<i + 4] == [0x50, 0x4B, 0x03, 0x04][...] {
            let nameLength = Int(bytes[i + 26]) | Int(bytes[i + 27]) << 8
            if Array(bytes[i + 30..<i + 30 + nameLength]) == nameBytes { put(i + 22); patched += 1 }
        }
        i += 1
    }
    guard patched == 2 else { throw CraftError() }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

struct CraftError: Error {}

/// Every file under `folder` (recursively, hidden ones too) with its size: what a test compares
/// before and after, to see that nothing was written or removed.
func snapshot(_ folder: URL) -> [String: Int] {
    var result: [String: Int] = [:]
    let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.fileSizeKey])
    while let url = enumerator?.nextObject() as? URL {
        result[url.path] = (try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? -1
    }
    return result
}
