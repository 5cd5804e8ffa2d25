import ArgumentParser

// PLACEHOLDER until this command is written.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Plays live through PulseAudio.")
    func run() throws { throw ValidationError("'run' is not written yet") }
}
