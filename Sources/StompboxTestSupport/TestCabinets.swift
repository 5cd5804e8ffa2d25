import Foundation
import StompboxAudio
import StompboxDSP

/// The repository's bundled cabinets (`data/cabinets`), installed for the Cabinet pedal as the
/// program installs them. Every test that prepares a Cabinet it listens to calls `install()`
/// first (installing the same source again changes nothing).
public enum TestCabinets {
    public static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("data/cabinets")
    public static let files = CabinetFiles(folder: folder)

    public static func install() { Cabinet.install(files) }
}
