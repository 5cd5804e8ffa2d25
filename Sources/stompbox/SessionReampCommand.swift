import ArgumentParser
import Foundation
import StompboxAudio
import StompboxCore
import StompboxDSP
import StompboxSession

/// `stompbox session reamp S --track ID --author NAME [--preset N | --chain … --set …]`
struct SessionReampCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reamp", abstract: "Plays a DI track through a board again, as a new wet track.",
        discussion: """
            The board is built as 'render' builds it: --preset (a preset file, or slot 1, 2 or 3), \
            then --chain, --add, --set and --at. With none of them, the track is played through the \
            board it was recorded with (its preset and --at actions): the same board gives the \
            recorded wet track again.
            """)

    @Argument(help: "The session file.")
    var session: String

    @Option(name: .long, help: ArgumentHelp("The id of the DI track to play.", valueName: "id"))
    var track: String

    @Option(name: .long, help: ArgumentHelp("Who re-amps it.", valueName: "name"))
    var author: String

    @Option(name: .long, help: ArgumentHelp("A preset file (JSON), or a preset slot 1, 2 or 3.", valueName: "n"))
    var preset: String?

    @OptionGroup var board: BoardOptions

    @Option(name: .long, help: ArgumentHelp("How the new track's audio is stored: flac (24-bit, default) or wav-float.", valueName: "format"))
    var format: String?

    @Option(name: .customLong("public-key"),
            help: ArgumentHelp("A store public key file in place of the shipped one (or set $\(Store.publicKeyVariable)).", valueName: "file"))
    var publicKey: String?

    func run() throws {
        installCabinets()
        let s = SessionCLI.open(session)
        guard let dry = s.manifest.track(track) else { fail(SessionError(path: session, .unknownTrack(track)).description) }
        let storage = SessionCLI.audioFormat(format)
        let store = StoreGate(publicKeyFile: publicKey)
        let ownBoard = preset == nil && board.changeNothing
        do {
            let plan: RenderPlan
            let played: [String]
            if ownBoard {
                guard let recordedBoard = dry.board else {
                    throw CommandLineError("track '\(track)' has no board of its own; give --preset or --chain")
                }
                let recorded: Preset
                do { recorded = try Preset(json: recordedBoard) } catch {
                    throw CommandLineError(SessionError(path: session, .badBoard(track: track, detail: error.description)).description)
                }
                played = dry.actions
                plan = try RenderCommand.makePlan(preset: recorded, chain: nil, additions: [], assignments: [], actions: played,
                                                  tail: board.tail, channels: nil, gate: store.gate)
            } else {
                played = board.actions
                plan = try RenderCommand.makePlan(preset: try preset.map(Self.loadPreset), chain: board.chain, additions: board.additions,
                                                  assignments: board.assignments, actions: played, tail: board.tail, channels: nil, gate: store.gate)
            }
            let renderer = OfflineRenderer(plan: plan)
            renderer.warn = { warn($0) }
            renderer.permit = { write throws(RenderError) in
                do { try store.check(write.parameter, write.value) } catch { throw .refused(write, reason: "\(error)") }
            }
            let wet = try s.reamp(track, with: renderer, board: SessionCLI.board(of: plan), actions: played,
                                  author: author, format: storage)
            SessionCLI.save(s)
            print("added \(wet.id) to \(session): \(track) played through \(plan.board.map(\.id).joined(separator: ", ")), \(wet.frames) frames")
        } catch let error as CommandLineError {
            fail(error.message)
        } catch let error as SessionError {
            fail(error.description)
        } catch let error as RenderActionError {
            fail(error.description)
        }
    }

    /// `--preset N`: a preset file, or (when no such file exists) slot 1, 2 or 3 of the preset bank.
    static func loadPreset(_ text: String) throws -> Preset {
        if !FileManager.default.fileExists(atPath: text), let n = Int(text) {
            guard (1...PresetBank.slotCount).contains(n) else {
                throw CommandLineError("--preset \(text): no such file, and the preset slots are 1 to \(PresetBank.slotCount)")
            }
            do { return try PresetLibrary()[n - 1] } catch { throw CommandLineError("--preset \(text): \(error)") }
        }
        return try RenderCommand.loadPreset(text)
    }
}
