import ArgumentParser
import Foundation
import StompboxAudio

/// `stompbox devices [--backend jack] [--json]`: the PulseAudio sources and sinks (or JACK
/// ports) the window's device picker offers.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "devices", abstract: "Lists PulseAudio sources and sinks, or JACK ports.")

    @Option(help: ArgumentHelp("auto (the default: JACK's ports when a JACK server answers, else PulseAudio's), pulse (sources and sinks), or jack (the JACK server's ports: outputs can feed --input, inputs take --output).", valueName: "pulse|jack|auto"))
    var backend = "auto"

    @Flag(help: "Print JSON: {\"sources\": [...], \"sinks\": [...]}, each with name, description, sampleRate, channels, isMonitor.")
    var json = false

    func validate() throws {
        guard LiveBackend.parse(backend) != nil else { throw ValidationError("--backend must be pulse, jack or auto (not '\(backend)')") }
    }

    func run() throws {
        let list: (sources: [AudioDevice], sinks: [AudioDevice])
        do {
            list = try LiveEngine.devices(backend: LiveBackend.parse(backend) ?? .auto)
        } catch {
            FileHandle.standardError.write(Data("stompbox: \(error)\n".utf8))
            throw ExitCode(2)
        }
        if json {
            struct Listing: Encodable { var sources: [AudioDevice]; var sinks: [AudioDevice] }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(Listing(sources: list.sources, sinks: list.sinks)), as: UTF8.self))
            return
        }
        func table(_ title: String, _ devices: [AudioDevice]) {
            print("\(title):")
            if devices.isEmpty { print("  (none)") }
            for d in devices {
                let monitor = d.isMonitor ? " [monitor]" : ""
                print("  \(d.name)  \(d.sampleRate) Hz, \(d.channels) ch\(monitor)  \(d.description)")
            }
        }
        table("Sources (--input)", list.sources)
        table("Sinks (--output)", list.sinks)
    }
}
