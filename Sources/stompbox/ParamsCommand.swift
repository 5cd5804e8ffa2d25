import ArgumentParser

// PLACEHOLDER until this command is written.
struct ParamsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "params", abstract: "Prints the parameter table.")
    func run() throws { throw ValidationError("'params' is not written yet") }
}
