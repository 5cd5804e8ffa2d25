import Foundation
import StompboxCore

/// The files of `Resources/` (pedal SVGs, icon, CSS, .desktop), found through `DataFiles`
/// like every other shipped file.
enum ResourceLocator {
    static let directory: URL? = try? DataFiles.locate().resourcesDirectory

    static func path(_ name: String) -> String? {
        guard let p = directory?.appendingPathComponent(name).path else { return nil }
        return FileManager.default.fileExists(atPath: p) ? p : nil
    }
}
