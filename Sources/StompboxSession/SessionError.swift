import StompboxAudio

/// Why a session file was refused or could not be written: one sentence naming the session and
/// the problem. A session is refused whole: nothing of a refused file is used.
public struct SessionError: Error, Equatable, CustomStringConvertible {
    /// The session file's path as the user gave it.
    public let path: String
    public let problem: Problem

    public init(path: String, _ problem: Problem) {
        self.path = path
        self.problem = problem
    }

    public var description: String { "session '\(path)': \(problem)" }

    public enum Problem: Error, Equatable, CustomStringConvertible {
        /// Nothing at that path.
        case missing
        /// Writing a new session where a file already is.
        case exists
        /// Not a ZIP archive (or one damaged beyond reading); `detail` is the reader's reason.
        case notAnArchive(String)
        /// An entry's path is absolute or climbs out of the archive (`..`).
        case unsafePath(String)
        /// The archive holds a symbolic link (which could point anywhere on the disk).
        case link(String)
        /// An entry declares more bytes than a session may hold (a ZIP bomb, or not a session).
        case tooLarge(entry: String, declared: UInt64, limit: UInt64)
        /// An entry inflates to more bytes than it declares.
        case overflowing(String)
        /// No `session.json` at the archive's root.
        case noManifest
        /// `session.json` is not valid JSON, or a field is missing or of the wrong kind.
        case badManifest(String)
        /// Written by a newer Stompbox, in a format this one does not read.
        case newerVersion(found: Int, supported: Int)
        /// A track's audio file named in the manifest is not in the archive.
        case missingAudio(track: String, file: String)
        /// A track's audio bytes do not have the SHA-256 the manifest gives.
        case wrongHash(track: String, file: String)
        /// A track's audio is not what the manifest says (frames, rate, channels), or not audio.
        case wrongAudio(track: String, file: String, detail: String)
        /// No track with this id.
        case unknownTrack(String)
        /// An audio file to import or write cannot be used.
        case audio(AudioFileError)
        /// A track's board cannot be used to play its audio again.
        case badBoard(track: String, detail: String)
        /// The command asks for something the session cannot do (a DI track to re-amp, …).
        case invalid(String)
        /// The session cannot be written there.
        case unwritable(String)

        public var description: String {
            switch self {
            case .missing: "does not exist"
            case .exists: "exists already and is left as it is"
            case .notAnArchive(let detail): "is not a session file (not a readable ZIP archive: \(detail))"
            case .unsafePath(let entry): "refused: the entry '\(entry)' has a path that climbs out of the session (absolute, with '..', or another system's folder marks)"
            case .link(let entry): "refused: the entry '\(entry)' is a symbolic link"
            case .tooLarge(let entry, let declared, let limit):
                "refused: the entry '\(entry)' declares \(declared) bytes, more than a session may hold (\(limit))"
            case .overflowing(let entry): "refused: the entry '\(entry)' holds more bytes than it declares"
            case .noManifest: "is not a session file (no session.json at its root)"
            case .badManifest(let detail): "its session.json cannot be read: \(detail)"
            case .newerVersion(let found, let supported):
                "was written by a newer Stompbox (session format version \(found); this one reads up to version \(supported)); nothing of it was read"
            case .missingAudio(let track, let file): "track '\(track)': its audio file '\(file)' is missing from the session"
            case .wrongHash(let track, let file):
                "track '\(track)': its audio file '\(file)' does not match the SHA-256 in session.json (damaged or changed)"
            case .wrongAudio(let track, let file, let detail): "track '\(track)': its audio file '\(file)' \(detail)"
            case .unknownTrack(let id): "has no track '\(id)'"
            case .audio(let e): e.description
            case .badBoard(let track, let detail): "track '\(track)': its board cannot be played: \(detail)"
            case .invalid(let why): why
            case .unwritable(let why): "cannot be written: \(why)"
            }
        }
    }
}
