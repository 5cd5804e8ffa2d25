import ArgumentParser
import Foundation
import StompboxAudio
import StompboxCore
import StompboxDSP

/// How the presets, store and licence commands talk to people: one clear line on stderr for
/// an error (and a non-zero exit), notes on stderr so stdout stays clean for scripts.
enum CoreCLI {
    static func fail(_ message: CustomStringConvertible) -> ExitCode {
        FileHandle.standardError.write(Data("stompbox: \(message)\n".utf8))
        return ExitCode(1)
    }

    static func note(_ message: CustomStringConvertible) {
        FileHandle.standardError.write(Data("stompbox: note: \(message)\n".utf8))
    }

    /// People number slots 1, 2, 3; the library 0, 1, 2.
    static func slotIndex(_ number: Int) throws -> Int {
        guard (1...PresetBank.slotCount).contains(number) else {
            throw fail(PresetLibraryError.badSlot(number - 1))
        }
        return number - 1
    }
}

/// Tells the Cabinet where the bundled cabinets are (data/cabinets). The data folder is looked
/// for when a cabinet is first prepared, so a render or session without one does not search for
/// it. Without Stompbox's data folder the bundled cabinets are missing (the Cabinet passes its
/// input through and says why); one's own impulse response files still load.
func installCabinets() { Cabinet.install(LocatedCabinets()) }

private struct LocatedCabinets: CabinetSource {
    /// Found once, on first use (a Swift `static let` is made once, thread-safely).
    private static let bundled: Result<CabinetFiles, any Error> = Result { try DataFiles.locate() }.map {
        CabinetFiles(folder: $0.data("cabinets"))
    }

    func impulseResponse(cabinet id: String, sampleRate: Double) throws -> ImpulseResponse {
        try Self.bundled.get().impulseResponse(cabinet: id, sampleRate: sampleRate)
    }

    func impulseResponse(file path: String, sampleRate: Double) throws -> ImpulseResponse {
        try ImpulseResponseFile.read(path, sampleRate: sampleRate)
    }
}
