import ArgumentParser
import Foundation
import StompboxAudio
import StompboxCore
import StompboxDSP
import StompboxSession

/// `stompbox run --headless …`: plays live through PulseAudio and prints one status line a second.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "Plays live through PulseAudio or JACK.",
        discussion: """
        Prints one status line a second, e.g.
          state=running latency_ms=10.9 underruns=0 overruns=0 in_peak_db=-12.3 out_peak_db=-9.8 target_ms=8 drift_ppm=0.0 rt=fifo:10
        state is running, waiting-for-input, waiting-for-output or no-server; target_ms is the margin
        in force (raised by automatic latency), drift_ppm how fast the input's clock runs against
        the output's (0 while they share one); rt the audio thread's real-time priority (fifo:N
        taken directly, rtkit:N from RealtimeKit, none: refused both ways, playing on; see
        'stompbox realtime'). Stops on SIGINT/SIGTERM
        or after --seconds. The window is 'stompbox' with no arguments; 'run' is always headless.
        Playing through JACK (--backend jack, or auto finding a JACK server), the line ends with
        backend=jack period=FRAMES rate=HZ dsp_load=PERCENT, latency_ms is JACK's port latencies plus
        the pedals' own, and underruns counts JACK's xruns. On PipeWire's JACK, --block is the
        quantum Stompbox asks the graph for. The line ends with preset=N (the preset slot a
        footswitch last played, '-' before one has) and pedals_on=ID,ID (the pedals switched on).

        Foot control: MIDI arrives on the ALSA sequencer's Stompbox:midi_in (connected from every
        hardware MIDI device) and, on JACK, on stompbox:midi_in. By default Program Change 0/1/2
        plays the saved presets 1/2/3 (presets.json, as the window keeps them) and CC 80-86 switch
        the board's pedals in order (value 64 and up: on); controls.json changes the mapping.
        """)

    @Flag(help: "Play without a window (the only mode of this command; the window is 'stompbox' with no arguments).")
    var headless = false

    @Option(help: ArgumentHelp(LiveBackend.help, valueName: "pulse|jack|auto"))
    var backend = "auto"

    @Flag(name: .customLong("no-connect"), help: ArgumentHelp(LiveBackend.noConnectHelp))
    var noConnect = false

    @Option(help: "A source name from 'stompbox devices' (with JACK: a port, e.g. system:capture_2), or 'demo' for the bundled riff. Default: the server's default source (JACK: the first physical capture port).")
    var input: String?

    @Option(name: .customLong("input-channel"), help: "Which channel of the input carries the guitar (1-based).")
    var inputChannel = 1

    @Option(help: "A sink name from 'stompbox devices' (with JACK: a port for out_1, or PORT1,PORT2). Default: the server's default sink (JACK: the first two physical playback ports).")
    var output: String?

    @Option(help: "Frames per block, 64…1024.")
    var block = LiveSettings().blockSize

    @Option(name: .customLong("latency-ms"),
            help: "Playback margin in milliseconds, 2…200: the output kept queued when a block is written (end to end: about this plus one block).")
    var latencyMs = LiveSettings().latencyMs

    @Flag(name: .customLong("no-auto-latency"), help: "Keep --latency-ms even when dropouts keep happening (by default it is raised step by step, up to --max-latency-ms).")
    var noAutoLatency = false

    @Option(name: .customLong("max-latency-ms"), help: "How far automatic latency may raise the margin, in milliseconds.")
    var maxLatencyMs = LiveSettings().autoLatencyCapMs

    @Option(help: "Sample rate in Hz.")
    var rate = LiveSettings().sampleRate

    @Option(help: "A single-preset JSON file to start from.")
    var preset: String?

    @Option(help: ArgumentHelp(RenderCommand.chainHelp, valueName: "id,id,…"))
    var chain: String?

    @Option(name: .customLong("add"), parsing: .unconditionalSingleValue,
            help: ArgumentHelp(RenderCommand.addHelp, valueName: "id=lv2:uri"))
    var additions: [String] = []

    @Option(name: .customLong("set"), parsing: .unconditionalSingleValue,
            help: "ID=VALUE, e.g. overdrive.enabled=on (repeatable; see 'stompbox params').")
    var assignments: [String] = []

    @Option(name: .customLong("public-key"),
            help: ArgumentHelp("A store public key file in place of the shipped one (or set $\(Store.publicKeyVariable)).", valueName: "file"))
    var publicKey: String?

    @Option(help: "Stop after this many seconds (default: until SIGINT/SIGTERM).")
    var seconds: Double?

    @Option(help: ArgumentHelp("Record the dry input and the board's output, until stopped, into this session file (made if missing; the Looper's loop tracks are added when it stops).", valueName: "S.stompsession"))
    var record: String?

    @Option(help: "Who plays the recorded tracks (default: the login name).")
    var author: String?

    @Option(help: ArgumentHelp("How recorded tracks are stored in the session: flac (24-bit) or wav-float.", valueName: "flac|wav-float"))
    var format: String?

    @Option(name: .customLong("write-demo-riff"), help: .hidden)
    var writeDemoRiff: String?

    func validate() throws {
        guard LiveBackend.parse(backend) != nil else { throw ValidationError("--backend must be pulse, jack or auto (not '\(backend)')") }
        guard (64...1024).contains(block) else { throw ValidationError("--block must be 64…1024 frames") }
        guard (2...200).contains(latencyMs) else { throw ValidationError("--latency-ms must be 2…200") }
        guard (2...200).contains(maxLatencyMs) else { throw ValidationError("--max-latency-ms must be 2…200") }
        guard inputChannel >= 1 else { throw ValidationError("--input-channel counts from 1") }
        guard (8_000...192_000).contains(rate) else { throw ValidationError("--rate must be 8000…192000 Hz") }
        if let seconds, !(seconds > 0) { throw ValidationError("--seconds must be positive") }
    }

    func run() throws {
        if let path = writeDemoRiff {
            try DemoRiffFile.write(to: path)
            return
        }
        if !headless {
            FileHandle.standardError.write(Data("stompbox: 'run' plays headless; the window is 'stompbox' with no arguments.\n".utf8))
        }

        let controls = EngineControls()
        var board = PedalKind.builtIn
        var presetBoard = PedalKind.builtIn
        var states: [String: String] = [:]
        let (gate, notes) = Store.currentGate(publicKeyFile: publicKey)
        for note in notes { warn(note) }
        do {
            if let preset {
                let loaded = try RenderCommand.loadPreset(preset)
                for notice in gate.apply(loaded, to: controls.parameters) {
                    warn(notice.description)
                }
                presetBoard = loaded.board
                states = loaded.states
            }
            board = try RenderCommand.makeBoard(presetBoard, chain: chain, additions: additions)
            for text in assignments {
                if let file = try RenderCommand.fileSetting(text, board: board) {
                    states[file.pedal] = file.state
                    controls.parameters.set(file.parameter, file.value)
                    continue
                }
                let a = try ParameterAssignment(parsing: text, board: board)
                try RenderCommand.checkOnBoard(a.parameter, board)
                try gate.set(a.parameter, a.value, on: controls.parameters)
            }
        } catch let error as CommandLineError {
            fail(error.message)
        } catch let error as RenderActionError {
            fail(error.description)
        } catch let error as LockedError {
            fail(error.description)
        }

        var settings = LiveSettings()
        switch input {
        case nil: settings.input = .defaultSource
        case "demo"?: settings.input = .demo
        case let name?: settings.input = .source(name)
        }
        settings.backend = LiveBackend.parse(backend) ?? .auto
        settings.connectPorts = !noConnect
        settings.inputChannel = inputChannel
        settings.output = output
        settings.blockSize = block
        settings.latencyMs = latencyMs
        settings.autoLatency = !noAutoLatency
        settings.autoLatencyCapMs = maxLatencyMs
        settings.sampleRate = rate
        settings.demoFile = try? DataFiles.locate().data(DemoRiffFile.fileName).path
        installCabinets()

        let chain = Chain(controls: controls, board: board)
        // A cabinet's own file is read now: one that cannot be used is an error before playing.
        do { for problem in try chain.restore(states: states) { warn(problem) } } catch { fail(error.description) }
        let engine = LiveEngine(chain: chain, settings: settings)
        var recording: RunRecording?
        if let record {
            do {
                recording = try RunRecording(path: record, author: author ?? SessionCLI.defaultAuthor,
                                             format: SessionCLI.audioFormat(format), tempoBPM: Double(controls.parameters.load(.tempo)))
            } catch { fail(error.message) }
        }

        // SIGINT/SIGTERM end the loop through a dispatch source, never inside a signal handler.
        let finished = DispatchSemaphore(value: 0)
        var sources: [DispatchSourceSignal] = []
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { finished.signal() }
            source.resume()
            sources.append(source)
        }

        engine.start()
        let foot = FootControlsFile()
        for notice in foot.notices { warn(notice) }
        let midi = MIDIInputs(engine: engine)
        let dispatcher = FootControlDispatcher(controls: controls, board: { chain.board })
        dispatcher.isLocked = { gate.isLocked($0) }
        dispatcher.onLocked = { warn("\($0.name) is locked: unlock it with 'stompbox store unlock KEY'") }
        var library: PresetLibrary?
        var presetSlot: Int?
        /// Plays a saved preset (presets.json) as the window does: its board, values and files.
        func play(_ action: FootAction) {
            do {
                if library == nil { library = try PresetLibrary() }
                guard let library else { return }
                for notice in library.takeNotices() { warn(notice.description) }
                let count = PresetBank.slotCount
                let slot = switch action {
                case .preset(let n): n - 1
                case .nextPreset: ((presetSlot ?? library.selected) + 1) % count
                case .previousPreset: ((presetSlot ?? library.selected) + count - 1) % count
                default: -1
                }
                guard slot >= 0 else { return }
                let preset = library[slot]
                let (board, missing) = PedalKind.resolvingPlugins(preset.board)
                for problem in missing { warn(problem) }
                try chain.setBoard(board)
                for notice in gate.apply(preset, to: controls.parameters) { warn(notice.description) }
                do { for problem in try chain.restore(states: preset.states) { warn(problem) } } catch { warn(error.description) }
                presetSlot = slot
            } catch {
                warn("cannot play a saved preset: \(error)")
            }
        }
        func receiveMIDI() {
            chain.collectRetiredBoard()
            midi.drain { bytes in
                guard let message = MIDIMessage(bytes: bytes) else { return }
                for (action, input) in foot.controls.actions(for: message) {
                    if let own = dispatcher.perform(action, input) { play(own) }
                }
            }
        }
        if let problem = midi.alsa?.problem { warn("no ALSA MIDI input: \(problem)") }
        let started = Date()
        var lastMessage: String?
        while true {
            let nextLine = DispatchTime.now() + 1
            var stopped = false
            while !stopped && DispatchTime.now() < nextLine {
                stopped = finished.wait(timeout: min(nextLine, .now() + .milliseconds(20))) == .success
                receiveMIDI()
            }
            let status = engine.status()
            if let r = recording, r.recorder == nil, status.state == .running {
                do { try r.start(engine: engine) } catch {
                    warn(error.message)
                    engine.stop()
                    Foundation.exit(1)
                }
            }
            if status.message != lastMessage, let message = status.message {
                FileHandle.standardError.write(Data("stompbox: \(message)\n".utf8))
            }
            lastMessage = status.message
            let on = chain.board.filter { controls.parameters.isOn($0.enabledParameter) }.map(\.id)
            print(status.statusLine + " preset=\(presetSlot.map { String($0 + 1) } ?? "-") pedals_on=\(on.isEmpty ? "-" : on.joined(separator: ","))" + (recording?.statusField() ?? ""))
            fflush(stdout)
            if stopped { break }
            if let seconds, Date().timeIntervalSince(started) >= seconds - 0.01 { break }
        }
        midi.stop()
        if let recording {
            recording.finish(engine: engine, board: SessionRecording.board(of: chain))
        }
        engine.stop()
        for s in sources { s.cancel() }
    }
}
