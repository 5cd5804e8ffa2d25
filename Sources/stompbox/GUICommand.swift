import ArgumentParser

// PLACEHOLDER until this command is written.
struct GUICommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "gui", abstract: "Opens the pedalboard window.")
    func run() throws { throw ValidationError("'gui' is not written yet") }
}
