import Foundation
import StompboxDSP

/// The three preset slots on disk (`<config>/presets.json`), for the window's preset panel and
/// `stompbox presets`. Slots are numbered 0, 1, 2 here; people see 1, 2, 3.
///
/// Every change re-reads the file, applies the change and writes it back atomically with
/// `SafeFile.write` (the previous file stays as `presets.json.bak`), all under a lock file, so
/// a window and a script changing presets at the same time never lose each other's change and
/// a crash mid-save never leaves a damaged file.
///
/// A file that cannot be used (damaged, truncated, another format, a newer version, a value
/// out of range, a wrong slot count) is never overwritten: it is moved aside to
/// `presets.json.corrupt-<timestamp>`, a `PresetFileNotice` says what was wrong and where it
/// went (show it to the person), and the factory presets load. A missing file means a first
/// run: the factory presets load without a notice. Nothing is written until something changes.
public final class PresetLibrary {
    public static let fileName = "presets.json"

    public let fileURL: URL
    public var lockURL: URL { URL(fileURLWithPath: fileURL.path + ".lock") }
    public private(set) var bank: PresetBank
    private let factory: () throws -> PresetBank
    private var pendingNotices: [PresetFileNotice] = []

    /// Opens `<directory>/presets.json`. `factory` is asked only when the file is missing or
    /// unusable. Throws when the file exists but cannot be read (permissions) or moved aside,
    /// or when the factory presets are needed and cannot be loaded.
    public init(directory: URL, factory: @escaping () throws -> PresetBank) throws(PresetLibraryError) {
        fileURL = directory.appendingPathComponent(PresetLibrary.fileName)
        self.factory = factory
        bank = PresetBank(slots: Array(repeating: Preset(name: ""), count: PresetBank.slotCount))
        let lock = try? FileLock(lockURL)
        defer { lock?.release() }
        bank = try loadFromDisk()
    }

    /// Opens the person's presets (`$XDG_CONFIG_HOME/stompbox/presets.json`) with the factory
    /// presets of `data/`.
    public convenience init(directories: UserDirectories = UserDirectories(),
                            dataFiles: @escaping () throws -> DataFiles = { try DataFiles.locate() }) throws(PresetLibraryError) {
        try self.init(directory: directories.config) { try FactoryPresets.load(from: dataFiles()) }
    }

    /// Notices (moved-aside files) not yet shown; reading them empties the list.
    public func takeNotices() -> [PresetFileNotice] {
        defer { pendingNotices.removeAll() }
        return pendingNotices
    }

    public var slots: [Preset] { bank.slots }
    public var selected: Int { bank.selected }
    public subscript(_ slot: Int) -> Preset { bank[slot] }

    /// Re-reads the file (another process may have changed it).
    public func reload() throws(PresetLibraryError) {
        let lock = try? FileLock(lockURL)
        defer { lock?.release() }
        bank = try loadFromDisk()
    }

    /// True when the live setup equals what `slot` stores (the panel can mark a changed setup).
    public func matches(_ slot: Int, _ store: ParameterStore, board: [PedalKind]) -> Bool {
        bank.slots.indices.contains(slot) && bank[slot].matches(store, board: board)
    }

    /// Selects `slot` (saved to the file) and returns its preset, to apply through
    /// `FeatureGate.apply`. If saving the selection fails the error is thrown, and `self[slot]`
    /// is still the preset to play.
    @discardableResult
    public func recall(_ slot: Int) throws(PresetLibraryError) -> Preset {
        try select(slot)
        return bank[slot]
    }

    public func select(_ slot: Int) throws(PresetLibraryError) {
        try check(slot)
        try change { bank throws(PresetLibraryError) in bank.select(slot) }
    }

    /// Stores `preset` (its name included) into `slot`.
    public func save(_ preset: Preset, into slot: Int) throws(PresetLibraryError) {
        try check(slot)
        let name = try PresetLibrary.validName(preset.name)
        var p = preset
        p.name = name
        try change { bank throws(PresetLibraryError) in bank[slot] = p }
    }

    /// Stores the live setup into `slot`, keeping the slot's name unless `name` is given.
    /// `states`: the plugin pedals' own states by pedal id (`Chain.pedalStates`).
    public func save(from store: ParameterStore, board: [PedalKind], states: [String: String] = [:], into slot: Int,
                     name: String? = nil) throws(PresetLibraryError) {
        try check(slot)
        let newName = try name.map { (n: String) throws(PresetLibraryError) -> String in try PresetLibrary.validName(n) }
        try change { bank throws(PresetLibraryError) in
            bank[slot] = Preset(name: newName ?? bank[slot].name, from: store, board: board, states: states)
        }
    }

    public func rename(_ slot: Int, to name: String) throws(PresetLibraryError) {
        try check(slot)
        let name = try PresetLibrary.validName(name)
        try change { bank throws(PresetLibraryError) in bank[slot].name = name }
    }

    /// Writes `slot` as a single-preset file. An existing file is replaced only when `overwrite`.
    public func export(_ slot: Int, to url: URL, overwrite: Bool = false) throws(PresetLibraryError) {
        try check(slot)
        let data = bank[slot].jsonData()
        do {
            if overwrite { try SafeFile.write(data, to: url) } else { try SafeFile.create(data, at: url) }
        } catch { throw .file(error) }
    }

    /// Reads a single-preset file into `slot` and returns it. A bad file changes nothing.
    @discardableResult
    public func importPreset(from url: URL, into slot: Int) throws(PresetLibraryError) -> Preset {
        try check(slot)
        var preset = try PresetLibrary.readPreset(url)
        // Someone else's file may carry a name the panel cannot show; make it one, don't refuse.
        preset.name = PresetLibrary.usableName(preset.name, fallback: url.deletingPathExtension().lastPathComponent)
        try save(preset, into: slot)
        return bank[slot]
    }

    /// Reads a single-preset file, with errors naming the file.
    public static func readPreset(_ url: URL) throws(PresetLibraryError) -> Preset {
        let data: Data?
        do { data = try SafeFile.read(url) } catch { throw .file(error) }
        guard let data else { throw .file(FileError(action: "read", path: url.path, detail: "no such file")) }
        do { return try Preset(jsonData: data) } catch { throw .badPresetFile(path: url.path, error) }
    }

    /// A name people can see in a slot: trimmed, 1…40 characters, no control characters.
    public static func validName(_ name: String) throws(PresetLibraryError) -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw .badName(name, "a preset needs a name") }
        guard trimmed.count <= 40 else { throw .badName(name, "a name has at most 40 characters") }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .badName(name, "a name cannot hold control characters")
        }
        return trimmed
    }

    /// `name` made valid: control characters removed, cut to 40 characters, `fallback` (then
    /// "Imported") when nothing is left.
    public static func usableName(_ name: String, fallback: String) -> String {
        for candidate in [name, fallback, "Imported"] {
            let cleaned = String(String.UnicodeScalarView(candidate.unicodeScalars.filter { $0.properties.generalCategory != .control }))
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let cut = String(cleaned.prefix(40)).trimmingCharacters(in: .whitespacesAndNewlines)
            if !cut.isEmpty { return cut }
        }
        return "Imported"
    }

    // MARK: Disk

    private func check(_ slot: Int) throws(PresetLibraryError) {
        guard (0..<PresetBank.slotCount).contains(slot) else { throw .badSlot(slot) }
    }

    /// Lock, re-read, change, write atomically.
    private func change(_ body: (inout PresetBank) throws(PresetLibraryError) -> Void) throws(PresetLibraryError) {
        let lock: FileLock
        do { lock = try FileLock(lockURL) } catch { throw .file(error) }
        defer { lock.release() }
        SafeFile.removeStaleTemporaries(for: fileURL)
        var fresh = try loadFromDisk()
        try body(&fresh)
        do { try SafeFile.write(fresh.jsonData(), to: fileURL, backup: true) } catch { throw .file(error) }
        bank = fresh
    }

    private func loadFromDisk() throws(PresetLibraryError) -> PresetBank {
        let data: Data?
        do { data = try SafeFile.read(fileURL) } catch { throw .file(error) }
        guard let data else { return try loadFactory() }
        do {
            return try PresetBank(jsonData: data)
        } catch {
            let movedTo: URL
            do { movedTo = try SafeFile.moveAside(fileURL, tag: "corrupt") } catch let e { throw .file(e) }
            pendingNotices.append(PresetFileNotice(fileName: PresetLibrary.fileName, problem: error, movedTo: movedTo))
            return try loadFactory()
        }
    }

    private func loadFactory() throws(PresetLibraryError) -> PresetBank {
        do { return try factory() } catch let e as PresetLibraryError { throw e } catch {
            throw .factory("\(error)")
        }
    }
}

/// The factory presets shipped in `data/factory-presets.json` (same format as presets.json).
public enum FactoryPresets {
    public static let fileName = "factory-presets.json"

    public static func load(from data: DataFiles) throws(PresetLibraryError) -> PresetBank {
        let url = data.data(fileName)
        let bytes: Data?
        do { bytes = try SafeFile.read(url) } catch { throw .factory(error.description) }
        guard let bytes else { throw .factory("\(url.path) is missing") }
        do { return try PresetBank(jsonData: bytes) } catch { throw .factory("\(url.path) \(error)") }
    }
}

/// Tells the person a presets file could not be used and where it went.
public struct PresetFileNotice: Equatable, Sendable, CustomStringConvertible {
    public let fileName: String
    public let problem: PresetBankError
    public let movedTo: URL

    public var description: String {
        "\(fileName) \(problem); it was moved to \(movedTo.path) and the factory presets were loaded."
    }
}

public enum PresetLibraryError: Error, Equatable, CustomStringConvertible {
    case file(FileError)
    case factory(String)
    case badSlot(Int)
    case badName(String, String)
    case badPresetFile(path: String, PresetError)

    public var description: String {
        switch self {
        case .file(let e): e.description
        case .factory(let detail): "the factory presets cannot be loaded: \(detail)"
        case .badSlot(let i): "there is no preset slot \(i + 1) (the slots are 1, 2 and 3)"
        case .badName(_, let why): "bad preset name: \(why)"
        case .badPresetFile(let path, let e): "\(path) is not a usable preset: \(e)"
        }
    }
}
