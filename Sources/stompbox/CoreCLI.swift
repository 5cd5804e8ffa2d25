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

/// Tells the Cabinet where the bundled cabinets are (data/cabinets); they are read only when a
/// cabinet is prepared. Without Stompbox's data folder the Cabinet passes its input through.
func installCabinets() {
    if let data = try? DataFiles.locate() { Cabinet.install(CabinetFiles(folder: data.data("cabinets"))) }
}
