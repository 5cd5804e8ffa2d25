import ArgumentParser
import StompboxDSP

@main
struct Stompbox: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stompbox",
        abstract: "A guitar multi-effects pedalboard. With no subcommand, opens the window.",
        subcommands: [
            ParamsCommand.self, RenderCommand.self,
            RunCommand.self, DevicesCommand.self,
            PresetsCommand.self, LicenceCommand.self, StoreCommand.self,
        ])

    @Option(name: .customLong("public-key"), help: ArgumentHelp(
        "The window verifies licence keys with this public key file in place of the shipped one (or set $STOMPBOX_STORE_PUBLIC_KEY).",
        valueName: "file"))
    var publicKey: String?

    func run() throws {
        try GUICommand.open(publicKeyFile: publicKey)
    }
}
