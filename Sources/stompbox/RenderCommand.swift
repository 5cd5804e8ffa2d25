import ArgumentParser

// PLACEHOLDER until this command is written.
struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "render", abstract: "Renders an audio file through the chain.")
    func run() throws { throw ValidationError("'render' is not written yet") }
}
