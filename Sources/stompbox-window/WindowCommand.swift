import ArgumentParser
import Foundation
import StompboxAudio
import StompboxCore
import StompboxDSP
import StompboxUI

/// `stompbox-window`, which `stompbox` with no subcommand hands over to: the pedalboard window
/// on the same live engine as `stompbox run --headless`. A program of its own so that only the
/// window loads GTK.
///
/// Options: `--public-key FILE` verifies licence keys (the Looper's) with FILE in place of the
/// shipped key, as `stompbox store` does (`stompbox --public-key FILE` passes it on).
///
/// Environment:
/// - `STOMPBOX_STATE_FILE=PATH`: the window writes the engine's parameters, looper state and
///   live status to PATH as JSON whenever they change (see StateReporter), for tests and scripts.
/// - `STOMPBOX_INPUT=demo|default|<source>` and `STOMPBOX_OUTPUT=<sink>`: the first devices
///   (changeable in the window's Audio… picker).
/// - `STOMPBOX_DATA_DIR`, `STOMPBOX_RESOURCES_DIR`: where `data/` and `Resources/` are, if not
///   found by themselves (see `DataFiles`).
@main
struct WindowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stompbox-window", abstract: "Opens the pedalboard window (what `stompbox` with no subcommand runs).")

    /// `--public-key FILE` (or `$STOMPBOX_STORE_PUBLIC_KEY`): verifies licence keys in place of the shipped key.
    @Option(name: .customLong("public-key"), help: ArgumentHelp(
        "A public key file to verify licence keys with, in place of the shipped one (or set $STOMPBOX_STORE_PUBLIC_KEY).",
        valueName: "file"))
    var publicKey: String?

    @Option(help: ArgumentHelp(LiveBackend.help, valueName: "pulse|jack|auto"))
    var backend = "auto"

    @Flag(name: .customLong("no-connect"), help: ArgumentHelp(LiveBackend.noConnectHelp))
    var noConnect = false

    func validate() throws {
        guard LiveBackend.parse(backend) != nil else { throw ValidationError("--backend must be pulse, jack or auto (not '\(backend)')") }
    }

    func run() throws {
        try WindowCommand.open(publicKeyFile: publicKey, backend: LiveBackend.parse(backend) ?? .auto, connectPorts: !noConnect)
    }

    static func open(publicKeyFile: String?, backend: LiveBackend, connectPorts: Bool) throws {
        let environment = ProcessInfo.processInfo.environment
        var settings = LiveSettings()
        settings.backend = backend
        settings.connectPorts = connectPorts
        switch environment["STOMPBOX_INPUT"] {
        case nil, "", "default": break
        case "demo": settings.input = .demo
        case let name?: settings.input = .source(name)
        }
        if let sink = environment["STOMPBOX_OUTPUT"], !sink.isEmpty { settings.output = sink }
        // The demo input plays the bundled riff (or the file STOMPBOX_DEMO_FILE names: a test's tone).
        settings.demoFile = environment["STOMPBOX_DEMO_FILE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (try? DataFiles.locate().data(DemoRiffFile.fileName).path)
        // The bundled cabinets (data/cabinets), read when the Cabinet is first prepared.
        if let data = try? DataFiles.locate() { Cabinet.install(CabinetFiles(folder: data.data("cabinets"))) }

        let chain = Chain()
        let engine = LiveEngine(chain: chain, settings: settings)
        engine.start()
        let app = PedalboardApp(engine: engine, stateFile: environment["STOMPBOX_STATE_FILE"].flatMap { $0.isEmpty ? nil : $0 })
        app.publicKeyFile = publicKeyFile
        let status = app.run()
        // A save or a take being packed when the window closed is finished first.
        if !PanelFileWork.wait() {
            FileHandle.standardError.write(Data("stompbox: a session was still being written after a minute (is the disk answering?); it is left unfinished: the session file is as it was before, and a take not yet added stays in its .recording folder for 'stompbox session recover'\n".utf8))
        }
        // A take still running when the window closed: its files are finished and kept, for
        // the next Record or `session recover` to save into the session.
        if let folder = engine.recorder?.folder, engine.stopRecording() != nil {
            let session = folder.hasSuffix(".recording") ? String(folder.dropLast(".recording".count)) : folder
            FileHandle.standardError.write(Data("stompbox: the window closed while recording; the take is kept in '\(folder)': 'stompbox session recover \(session)' saves it into the session\n".utf8))
        }
        engine.stop()
        if status != 0 { throw ExitCode(status) }
    }
}
