import Foundation
import StompboxTestSupport
import Testing

/// What a run of the `stompbox` executable did.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String

    var stderrLines: [Substring] { stderr.split(separator: "\n", omittingEmptySubsequences: true) }
}

/// The built `stompbox` executable: beside the test bundle (`.build/debug/`), whichever way
/// the test runner was started.
func stompboxExecutable() throws -> URL { try builtExecutable("stompbox") }

/// An executable product built beside the test bundle.
func builtExecutable(_ name: String) throws -> URL {
    var folders: [URL] = []
    if let exe = Bundle.main.executableURL { folders.append(exe.deletingLastPathComponent()) }
    folders.append(Bundle.main.bundleURL)
    folders.append(Bundle.main.bundleURL.deletingLastPathComponent())
    for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
        folders.append(bundle.bundleURL.deletingLastPathComponent())
    }
    // This file is Tests/stompboxTests/CommandHelpers.swift; the package root is two up.
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    folders.append(root.appendingPathComponent(".build/debug"))
    for folder in folders {
        let candidate = folder.appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    throw ExecutableNotFound(name: name, searched: folders.map(\.path))
}

struct ExecutableNotFound: Error, CustomStringConvertible {
    var name: String
    var searched: [String]
    var description: String { "the \(name) executable was not built (looked in \(searched.joined(separator: ", ")))" }
}

/// Runs `stompbox` with `arguments` in `folder` and returns its status and output.
/// With `fileSizeLimitBlocks`, runs it under `ulimit -f` (512-byte blocks) so writing fails part-way.
/// `environment` is added to this process's own, in which the XDG folders always point into a
/// private folder for this test run, so no test reads or changes the user's presets or licences.
func runStompbox(_ arguments: [String], in folder: URL? = nil, fileSizeLimitBlocks: Int? = nil,
                 executable: String = "stompbox", environment: [String: String] = [:]) throws -> CommandResult {
    let process = Process()
    process.environment = ProcessInfo.processInfo.environment
        .merging(["XDG_CONFIG_HOME": privateXDG.file("config"), "XDG_DATA_HOME": privateXDG.file("data")]) { $1 }
        .merging(environment) { $1 }
    let exe = try builtExecutable(executable)
    if let limit = fileSizeLimitBlocks {
        // SIGXFSZ ignored, so a write beyond the limit fails with EFBIG instead of killing it.
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "trap '' XFSZ; ulimit -f \(limit); exec \"$0\" \"$@\"", exe.path] + arguments
    } else {
        process.executableURL = exe
        process.arguments = arguments
    }
    if let folder { process.currentDirectoryURL = folder }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // Read both pipes to the end before waiting, so a full pipe cannot stall the child.
    let errData = DataBox()
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async {
        errData.data = err.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return CommandResult(status: process.terminationStatus,
                         stdout: String(decoding: outData, as: UTF8.self),
                         stderr: String(decoding: errData.data, as: UTF8.self))
}

/// The XDG folders of every `stompbox` the tests start, unless a test names its own.
private let privateXDG = TemporaryFolder("stompbox-xdg")

/// Written by one reader thread, read after `DispatchGroup.wait()`.
private final class DataBox: @unchecked Sendable { var data = Data() }

/// Runs `stompbox` and expects success: exit 0 and nothing on stderr.
@discardableResult
func expectSuccess(_ arguments: [String], in folder: URL? = nil, environment: [String: String] = [:],
                   sourceLocation: SourceLocation = #_sourceLocation) throws -> CommandResult {
    let result = try runStompbox(arguments, in: folder, environment: environment)
    #expect(result.status == 0, "exit status for \(arguments)", sourceLocation: sourceLocation)
    #expect(result.stderr.isEmpty, "stderr: \(result.stderr)", sourceLocation: sourceLocation)
    return result
}

/// Runs `stompbox` and expects the one-line failure: non-zero exit, exactly one line on stderr,
/// `stompbox: error: …` containing every one of `mentions`, nothing on stdout.
@discardableResult
func expectFailure(_ arguments: [String], in folder: URL? = nil, mentioning mentions: [String] = [],
                   fileSizeLimitBlocks: Int? = nil,
                   sourceLocation: SourceLocation = #_sourceLocation) throws -> CommandResult {
    let result = try runStompbox(arguments, in: folder, fileSizeLimitBlocks: fileSizeLimitBlocks)
    #expect(result.status != 0, "exit status for \(arguments)", sourceLocation: sourceLocation)
    #expect(result.stderrLines.count == 1, "one line on stderr, got: \(result.stderr)", sourceLocation: sourceLocation)
    #expect(result.stderr.hasPrefix("stompbox: error: "), "stderr: \(result.stderr)", sourceLocation: sourceLocation)
    for m in mentions {
        #expect(result.stderr.contains(m), "stderr should mention '\(m)': \(result.stderr)", sourceLocation: sourceLocation)
    }
    #expect(result.stdout.isEmpty, "stdout: \(result.stdout)", sourceLocation: sourceLocation)
    return result
}
