import ArgumentParser

// PLACEHOLDER until this command is written.
struct LicenceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "licence", abstract: "Vendor tools: key pairs and licence keys.")
    func run() throws { throw ValidationError("'licence' is not written yet") }
}
