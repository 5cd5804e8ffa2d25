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

    @Option(name: .long, help: ArgumentHelp(RenderCommand.chainHelp, valueName: "id,id,…"))
    var chain: String?

    @Option(name: .customLong("add"), parsing: .unconditionalSingleValue,
            help: ArgumentHelp(RenderCommand.addHelp, valueName: "id=lv2:uri"))
    var additions: [String] = []

    @Option(name: .customLong("set"), parsing: .unconditionalSingleValue,
            help: ArgumentHelp("Set a parameter (after --preset), e.g. delay.time_ms=420.", valueName: "id=value"))
    var assignments: [String] = []

    @Option(name: .customLong("at"), parsing: .unconditionalSingleValue,
            help: ArgumentHelp("At a time in seconds: ID=VALUE, looper.tap, looper.hold or looper.undo.", valueName: "seconds:action"))
    var actions: [String] = []

    @Option(name: .long, parsing: .unconditional,
            help: ArgumentHelp("Seconds of silence played after the track so echoes ring out (default 0).", valueName: "seconds"))
    var tail: String?

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
        let ownBoard = preset == nil && chain == nil && additions.isEmpty && assignments.isEmpty && actions.isEmpty
        do {
            let plan: RenderPlan
            let played: [String]
            if ownBoard {
                guard let board = dry.board else {
                    throw CommandLineError("track '\(track)' has no board of its own; give --preset or --chain")
                }
                let recorded: Preset
                do { recorded = try Preset(json: board) } catch {
                    throw CommandLineError(SessionError(path: session, .badBoard(track: track, detail: error.description)).description)
                }
                played = dry.actions
                plan = try RenderCommand.makePlan(preset: recorded, chain: nil, additions: [], assignments: [], actions: played,
                                                  tail: tail, channels: nil, gate: store.gate)
            } else {
                played = actions
                plan = try RenderCommand.makePlan(preset: try preset.map(Self.loadPreset), chain: chain, additions: additions,
                                                  assignments: assignments, actions: played, tail: tail, channels: nil, gate: store.gate)
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
