import ArgumentParser
import StompboxCore
import StompboxDSP

@main
struct Stompbox: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stompbox",
        abstract: "A guitar multi-effects pedalboard. With no subcommand, opens the window.",
        version: StompboxVersion.current,
        subcommands: [
            ParamsCommand.self, RenderCommand.self, CabsCommand.self, TuneCommand.self, ArtworkCommand.self, RealtimeCommand.self, CPUCommand.self,
            RunCommand.self, DevicesCommand.self, PluginsCommand.self, ModelsCommand.self,
            PresetsCommand.self, LicenceCommand.self, StoreCommand.self, SessionCommand.self,
            GUICommand.self,
        ],
        // `stompbox` alone (or `stompbox --public-key FILE`) opens the window.
        defaultSubcommand: GUICommand.self)
}
