import ArgumentParser
import Foundation
import StompboxAudio
import StompboxCore
import StompboxDSP

/// `stompbox render IN OUT [--preset FILE] [--chain ID,…] [--set ID=VALUE]… [--at SECONDS:ACTION]… [--tail SECONDS] [--channels 1|2]`
struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Renders an audio file through the chain.",
        discussion: """
            IN is any file libsndfile reads; its channels are mixed to one guitar signal, and the \
            board's stereo output (or its mono one, with --channels 1) is written to OUT at IN's \
            rate. OUT's extension picks the format (.wav, .aiff, .flac; 24-bit). OUT appears only \
            when the render succeeded.
            """)

    @Argument(help: "The audio file to play through the pedals.")
    var input: String

    @Argument(help: "The file to write (.wav, .aiff or .flac).")
    var output: String

    @Option(name: .long, help: ArgumentHelp("A preset file (JSON) to start from.", valueName: "file"))
    var preset: String?

    @OptionGroup var board: BoardOptions

    @Option(name: .long, parsing: .unconditional,
            help: ArgumentHelp("2 (default): the board's stereo output, left and right; 1: its mono output.", valueName: "1|2"))
    var channels: String?

    @Option(name: .customLong("public-key"),
            help: ArgumentHelp("A store public key file in place of the shipped one (or set $\(Store.publicKeyVariable)).", valueName: "file"))
    var publicKey: String?

    @Option(name: .long, help: ArgumentHelp("Also save the render in a session file (made if missing, else added to): IN as a di track (muted in the mix), OUT as a wet track with the board it went through.", valueName: "file.stompsession"))
    var session: String?

    @Option(name: .long, help: ArgumentHelp("The session tracks' author (default: the login name).", valueName: "name"))
    var author: String?

    func run() throws {
        installCabinets()
        do {
            let store = StoreGate(publicKeyFile: publicKey)
            let plan = try makePlan(gate: store.gate)
            let target = try session.map { path throws(CommandLineError) in try RenderSession(path: path, input: input, tempo: Double(plan[.tempo])) }
            let renderer = OfflineRenderer(plan: plan)
            renderer.warn = { warn($0) }
            // Every value the render sets, --at ones included, passes the licence gate.
            renderer.permit = { write throws(RenderError) in
                do { try store.check(write.parameter, write.value) } catch {
                    throw .refused(write, reason: "\(error)")
                }
            }
            var loops = RenderSession.Loops()
            if target != nil { renderer.finished = { loops = RenderSession.Loops(of: $0) } }
            let summary = try renderer.render(input: input, output: output)
            if let target {
                try target.save(input: input, output: output, plan: plan, actions: board.actions,
                                author: author ?? SessionCLI.defaultAuthor, loops: loops)
            }
            print("wrote \(output): \(summary.channels) channel\(summary.channels == 1 ? "" : "s"), \(summary.sampleRate) Hz, "
                  + String(format: "%.3f s", Double(summary.outputFrames) / Double(summary.sampleRate)))
            // Only after success, so a failure stays one line.
            if let first = plan.looperActionsWhileOff.first {
                warn("--at \(first) finds the looper switched off; add --set looper.enabled=on")
            }
        } catch let error as CommandLineError {
            fail(error.message)
        } catch let error as RenderError {
            fail(error.description)
        } catch let error as RenderActionError {
            fail(error.description)
        }
    }

    /// The preset, then `--set` in order, then `--at`, then `--tail`. A preset that switches a
    /// locked pedal on still loads, with that pedal off and a warning.
    func makePlan(gate: () -> FeatureGate = { .locked }) throws -> RenderPlan {
        try Self.makePlan(preset: preset.map(Self.loadPreset), chain: board.chain, additions: board.additions, assignments: board.assignments,
                          actions: board.actions, tail: board.tail, channels: channels, gate: gate)
    }

    /// The plan of `render` (and of `session reamp`) from its options; `preset` already read.
    static func makePlan(preset: Preset?, chain: String?, additions: [String], assignments: [String], actions: [String],
                         tail: String?, channels: String?, gate: () -> FeatureGate) throws -> RenderPlan {
        var plan = RenderPlan()
        var presetBoard = PedalKind.builtIn
        if let preset {
            let (admitted, notices) = gate().admit(preset)
            for notice in notices { warn(notice.description) }
            plan.parameters = admitted.values
            plan.states = admitted.states
            presetBoard = admitted.board
        }
        plan.board = try makeBoard(presetBoard, chain: chain, additions: additions)
        for text in assignments {
            if let file = try fileSetting(text, board: plan.board) {
                plan.states[file.pedal] = file.state
                plan[file.parameter] = file.value
                continue
            }
            let a = try ParameterAssignment(parsing: text, board: plan.board)
            try checkOnBoard(a.parameter, plan.board)
            plan[a.parameter] = a.value
        }
        let board = plan.board
        plan.actions = try actions.map { text throws(RenderActionError) in try RenderAction(parsing: text, board: board) }
        for action in plan.actions {
            if case .set(let a) = action.kind { try checkOnBoard(a.parameter, plan.board) }
            if case .looper = action.kind { try checkOnBoard(.looperEnabled, plan.board) }
        }
        if let tail {
            guard let seconds = Double(tail.trimmingCharacters(in: .whitespaces)), seconds.isFinite else {
                throw CommandLineError("--tail '\(tail)' is not a number of seconds")
            }
            guard seconds >= 0 else { throw CommandLineError("--tail must not be negative (got \(tail))") }
            plan.tailSeconds = seconds
        }
        switch channels?.trimmingCharacters(in: .whitespaces) {
        case nil, "2": plan.channels = 2
        case "1": plan.channels = 1
        case let other?: throw CommandLineError("--channels must be 1 or 2 (got '\(other)')")
        }
        return plan
    }

    /// `--set ID=PATH` for a choice whose last choice is a file of one's own (`cab.ir`,
    /// `neural.file`): a value
    /// that is none of its choices is a file, which must exist. Returns the pedal's state and the
    /// choice to set, or nil for any other assignment.
    static func fileSetting(_ text: String, board: [PedalKind]) throws(CommandLineError)
        -> (pedal: String, state: String, parameter: Parameter, value: Float)? {
        guard let eq = text.firstIndex(of: "=") else { return nil }
        let id = text[..<eq].trimmingCharacters(in: .whitespaces)
        let value = String(text[text.index(after: eq)...]).trimmingCharacters(in: .whitespaces)
        guard let p = Parameter(id: id), case .choice(let names) = p.spec.scale, names.last == Cabinet.fileChoice,
              let pedal = p.spec.pedal, (try? p.spec.parse(value)) == nil, !value.isEmpty else { return nil }
        try checkOnBoard(p, board)
        let path = URL(fileURLWithPath: value).standardizedFileURL.path
        var folder: ObjCBool = false
        let (choices, what) = p == .neuralFile ? ("none", "a model file")
            : ("a cabinet (\(names.dropLast().joined(separator: ", ")))", "an impulse response file")
        guard FileManager.default.fileExists(atPath: path, isDirectory: &folder), !folder.boolValue else {
            throw CommandLineError("--set \(id): '\(value)' is neither \(choices) nor \(what)")
        }
        // A model is read now: one that cannot be played is an error before rendering, not a
        // pedal quietly passing its input through.
        if p == .neuralFile {
            do { _ = try NeuralModels.load(file: path) } catch { throw CommandLineError("--set \(id): \(error)") }
        }
        return (pedal, FileState.json(file: path), p, Float(names.count - 1))
    }

    /// `--chain`'s help: the default board named from the registry, so it lists every built-in pedal.
    static let chainHelp = "The pedals on the board, in signal order (default: the preset's board, else every built-in pedal: \(PedalKind.builtIn.map(\.id).joined(separator: ", "))), e.g. overdrive,delay."

    static let addHelp = "An LV2 plugin as pedal ID, switched on (repeatable), e.g. fil=lv2:http://… (see 'stompbox plugins'); appended to the board unless --chain places it. Its control ports are parameters ID.<port symbol>."

    /// The board of `render` and `run`: the preset's (its plugin pedals looked up; a missing one
    /// stays bypassed, with a warning), or `--chain`'s, with each `--add` plugin pedal switched on
    /// and appended unless `--chain` places it. One line names any mistake.
    static func makeBoard(_ presetBoard: [PedalKind], chain: String?, additions: [String]) throws(CommandLineError) -> [PedalKind] {
        let (resolved, notices) = PedalKind.resolvingPlugins(presetBoard)
        for notice in notices { warn(notice) }
        var added: [PedalKind] = []
        for text in additions {
            let kind = try addition(text)
            guard !(added + resolved).contains(where: { $0.id == kind.id }) else {
                throw CommandLineError("--add \(text): there is already a pedal '\(kind.id)'")
            }
            kind.enabledParameter.setPedalValue(1)
            added.append(kind)
        }
        var board = resolved
        if let chain {
            do { board = try PedalKind.board(parsing: chain, among: added + resolved.filter { $0.plugin != nil }) } catch {
                throw CommandLineError("--chain: \(error.description)")
            }
        }
        board += added.filter { !board.contains($0) }
        do { try PedalKind.checkDistinct(board) } catch { throw CommandLineError(error.description) }
        return board
    }

    /// `ID=lv2:URI`: the plugin as a pedal (switched off), or one line naming the mistake.
    static func addition(_ text: String) throws(CommandLineError) -> PedalKind {
        guard let eq = text.firstIndex(of: "="), text[text.index(after: eq)...].hasPrefix("lv2:") else {
            throw CommandLineError("--add '\(text)': expected ID=lv2:URI, e.g. fil=lv2:http://gareus.org/oss/lv2/fil4#mono")
        }
        let id = text[..<eq].trimmingCharacters(in: .whitespaces)
        let uri = String(text[text.index(eq, offsetBy: 5)...]).trimmingCharacters(in: .whitespaces)
        guard !id.isEmpty, id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
            throw CommandLineError("--add '\(text)': the pedal id '\(id)' must be letters, digits, _ or -")
        }
        guard !PedalKind.isReserved(id) else {
            throw CommandLineError("--add '\(text)': '\(id)' is reserved (a built-in pedal's id or a parameter prefix); choose another")
        }
        do { return try PedalKind.lv2(id: id, uri: uri) } catch { throw CommandLineError("--add \(id): \(error.description)") }
    }

    static func checkOnBoard(_ parameter: Parameter, _ board: [PedalKind]) throws(CommandLineError) {
        do { try PedalKind.check(parameter, on: board) } catch { throw CommandLineError(error.description) }
    }

    static func loadPreset(_ path: String) throws(CommandLineError) -> Preset {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw CommandLineError("preset '\(path)' does not exist")
        }
        guard !isFolder.boolValue else { throw CommandLineError("preset '\(path)' is a folder, not a file") }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw CommandLineError("cannot read preset '\(path)': \(error.localizedDescription)")
        }
        do { return try Preset(jsonData: data) } catch {
            throw CommandLineError("preset '\(path)': \(error.description)")
        }
    }
}

/// A mistake on the command line, said in one line.
struct CommandLineError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Prints `stompbox: warning: …` as one line on stderr.
/// The licence gate, read from the store (licence file, public key, signatures) only when a
/// render needs it: a preset to admit, or a value the locked gate refuses (the Looper's). A
/// render that touches no locked pedal does not open the store. Its notes are printed when it is
/// opened.
final class StoreGate {
    private let publicKeyFile: String?
    private var opened: FeatureGate?

    init(publicKeyFile: String?) { self.publicKeyFile = publicKeyFile }

    func gate() -> FeatureGate {
        if let opened { return opened }
        let (gate, notes) = Store.currentGate(publicKeyFile: publicKeyFile)
        for note in notes { warn(note) }
        opened = gate
        return gate
    }

    func check(_ parameter: Parameter, _ value: Float) throws(LockedError) {
        if (try? FeatureGate.locked.check(parameter, value)) != nil { return }
        try gate().check(parameter, value)
    }
}

func warn(_ message: String) {
    FileHandle.standardError.write(Data("stompbox: warning: \(message)\n".utf8))
}

/// Prints `stompbox: error: …` as one line on stderr and exits with status 1.
func fail(_ message: String) -> Never {
    let line = "stompbox: error: " + message.replacingOccurrences(of: "\n", with: " ") + "\n"
    FileHandle.standardError.write(Data(line.utf8))
    Stompbox.exit(withError: ExitCode.failure)
}
