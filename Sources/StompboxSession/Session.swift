import CSodium
import Foundation
import StompboxAudio
import StompboxCore

/// How a track's audio is stored inside the session file.
public enum SessionAudioFormat: String, CaseIterable, Sendable {
    /// FLAC, 24-bit: lossless for anything recorded or rendered at 24 bits, and about half the size.
    case flac
    /// WAV, 32-bit float: every bit of a float signal, peaks above full scale included.
    case floatWAV = "wav-float"

    var fileExtension: String { self == .flac ? "flac" : "wav" }
    var fileFormat: AudioFileFormat { self == .flac ? .flac : .wav }
    var samples: AudioSampleFormat { self == .flac ? .pcm24 : .float32 }
}

/// A session: its manifest and its tracks' audio, in memory, read from and written to one
/// `NAME.stompsession` file (a ZIP archive: `session.json` at the root, the audio under `audio/`).
///
/// Opening checks everything before anything is used: the archive's paths, types and sizes
/// (`SessionArchive`), the manifest, and each track's audio against its hash, rate, channels and
/// frames. A track read from a file keeps its bytes: saving writes them back untouched, so their
/// hashes stay the same, and only new tracks are encoded.
public final class Session {
    /// Where the session was read from or last written to (names it in errors).
    public private(set) var path: String
    public private(set) var manifest: SessionManifest
    /// Every file of the archive but the manifest, by path: the tracks' audio, and any entry
    /// this version does not know (written back as it was read).
    private var files: [String: Data]

    /// A new, empty session at `sampleRate`, to be saved at `path`.
    public init(path: String, sampleRate: Int, tempoBPM: Double) throws(SessionError) {
        guard SessionManifest.sampleRates.contains(sampleRate) else {
            throw SessionError(path: path, .invalid("the rate must be \(SessionManifest.sampleRates.lowerBound)–\(SessionManifest.sampleRates.upperBound) Hz (got \(sampleRate))"))
        }
        guard SessionManifest.tempos.contains(tempoBPM) else {
            throw SessionError(path: path, .invalid("the tempo must be \(Int(SessionManifest.tempos.lowerBound))–\(Int(SessionManifest.tempos.upperBound)) BPM (got \(tempoBPM))"))
        }
        self.path = path
        manifest = SessionManifest(sampleRate: sampleRate, tempoBPM: tempoBPM)
        files = [:]
    }

    /// Reads the session at `path`, refusing it whole (one `SessionError`) if anything in it is
    /// unsafe, damaged or not what its manifest says.
    public static func open(_ path: String, limits: SessionLimits = .standard) throws(SessionError) -> Session {
        func fail(_ problem: SessionError.Problem) -> SessionError { SessionError(path: path, problem) }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { throw fail(.missing) }
        guard !isFolder.boolValue else { throw fail(.notAnArchive("it is a folder")) }
        do throws(SessionError.Problem) {
            let contents = try SessionArchive.read(URL(fileURLWithPath: path), limits: limits)
            let json: JSONValue
            do { json = try JSONValue.parse(contents.manifest) } catch { throw .badManifest("not valid JSON (\(error.description))") }
            let manifest = try SessionManifest(json: json)
            for track in manifest.tracks { try check(track, in: contents.files, rate: manifest.sampleRate) }
            return Session(path: path, manifest: manifest, files: contents.files)
        } catch { throw fail(error) }
    }

    private init(path: String, manifest: SessionManifest, files: [String: Data]) {
        self.path = path
        self.manifest = manifest
        self.files = files
    }

    /// A track's audio must be in the archive, hash to its `sha256`, and be `frames` frames of
    /// `channels` channels at the session's rate, as its header says.
    private static func check(_ track: SessionTrack, in files: [String: Data], rate: Int) throws(SessionError.Problem) {
        guard let bytes = files[track.file] else { throw .missingAudio(track: track.id, file: track.file) }
        guard sha256(bytes) == track.sha256 else { throw .wrongHash(track: track.id, file: track.file) }
        let info: (sampleRate: Int, channels: Int, frames: Int)
        do { info = try AudioData.info(bytes, name: track.file) } catch {
            throw .wrongAudio(track: track.id, file: track.file, detail: "is not audio that can be read")
        }
        guard info.sampleRate == rate else {
            throw .wrongAudio(track: track.id, file: track.file, detail: "is at \(info.sampleRate) Hz, the session at \(rate) Hz")
        }
        guard info.channels == track.channels else {
            throw .wrongAudio(track: track.id, file: track.file, detail: "has \(info.channels) channels, the manifest says \(track.channels)")
        }
        guard info.frames == track.frames else {
            throw .wrongAudio(track: track.id, file: track.file, detail: "holds \(info.frames) frames, the manifest says \(track.frames)")
        }
    }

    /// Writes the session to `path` (by default where it came from): the archive is written to
    /// a temporary file beside it, which is synced and renamed over it, so a failed save leaves
    /// the file as it was. The folder must exist.
    public func save(to target: String? = nil) throws(SessionError) {
        let destination = target ?? path
        func fail(_ problem: SessionError.Problem) -> SessionError { SessionError(path: destination, problem) }
        let url = URL(fileURLWithPath: destination)
        var isFolder: ObjCBool = false
        let folder = url.deletingLastPathComponent().path
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw fail(.unwritable("the folder '\(folder)' does not exist"))
        }
        if FileManager.default.fileExists(atPath: destination, isDirectory: &isFolder), isFolder.boolValue {
            throw fail(.unwritable("it is a folder"))
        }
        let temporary = SafeFile.temporary(for: url)
        do {
            try SessionArchive.write(manifest: manifest.json.serialized(), files: files, to: temporary)
        } catch {
            unlink(temporary.path)
            throw fail(error)
        }
        do { try SafeFile.commit(temporary, to: url) } catch { throw fail(.unwritable(error.detail)) }
        path = destination
    }

    /// Adds `audio` as a new track (resampled to the session's rate when it has another) and
    /// returns it. Its id is its kind and a number (`di-1`, `wet-2`, …); its file is encoded
    /// in `format`.
    @discardableResult
    public func addTrack(_ audio: AudioBuffer, kind: SessionTrack.Kind, author: String, start: Int = 0,
                         gainDB: Double = 0, pan: Double = 0, mute: Bool = false, board: JSONValue? = nil,
                         actions: [String] = [], format: SessionAudioFormat = .flac) throws(SessionError) -> SessionTrack {
        try check(channels: audio.channels, author: author, start: start, gainDB: gainDB, pan: pan)
        let audio = audio.sampleRate == manifest.sampleRate ? audio : audio.resampled(to: manifest.sampleRate)
        let id = nextID(kind)
        let file = "audio/\(id).\(format.fileExtension)"
        try check(frames: audio.frames, start: start)
        let bytes: Data
        do { bytes = try AudioData.encode(audio, format: format.fileFormat, samples: format.samples, name: file) } catch {
            throw SessionError(path: path, .audio(error))
        }
        return insert(id: id, file: file, bytes: bytes, kind: kind, author: author, start: start, frames: audio.frames,
                      channels: audio.channels, gainDB: gainDB, pan: pan, mute: mute, board: board, actions: actions)
    }

    /// Adds the audio file at `encodedFile` (in `format`, at the session's rate, `frames` frames
    /// of `channels` channels, as a take or a re-amp writes it) as a new track, without decoding
    /// it: its bytes are mapped from disk, not read into memory, so a take of hours costs no more
    /// memory than one of minutes. The file must stay where it is until the session is saved.
    @discardableResult
    public func addTrack(encodedFile: String, format: SessionAudioFormat, channels: Int, frames: Int,
                         kind: SessionTrack.Kind, author: String, start: Int = 0, gainDB: Double = 0, pan: Double = 0,
                         mute: Bool = false, board: JSONValue? = nil, actions: [String] = []) throws(SessionError) -> SessionTrack {
        try check(channels: channels, author: author, start: start, gainDB: gainDB, pan: pan)
        try check(frames: frames, start: start)
        let bytes: Data
        do { bytes = try Data(contentsOf: URL(fileURLWithPath: encodedFile), options: .alwaysMapped) } catch {
            throw SessionError(path: path, .audio(.ioFailed(path: encodedFile, reason: "it cannot be read (\(error.localizedDescription))")))
        }
        let id = nextID(kind)
        return insert(id: id, file: "audio/\(id).\(format.fileExtension)", bytes: bytes, kind: kind, author: author,
                      start: start, frames: frames, channels: channels, gainDB: gainDB, pan: pan, mute: mute,
                      board: board, actions: actions)
    }

    private func check(channels: Int, author: String, start: Int, gainDB: Double, pan: Double) throws(SessionError) {
        func fail(_ problem: SessionError.Problem) -> SessionError { SessionError(path: path, problem) }
        guard start >= 0 else { throw fail(.invalid("a track cannot start before frame 0 (got \(start))")) }
        guard SessionTrack.gains.contains(gainDB), gainDB.isFinite else {
            throw fail(.invalid("the gain must be \(Int(SessionTrack.gains.lowerBound))…\(Int(SessionTrack.gains.upperBound)) dB (got \(gainDB))"))
        }
        guard SessionTrack.pans.contains(pan) else { throw fail(.invalid("the pan must be -1…1 (got \(pan))")) }
        guard (1...SessionTrack.maximumChannels).contains(channels) else {
            throw fail(.invalid("a track has 1 to \(SessionTrack.maximumChannels) channels (got \(channels))"))
        }
        guard !author.trimmingCharacters(in: .whitespaces).isEmpty else { throw fail(.invalid("a track needs an author")) }
    }

    private func check(frames: Int, start: Int) throws(SessionError) {
        guard start + frames <= SessionTrack.maximumFrames else {
            throw SessionError(path: path, .invalid("a track may end at frame \(SessionTrack.maximumFrames) at the latest"))
        }
    }

    private func insert(id: String, file: String, bytes: Data, kind: SessionTrack.Kind, author: String, start: Int,
                        frames: Int, channels: Int, gainDB: Double, pan: Double, mute: Bool, board: JSONValue?,
                        actions: [String]) -> SessionTrack {
        let track = SessionTrack(id: id, author: author, kind: kind, file: file, start: start, frames: frames,
                                 channels: channels, gainDB: gainDB, pan: pan, mute: mute,
                                 sha256: Self.sha256(bytes), board: board, actions: actions)
        files[file] = bytes
        manifest.tracks.append(track)
        return track
    }

    /// Sets how track `id` plays in the mix; its audio and hash stay as they are.
    public func setMix(of id: String, gainDB: Double, pan: Double, mute: Bool) throws(SessionError) {
        guard let i = manifest.tracks.firstIndex(where: { $0.id == id }) else { throw SessionError(path: path, .unknownTrack(id)) }
        guard SessionTrack.gains.contains(gainDB), SessionTrack.pans.contains(pan) else {
            throw SessionError(path: path, .invalid("track '\(id)': gain \(gainDB) dB or pan \(pan) out of range"))
        }
        manifest.tracks[i].gainDB = gainDB
        manifest.tracks[i].pan = pan
        manifest.tracks[i].mute = mute
    }

    /// Takes track `id` and its audio out of the session (nothing else changes).
    public func removeTrack(_ id: String) {
        guard let i = manifest.tracks.firstIndex(where: { $0.id == id }) else { return }
        files[manifest.tracks[i].file] = nil
        manifest.tracks.remove(at: i)
    }

    /// The loop cycle in frames (`cycle_frames`); 0 when no loop set it.
    public var cycleFrames: Int {
        get { manifest.cycleFrames }
        set { manifest.cycleFrames = max(0, newValue) }
    }

    /// The first free `KIND-N`, counting from the number of tracks.
    private func nextID(_ kind: SessionTrack.Kind) -> String {
        var n = manifest.tracks.count + 1
        while manifest.track("\(kind.rawValue)-\(n)") != nil || files["audio/\(kind.rawValue)-\(n).flac"] != nil
            || files["audio/\(kind.rawValue)-\(n).wav"] != nil { n += 1 }
        return "\(kind.rawValue)-\(n)"
    }

    /// A track's audio, decoded: exactly its `frames` at the session's rate, or at `rate`
    /// (resampled, its length within one frame of the exact ratio).
    public func audio(of id: String, at rate: Int? = nil) throws(SessionError) -> AudioBuffer {
        func fail(_ problem: SessionError.Problem) -> SessionError { SessionError(path: path, problem) }
        guard let track = manifest.track(id) else { throw fail(.unknownTrack(id)) }
        guard let bytes = files[track.file] else { throw fail(.missingAudio(track: id, file: track.file)) }
        let audio: AudioBuffer
        do { audio = try AudioData.decode(bytes, name: track.file, maximumFrames: track.frames) } catch {
            throw fail(.wrongAudio(track: id, file: track.file, detail: "cannot be decoded as the manifest says (\(error.description))"))
        }
        guard audio.frames == track.frames else {
            throw fail(.wrongAudio(track: id, file: track.file, detail: "decodes to \(audio.frames) frames, the manifest says \(track.frames)"))
        }
        guard let rate, rate != audio.sampleRate else { return audio }
        return audio.resampled(to: rate)
    }

    /// A track's audio file exactly as stored.
    public func storedAudio(of id: String) -> Data? {
        manifest.track(id).flatMap { files[$0.file] }
    }

    /// Lowercase hex SHA-256, as a track's `sha256` gives it.
    public static func sha256(_ bytes: Data) -> String {
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        bytes.withUnsafeBytes { raw in
            _ = crypto_hash_sha256(&digest, raw.bindMemory(to: UInt8.self).baseAddress, UInt64(raw.count))
        }
        return digest.map { String(format: "%02x", $0) }.joined()
    }
}
