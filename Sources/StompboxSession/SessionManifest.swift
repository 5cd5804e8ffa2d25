import Foundation
import StompboxCore
import StompboxDSP

/// `session.json`, the manifest at the root of a session file:
///
/// `{"format":"stompbox-session","version":1,"sample_rate":48000,"tempo_bpm":120,"cycle_frames":0,"tracks":[…]}`
///
/// Frame counts (`cycle_frames`, and each track's `start` and `frames`) are at `sample_rate` and
/// are what counts: a track's audio must hold exactly `frames` frames at that rate. Keys this
/// version does not know, at the top and in each track, are kept as read and written back, so a
/// newer Stompbox's additions survive an older one's save. A newer `version` is refused before
/// anything else is read.
public struct SessionManifest: Equatable, Sendable {
    public static let format = "stompbox-session"
    public static let version = 1

    public var sampleRate: Int
    public var tempoBPM: Double
    /// The loop cycle in frames; 0 until a loop sets it.
    public var cycleFrames: Int
    public var tracks: [SessionTrack]
    /// Top-level keys this version does not know, as read.
    public var unknown: [String: JSONValue] = [:]

    public init(sampleRate: Int, tempoBPM: Double, cycleFrames: Int = 0, tracks: [SessionTrack] = []) {
        self.sampleRate = sampleRate
        self.tempoBPM = tempoBPM
        self.cycleFrames = cycleFrames
        self.tracks = tracks
    }

    /// The rates a session may have.
    public static let sampleRates = 8_000...384_000
    /// The tempo parameter's range: a session's tempo is the board's `tempo.bpm`.
    public static let tempos = Double(Parameter.tempo.spec.minimum)...Double(Parameter.tempo.spec.maximum)

    public init(json: JSONValue) throws(SessionError.Problem) {
        var top = try Fields(json, "session.json")
        guard try top.string("format") == Self.format else {
            throw .badManifest("its format is not '\(Self.format)'")
        }
        // Checked before any other field, so a newer file is never half-read.
        let version = try top.number("version")
        guard version == version.rounded(), version >= 1 else { throw .badManifest("version: expected a whole number ≥ 1") }
        guard version <= Double(Self.version) else {
            throw .newerVersion(found: Int(exactly: version) ?? Int.max, supported: Self.version)
        }
        sampleRate = try top.integer("sample_rate", in: Self.sampleRates)
        tempoBPM = try top.number("tempo_bpm", in: Self.tempos)
        cycleFrames = try top.integer("cycle_frames", in: 0...Int(Int32.max))
        guard case .array(let items)? = top.take("tracks") else { throw .badManifest("tracks: expected a list") }
        tracks = []
        for (i, item) in items.enumerated() { tracks.append(try SessionTrack(json: item, index: i)) }
        var ids = Set<String>(), files = Set<String>()
        for t in tracks {
            guard ids.insert(t.id).inserted else { throw .badManifest("the track id '\(t.id)' appears twice") }
            guard files.insert(t.file).inserted else { throw .badManifest("the file '\(t.file)' belongs to two tracks") }
        }
        unknown = top.rest
    }

    public var json: JSONValue {
        var object = unknown
        object["format"] = .string(Self.format)
        object["version"] = .number(Double(Self.version))
        object["sample_rate"] = .number(Double(sampleRate))
        object["tempo_bpm"] = .number(tempoBPM)
        object["cycle_frames"] = .number(Double(cycleFrames))
        object["tracks"] = .array(tracks.map(\.json))
        return .object(object)
    }

    public func track(_ id: String) -> SessionTrack? { tracks.first { $0.id == id } }

    /// The session's length: where its last track ends.
    public var frames: Int { tracks.map { $0.start + $0.frames }.max() ?? 0 }
}

/// One track of a session: its audio file inside the archive, where it starts, how it plays in
/// the mix, who made it and what it was played through.
public struct SessionTrack: Equatable, Sendable {
    public enum Kind: String, CaseIterable, Sendable {
        /// The dry guitar as it came in, to be played through a board again.
        case di
        /// The board's output.
        case wet
        /// A loop track the Looper made.
        case loop
        /// An audio file brought in from elsewhere.
        case `import`
    }

    /// Letters, digits, `-` and `_` (it names the stem file of a mixdown).
    public var id: String
    public var author: String
    public var kind: Kind
    /// Its audio's path inside the archive (`audio/…`).
    public var file: String
    /// Where it starts in the session, in frames.
    public var start: Int
    /// Its length in frames (its audio holds exactly this many).
    public var frames: Int
    public var channels: Int
    public var gainDB: Double
    /// −1 (left) … 1 (right).
    public var pan: Double
    public var mute: Bool
    /// Lowercase hex SHA-256 of the audio file's bytes.
    public var sha256: String
    /// The board and settings it was played through: a preset (`Preset.json`), or nil for an import.
    public var board: JSONValue?
    /// The render's `--at` actions (`SECONDS:ACTION`) after the board's settings, in order.
    public var actions: [String] = []
    /// Track keys this version does not know, as read.
    public var unknown: [String: JSONValue] = [:]

    public init(id: String, author: String, kind: Kind, file: String, start: Int, frames: Int, channels: Int,
                gainDB: Double = 0, pan: Double = 0, mute: Bool = false, sha256: String, board: JSONValue? = nil,
                actions: [String] = []) {
        self.id = id
        self.author = author
        self.kind = kind
        self.file = file
        self.start = start
        self.frames = frames
        self.channels = channels
        self.gainDB = gainDB
        self.pan = pan
        self.mute = mute
        self.sha256 = sha256
        self.board = board
        self.actions = actions
    }

    public static let gains = -120.0...24.0
    /// Where a track may end at the latest: over 12 hours at 48 kHz. A mixdown is made in memory,
    /// so a manifest's frame numbers must not ask for more than a machine can hold.
    public static let maximumFrames = Int(Int32.max)
    public static let pans = -1.0...1.0
    public static let maximumChannels = 8

    init(json: JSONValue, index: Int) throws(SessionError.Problem) {
        var f = try Fields(json, "tracks[\(index)]")
        id = try f.string("id")
        guard Self.isValidID(id) else {
            throw .badManifest("tracks[\(index)].id '\(id)': expected 1 to 64 letters, digits, '-' or '_'")
        }
        f.context = "track '\(id)'"
        author = try f.string("author")
        let kindName = try f.string("kind")
        guard let kind = Kind(rawValue: kindName) else {
            throw .badManifest("track '\(id)': kind '\(kindName)' is none of \(Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        self.kind = kind
        file = try f.string("file")
        guard SessionArchive.isSafeEntryPath(file) else { throw .unsafePath(file) }
        guard Self.isSafeAudioPath(file) else {
            throw .badManifest("track '\(id)': file '\(file)' must be audio/NAME (a file directly in the audio folder)")
        }
        start = try f.integer("start", in: 0...Self.maximumFrames)
        frames = try f.integer("frames", in: 0...Self.maximumFrames)
        guard start + frames <= Self.maximumFrames else {
            throw .badManifest("track '\(id)' ends after frame \(Self.maximumFrames), more than a session may hold")
        }
        channels = try f.integer("channels", in: 1...Self.maximumChannels)
        gainDB = try f.number("gain_db", in: Self.gains)
        pan = try f.number("pan", in: Self.pans)
        mute = try f.bool("mute")
        sha256 = try f.string("sha256")
        guard sha256.count == 64, sha256.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else {
            throw .badManifest("track '\(id)': sha256 is not 64 lowercase hex digits")
        }
        if let value = f.take("board"), value != .null {
            guard case .object = value else { throw .badManifest("track '\(id)': board: expected a preset object") }
            board = value
        }
        if let value = f.take("actions") {
            guard case .array(let items) = value else { throw .badManifest("track '\(id)': actions: expected a list of texts") }
            actions = []
            for item in items {
                guard case .string(let s) = item else { throw .badManifest("track '\(id)': actions: expected a list of texts") }
                actions.append(s)
            }
        }
        unknown = f.rest
    }

    var json: JSONValue {
        var object = unknown
        object["id"] = .string(id)
        object["author"] = .string(author)
        object["kind"] = .string(kind.rawValue)
        object["file"] = .string(file)
        object["start"] = .number(Double(start))
        object["frames"] = .number(Double(frames))
        object["channels"] = .number(Double(channels))
        object["gain_db"] = .number(gainDB)
        object["pan"] = .number(pan)
        object["mute"] = .bool(mute)
        object["sha256"] = .string(sha256)
        if let board { object["board"] = board }
        if !actions.isEmpty { object["actions"] = .array(actions.map { .string($0) }) }
        return .object(object)
    }

    public static func isValidID(_ id: String) -> Bool {
        (1...64).contains(id.count) && id.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_") }
    }

    /// `audio/NAME`, with NAME a plain file name: nothing absolute, no `..`, no folders below.
    public static func isSafeAudioPath(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 2 && parts[0] == "audio" && SessionArchive.isSafeEntryPath(path)
            && !parts[1].isEmpty && !parts[1].hasPrefix(".")
    }
}

/// The fields of a JSON object, taken one by one; what is left over is the unknown keys.
private struct Fields {
    var rest: [String: JSONValue]
    var context: String

    init(_ value: JSONValue, _ context: String) throws(SessionError.Problem) {
        guard case .object(let object) = value else { throw .badManifest("\(context): expected an object") }
        rest = object
        self.context = context
    }

    mutating func take(_ key: String) -> JSONValue? { rest.removeValue(forKey: key) }

    mutating func string(_ key: String) throws(SessionError.Problem) -> String {
        guard case .string(let s)? = take(key) else { throw .badManifest("\(context): \(key): expected a text") }
        return s
    }

    mutating func bool(_ key: String) throws(SessionError.Problem) -> Bool {
        guard case .bool(let b)? = take(key) else { throw .badManifest("\(context): \(key): expected true or false") }
        return b
    }

    mutating func number(_ key: String) throws(SessionError.Problem) -> Double {
        guard case .number(let n)? = take(key) else { throw .badManifest("\(context): \(key): expected a number") }
        return n
    }

    mutating func number(_ key: String, in range: ClosedRange<Double>) throws(SessionError.Problem) -> Double {
        let n = try number(key)
        guard range.contains(n) else { throw .badManifest("\(context): \(key): \(n) is outside \(range.lowerBound)…\(range.upperBound)") }
        return n
    }

    mutating func integer(_ key: String, in range: ClosedRange<Int>) throws(SessionError.Problem) -> Int {
        let n = try number(key)
        // Compared as Doubles first: a huge number must not trap converting to Int.
        guard n == n.rounded(), n >= Double(range.lowerBound), n <= Double(range.upperBound) else {
            throw .badManifest("\(context): \(key): expected a whole number in \(range.lowerBound)…\(range.upperBound)")
        }
        return Int(n)
    }
}
