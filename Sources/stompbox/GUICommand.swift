import ArgumentParser
import Foundation
import StompboxAudio

/// `stompbox` with no arguments: the pedalboard window. It lives in its own program,
/// `stompbox-window`, installed beside this one, and this command hands the process over to it
/// (`execv`: same process id, same environment, its exit status is this one's). So the
/// subcommands start without loading GTK and its eighty libraries: `stompbox render` or
/// `stompbox params` costs what it uses (about 2 ms to start instead of 20).
///
/// `stompbox --public-key FILE` works too (gui is the default subcommand); see
/// `stompbox-window --help` for the environment the window reads.
struct GUICommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "gui", abstract: "Opens the pedalboard window.")

    @Option(name: .customLong("public-key"), help: ArgumentHelp(
        "A public key file to verify licence keys with, in place of the shipped one (or set $STOMPBOX_STORE_PUBLIC_KEY).",
        valueName: "file"))
    var publicKey: String?

    @Option(help: ArgumentHelp(LiveBackend.help, valueName: "pulse|jack|auto"))
    var backend: String?

    @Flag(name: .customLong("no-connect"), help: ArgumentHelp(LiveBackend.noConnectHelp))
    var noConnect = false

    /// The window program's name, looked for beside this executable.
    static let windowProgram = "stompbox-window"

    func run() throws {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let window = URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent(GUICommand.windowProgram).path
        guard FileManager.default.isExecutableFile(atPath: window) else {
            throw ValidationError("the window program \(window) is missing (build it with `swift build --product \(GUICommand.windowProgram)`, or `make run`); the subcommands (stompbox --help) work without it")
        }
        let arguments = [window] + (publicKey.map { ["--public-key", $0] } ?? []) + (backend.map { ["--backend", $0] } ?? [])
            + (noConnect ? ["--no-connect"] : [])
        var argv = arguments.map { strdup($0) } + [nil]
        execv(window, &argv)
        let reason = String(cString: strerror(errno))
        throw ValidationError("cannot start the window program \(window): \(reason)")
    }
}
