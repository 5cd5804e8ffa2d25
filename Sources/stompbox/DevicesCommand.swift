import ArgumentParser

// PLACEHOLDER until this command is written.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "devices", abstract: "Lists PulseAudio sources and sinks.")
    func run() throws { throw ValidationError("'devices' is not written yet") }
}
