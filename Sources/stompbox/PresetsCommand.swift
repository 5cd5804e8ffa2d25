import ArgumentParser
import Foundation
import StompboxCore
import StompboxDSP

/// `stompbox presets …`: the three preset slots of the window, for scripts and tests.
struct PresetsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presets",
        abstract: "Manages the three preset slots.",
        discussion: """
            The slots live in $XDG_CONFIG_HOME/stompbox/presets.json (default ~/.config/stompbox); \
            slots are numbered 1, 2, 3. Preset files are the single-preset JSON of 'stompbox render --preset'.
            """,
        subcommands: [List.self, Show.self, Save.self, Export.self, Import.self, Rename.self, Select.self],
        defaultSubcommand: List.self)

    /// Opens the library and prints what happened to an unusable file.
    static func openLibrary() throws -> PresetLibrary {
        let library: PresetLibrary
        do { library = try PresetLibrary() } catch { throw CoreCLI.fail(error) }
        for notice in library.takeNotices() { CoreCLI.note(notice) }
        return library
    }

    static func run(_ body: () throws(PresetLibraryError) -> Void, _ library: PresetLibrary) throws {
        do { try body() } catch { throw CoreCLI.fail(error) }
        for notice in library.takeNotices() { CoreCLI.note(notice) }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Lists the slots; * marks the selected one.")
        func run() throws {
            let library = try PresetsCommand.openLibrary()
            // Only when a slot switches a sold pedal on is the store asked whether it is unlocked.
            let wantsLocked = library.slots.contains { p in FeatureGate.lockable.contains { p[$0.enabledParameter] >= 0.5 } }
            let gate = wantsLocked ? Store.currentGate().gate : FeatureGate.locked
            for (i, preset) in library.slots.enumerated() {
                let on = PedalKind.builtIn.filter { preset[$0.enabledParameter] >= 0.5 }
                    .map { gate.isLocked($0) ? "\($0.name) (locked)" : $0.name }
                let mark = i == library.selected ? "*" : " "
                let pedals = on.isEmpty ? "no pedals on" : on.joined(separator: ", ")
                print("\(mark) \(i + 1)  \(preset.name)  (\(pedals))")
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Prints a slot as a preset file (JSON).")
        @Argument(help: "Slot 1, 2 or 3.") var slot: Int
        func run() throws {
            let index = try CoreCLI.slotIndex(slot)
            let library = try PresetsCommand.openLibrary()
            FileHandle.standardOutput.write(library[index].jsonData())
        }
    }

    struct Save: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "save", abstract: "Stores a preset file into a slot (the file's name comes with it).")
        @Argument(help: "Slot 1, 2 or 3.") var slot: Int
        @Option(name: .long, help: "The preset file ('-' reads standard input).") var from: String
        func run() throws {
            let index = try CoreCLI.slotIndex(slot)
            let preset: Preset
            if from == "-" {
                let data = FileHandle.standardInput.readDataToEndOfFile()
                do { preset = try Preset(jsonData: data) } catch {
                    throw CoreCLI.fail(PresetLibraryError.badPresetFile(path: "standard input", error))
                }
            } else {
                do { preset = try PresetLibrary.readPreset(URL(fileURLWithPath: from)) } catch { throw CoreCLI.fail(error) }
            }
            let library = try PresetsCommand.openLibrary()
            try PresetsCommand.run({ () throws(PresetLibraryError) in try library.save(preset, into: index) }, library)
            print("Saved '\(library[index].name)' into slot \(slot).")
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "import", abstract: "Reads a preset file into a slot.")
        @Argument(help: "Slot 1, 2 or 3.") var slot: Int
        @Argument(help: "The preset file.") var file: String
        func run() throws {
            let index = try CoreCLI.slotIndex(slot)
            let library = try PresetsCommand.openLibrary()
            try PresetsCommand.run({ () throws(PresetLibraryError) in
                try library.importPreset(from: URL(fileURLWithPath: file), into: index)
            }, library)
            print("Imported '\(library[index].name)' into slot \(slot).")
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "export", abstract: "Writes a slot to a preset file.")
        @Argument(help: "Slot 1, 2 or 3.") var slot: Int
        @Argument(help: "The file to write.") var file: String
        @Flag(name: .long, help: "Replace the file if it exists.") var force = false
        func run() throws {
            let index = try CoreCLI.slotIndex(slot)
            if !force, SafeFile.exists(URL(fileURLWithPath: file)) {
                throw CoreCLI.fail("\(file) exists already and is left as it is (add --force to replace it)")
            }
            let library = try PresetsCommand.openLibrary()
            try PresetsCommand.run({ () throws(PresetLibraryError) in
                try library.export(index, to: URL(fileURLWithPath: file), overwrite: force)
            }, library)
            print("Exported slot \(slot) ('\(library[index].name)') to \(file).")
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rename", abstract: "Renames a slot.")
        @Argument(help: "Slot 1, 2 or 3.") var slot: Int
        @Argument(help: "The new name (up to 40 characters).") var name: String
        func run() throws {
            let index = try CoreCLI.slotIndex(slot)
            let library = try PresetsCommand.openLibrary()
            try PresetsCommand.run({ () throws(PresetLibraryError) in try library.rename(index, to: name) }, library)
            print("Slot \(slot) is now '\(library[index].name)'.")
        }
    }

    struct Select: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "select", abstract: "Selects a slot (the one the window recalls and saves into).")
        @Argument(help: "Slot 1, 2 or 3.") var slot: Int
        func run() throws {
            let index = try CoreCLI.slotIndex(slot)
            let library = try PresetsCommand.openLibrary()
            try PresetsCommand.run({ () throws(PresetLibraryError) in try library.select(index) }, library)
            print("Selected slot \(slot): '\(library[index].name)'.")
        }
    }
}
