import Foundation
import StompboxAudio
import StompboxCore
import StompboxDSP

/// A live recording (`Recorder`'s folder) put into its session file: the dry input as a `di`
/// track and the board's output as a `wet` track, and the Looper's loop tracks. A take made
/// against a session's tracks (its `backing`) is put in time with them: the engine's latency
/// when it began is cut from its head, as the player heard the backing that much late.
///
/// While `run --record S` plays, the audio goes to `S.recording/` beside the session; only
/// when it stops is it packed into `S` and the folder removed. A folder left by a killed run
/// (or a power cut) is packed the same way by `recover`: its WAV headers were brought up to
/// date twice a second, so it holds all but at most the last half second.
public enum SessionRecording {
    /// Where `run --record` records for the session at `path`.
    public static func folder(for path: String) -> String { path + ".recording" }

    /// True when a recording for `path` was left unpacked.
    public static func isPending(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: folder(for: path))
    }

    /// The board a live take is played through, as a track records it: a preset of the chain's
    /// pedals, their states and every parameter as it is now; nil if the board cannot be one.
    public static func board(of chain: Chain) -> JSONValue? {
        var preset = Preset(name: "recording")
        for p in Parameter.allCases { preset[p] = chain.parameters.load(p) }
        do { try preset.setBoard(chain.board, states: chain.pedalStates) } catch { return nil }
        return preset.json
    }

    /// Starts a take for the session at `path` on the running `engine`: the dry input and the
    /// board's output are recorded into `folder(for: path)`, and `session`'s tracks (as opened;
    /// nil while there is no file yet) play along from the take's first block. The engine's
    /// latency is noted with the take, so `pack` puts it in time with what was heard. A session
    /// at another rate than the engine's plays along converted to the engine's, and the take is
    /// converted to the session's when it is packed.
    public static func begin(path: String, session: Session?, engine: LiveEngine, author: String) throws(SessionError) -> Recorder {
        let rate = Int(engine.chain.sampleRate)
        let backing = try session.flatMap { s throws(SessionError) in try Self.backing(for: s, at: rate) }
        let latency = Int(((engine.status().latencyMs ?? 0) / 1000 * Double(rate)).rounded())
        do {
            let recorder = try Recorder(folder: folder(for: path), sampleRate: rate, author: author,
                                        backingSource: backing, latencyFrames: backing == nil ? 0 : latency)
            engine.startRecording(recorder)
            return recorder
        } catch {
            throw SessionError(path: path, .audio(error))
        }
    }

    /// What a take on `session` plays along with: its mix (gains, pans and mutes applied) at
    /// `rate`; nil when it has no track to hear. At the session's rate it is mixed a block at a
    /// time as the take goes; at another, converted whole in memory first.
    static func backing(for session: Session, at rate: Int) throws(SessionError) -> BackingSource? {
        guard session.manifest.tracks.contains(where: { !$0.mute }), session.manifest.frames > 0 else { return nil }
        if rate == session.manifest.sampleRate { return try SessionMix(session) }
        let mix = try session.mixdown().mix.resampled(to: rate)
        return mix.frames > 0 ? ArrayBacking(mix.samples) : nil
    }

    /// What `pack` added.
    public struct Packed: Sendable {
        public var tracks: [SessionTrack]
        /// Seconds of DI and wet.
        public var seconds: Double
        /// True when the recording had not been closed (a killed run).
        public var recovered: Bool
    }

    /// Adds the recording in `folder(for: path)` to the session at `path` (made at the
    /// recording's rate and `tempoBPM` if there is none) and removes the folder once the session
    /// is saved. `loops` are the Looper's tracks as it holds them at the end, `clockAtStart`
    /// the Looper's clock when the recording began (their `start` is counted from there); they
    /// are muted in the mix when the take's wet track holds what they played.
    /// An error leaves both the session and the folder as they were.
    @discardableResult
    public static func pack(into path: String, tempoBPM: Double, board: JSONValue?, loops: [LoopTrackAudio] = [],
                            loopGains: [(gainDB: Double, pan: Double, mute: Bool)] = [], clockAtStart: Int = 0,
                            cycleFrames: Int = 0, format: SessionAudioFormat = .flac) throws(SessionError) -> Packed {
        let folder = folder(for: path)
        func fail(_ problem: SessionError.Problem) -> SessionError { SessionError(path: path, problem) }
        let manifestPath = folder + "/" + RecordingFolder.manifest
        guard let data = FileManager.default.contents(atPath: manifestPath),
              case .object(let json)? = try? JSONValue.parse(data),
              case .string("stompbox-recording")? = json["format"] else {
            throw fail(.invalid("the recording in '\(folder)' has no readable \(RecordingFolder.manifest)"))
        }
        var author = "unknown", complete = false, late = 0
        if case .string(let a)? = json["author"] { author = a }
        if case .bool(let c)? = json["complete"] { complete = c }
        // What was played against a backing came this much late: the take starts this much in.
        if case .number(let n)? = json["latency_frames"], n.isFinite, n >= 0, n < 1e9 { late = Int(n) }
        // The takes are read a block at a time and encoded straight to files in the folder,
        // which the session maps rather than reads: packing hours costs no more memory than minutes.
        let dryFile = folder + "/" + RecordingFolder.di, wetFile = folder + "/" + RecordingFolder.wet
        let rate: Int, frames: Int
        do {
            let dry = try AudioFileReader(path: dryFile), wet = try AudioFileReader(path: wetFile)
            guard dry.channels == 1, wet.channels == 2, dry.sampleRate == wet.sampleRate else {
                throw fail(.invalid("the recording in '\(folder)' is not a mono DI and a stereo output at one rate"))
            }
            rate = dry.sampleRate
            // A killed run's two headers were updated at slightly different moments: keep the
            // part both hold, so DI and wet stay the same length.
            frames = max(0, min(dry.frames, wet.frames) - late)
        } catch let error as SessionError {
            throw error
        } catch let error as AudioFileError {
            throw fail(.audio(error))
        } catch {
            throw fail(.invalid("\(error)"))
        }
        let session: Session
        if FileManager.default.fileExists(atPath: path) {
            session = try Session.open(path)
        } else {
            session = try Session(path: path, sampleRate: rate, tempoBPM: tempoBPM)
        }
        // A session at another rate: the take is converted to it, its places scaled.
        let sessionRate = session.manifest.sampleRate
        let scale = Double(sessionRate) / Double(rate)
        func scaled(_ frames: Int) -> Int { Int((Double(frames) * scale).rounded()) }
        var added: [SessionTrack] = []
        if frames > 0 {
            let packedDry = folder + "/packed-di." + format.fileExtension
            let packedWet = folder + "/packed-wet." + format.fileExtension
            let packed: Int
            do {
                packed = try AudioFile.transcode(dryFile, skipping: late, frames: frames, to: packedDry,
                                                 format: format.fileFormat, samples: format.samples, rate: sessionRate)
                try AudioFile.transcode(wetFile, skipping: late, frames: frames, to: packedWet,
                                        format: format.fileFormat, samples: format.samples, rate: sessionRate)
            } catch {
                throw fail(.audio(error))
            }
            added.append(try session.addTrack(encodedFile: packedDry, format: format, channels: 1, frames: packed,
                                              kind: .di, author: author, mute: true, board: board))
            added.append(try session.addTrack(encodedFile: packedWet, format: format, channels: 2, frames: packed,
                                              kind: .wet, author: author, board: board))
        }
        for (i, loop) in loops.enumerated() {
            let g = i < loopGains.count ? loopGains[i] : (gainDB: 0, pan: 0, mute: false)
            added.append(try session.addTrack(AudioBuffer(loop: loop, sampleRate: rate),
                                              kind: .loop, author: author, start: scaled(max(0, loop.start - clockAtStart)),
                                              gainDB: g.gainDB, pan: g.pan, mute: frames > 0 || g.mute, board: board, format: format))
        }
        if cycleFrames > 0 && session.cycleFrames == 0 { session.cycleFrames = scaled(cycleFrames) }
        try session.save()
        try? FileManager.default.removeItem(atPath: folder)
        return Packed(tracks: added, seconds: Double(frames) / Double(rate), recovered: !complete)
    }
}

extension AudioBuffer {
    /// A loop track's audio as a track's: mono, or its two sides interleaved.
    public init(loop: LoopTrackAudio, sampleRate: Int) {
        guard loop.isStereo else {
            self.init(samples: loop.left, sampleRate: sampleRate, channels: 1)
            return
        }
        var samples = [Float](repeating: 0, count: 2 * loop.length)
        for j in 0..<loop.length {
            samples[2 * j] = loop.left[j]
            samples[2 * j + 1] = loop.right[j]
        }
        self.init(samples: samples, sampleRate: sampleRate, channels: 2)
    }
}
