import Foundation

extension Subprocess {
    /// The first executable `name` on `PATH` (a path with a slash is taken as it is).
    public static func which(_ name: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        return PrivatePulseServer.which(name)
    }

    /// Starts `arguments[0]` (looked up on `PATH`) with this process's environment plus
    /// `environment`; stdout to a file (or /dev/null), stderr to a file (or /dev/null).
    public convenience init(command arguments: [String], environment: [String: String] = [:],
                            stdout: String? = nil, stderr: String? = nil) throws {
        guard let name = arguments.first, let path = Subprocess.which(name) else {
            throw PulseTestError.missing(arguments.first ?? "(no command)")
        }
        try self.init(path, Array(arguments.dropFirst()), environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                      stdout: stdout, stderr: stderr)
    }

    /// Runs a command to completion; returns its stdout and exit status.
    @discardableResult
    public static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (output: String, status: Int32) {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("stompbox-run-\(UUID().uuidString).out").path
        defer { unlink(out) }
        let status = try Subprocess(command: arguments, environment: environment, stdout: out).wait()
        return ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "", status)
    }
}
