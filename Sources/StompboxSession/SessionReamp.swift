import Foundation
import StompboxAudio
import StompboxCore

extension Session {
    /// Plays a dry track (`di`, or an `import` of a dry recording) through `renderer`'s plan and
    /// adds the result as a new `wet` track by `author`, starting where the dry one starts, with
    /// `board` (the plan as a preset, `Preset.json`) and `actions` (the plan's `--at` texts)
    /// recorded on it. The chain is deterministic, so through the board a wet track was recorded
    /// with this gives that track again.
    ///
    /// The renderer reads and writes files a block at a time: the dry track's bytes and the
    /// render go through a private temporary folder, removed before this returns (the new track's
    /// audio stays mapped until the session is saved).
    @discardableResult
    public func reamp(_ id: String, with renderer: OfflineRenderer, board: JSONValue, actions: [String],
                      author: String, format: SessionAudioFormat = .flac) throws(SessionError) -> SessionTrack {
        func fail(_ problem: SessionError.Problem) -> SessionError { SessionError(path: path, problem) }
        guard let track = manifest.track(id) else { throw fail(.unknownTrack(id)) }
        guard track.kind == .di || track.kind == .import else {
            throw fail(.invalid("track '\(id)' is a \(track.kind.rawValue) track; only a di or import track is played through a board again"))
        }
        guard let bytes = storedAudio(of: id) else { throw fail(.missingAudio(track: id, file: track.file)) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stompbox-reamp-\(UUID().uuidString)")
        do { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false) } catch {
            throw fail(.unwritable("no temporary folder for the render (\(error.localizedDescription))"))
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("dry." + (track.file as NSString).pathExtension)
        let output = folder.appendingPathComponent(format == .flac ? "wet.flac" : "wet.wav")
        do { try bytes.write(to: input) } catch {
            throw fail(.unwritable("cannot write the dry track for the render (\(error.localizedDescription))"))
        }
        renderer.samples = format.samples
        // The render is the track's file as it is (mapped, not read): a DI of hours is never in memory.
        let rendered: (channels: Int, frames: Int)
        do {
            try renderer.render(input: input.path, output: output.path)
            let header = try AudioFileReader(path: output.path)
            rendered = (header.channels, header.frames)
        } catch let error as RenderError {
            throw fail(.badBoard(track: id, detail: error.description))
        } catch let error as AudioFileError {
            throw fail(.audio(error))
        } catch {
            throw fail(.invalid("\(error)"))
        }
        return try addTrack(encodedFile: output.path, format: format, channels: rendered.channels, frames: rendered.frames,
                            kind: .wet, author: author, start: track.start, board: board, actions: actions)
    }
}
