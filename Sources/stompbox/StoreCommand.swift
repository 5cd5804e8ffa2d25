import ArgumentParser

// PLACEHOLDER until this command is written.
struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "store", abstract: "Shows and unlocks the locked effects.")
    func run() throws { throw ValidationError("'store' is not written yet") }
}
