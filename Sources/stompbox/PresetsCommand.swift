import ArgumentParser

// PLACEHOLDER until this command is written.
struct PresetsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "presets", abstract: "Manages the three preset slots.")
    func run() throws { throw ValidationError("'presets' is not written yet") }
}
