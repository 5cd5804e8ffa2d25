import ArgumentParser
import Foundation
import StompboxCore
import StompboxDSP

/// `stompbox models [FILE] [--json]`: the amp model files one has, or what one file says.
struct ModelsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "models",
        abstract: "Lists the amp model files (the Amp Model pedal's neural.file), or shows one file's metadata.",
        discussion: """
            Without FILE, lists the model files (.nam, .json, .aidax) in \
            $XDG_DATA_HOME/stompbox/models (default ~/.local/share/stompbox/models), each with its \
            name, architecture and rate, or why it cannot be played. With FILE, prints what the \
            file says of itself: name, gear, tone type, sample rate, loudness, input and output \
            levels, architecture and format version. A file that cannot be played is one message \
            and exit status 1. Play one with --set neural.file=FILE --set neural.enabled=on.
            """)

    @Argument(help: "A model file to describe.")
    var file: String?

    @Flag(help: "Print JSON: the file's metadata, or a list of every file's.")
    var json = false

    /// One file as `--json` prints it: what it says of itself, or why it cannot be played.
    struct Described: Encodable {
        let file: String
        let format: String?
        let version: String?
        let architecture: String?
        let name: String?
        let modeledBy: String?
        let gearMake: String?
        let gearModel: String?
        let gearType: String?
        let toneType: String?
        /// The rate it was trained at, as the file says (nil: it does not say).
        let sampleRate: Double?
        /// The rate it plays at (48 kHz when the file does not say).
        let rate: Double?
        let loudness: Double?
        let inputLevelDBu: Double?
        let outputLevelDBu: Double?
        let problem: String?

        enum CodingKeys: String, CodingKey {
            case file, format, version, architecture, name, rate, loudness, problem
            case modeledBy = "modeled_by", gearMake = "gear_make", gearModel = "gear_model", gearType = "gear_type"
            case toneType = "tone_type", sampleRate = "sample_rate"
            case inputLevelDBu = "input_level_dbu", outputLevelDBu = "output_level_dbu"
        }

        init(file: String, info: NeuralModelInfo?, problem: String?) {
            self.file = file
            format = info?.format
            version = info?.version
            architecture = info?.architecture
            name = info?.name
            modeledBy = info?.modeledBy
            gearMake = info?.gearMake
            gearModel = info?.gearModel
            gearType = info?.gearType
            toneType = info?.toneType
            sampleRate = info?.sampleRate
            rate = info?.rate
            loudness = info?.loudness
            inputLevelDBu = info?.inputLevelDBu
            outputLevelDBu = info?.outputLevelDBu
            self.problem = problem
        }
    }

    func run() throws {
        if let file {
            let path = URL(fileURLWithPath: file).standardizedFileURL.path
            let model: NeuralModel
            do { model = try NeuralModels.load(file: path) } catch { fail("\(error)") }
            if json { return printJSON(Described(file: path, info: model.info, problem: nil)) }
            describe(model.info, file: path)
            return
        }
        let folder = UserDirectories().models
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { NeuralModels.fileExtensions.contains(($0 as NSString).pathExtension.lowercased()) }
            .sorted { $0.localizedStandardCompare($1) == .orderedAscending }
        let listed = names.map { name -> Described in
            let path = folder.appendingPathComponent(name).path
            do {
                return Described(file: path, info: try NeuralModels.load(file: path).info, problem: nil)
            } catch let error as NeuralModelError {
                return Described(file: path, info: nil, problem: error.problem)
            } catch {
                return Described(file: path, info: nil, problem: "\(error)")
            }
        }
        if json { return printJSON(listed) }
        guard !listed.isEmpty else {
            print("No model files in \(folder.path) (put .nam, .json or .aidax files there, or play one with --set neural.file=FILE).")
            return
        }
        for model in listed {
            let name = (model.file as NSString).lastPathComponent
            if let problem = model.problem {
                print("\(name)  cannot be played: \(problem)")
            } else {
                let title = model.name.map { "\($0)  " } ?? ""
                print("\(name)  \(title)\(model.format ?? "") \(model.architecture ?? ""), \(Self.rate(model.rate ?? 48_000))")
            }
        }
    }

    private func printJSON<T: Encodable>(_ value: T) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: (try? encoder.encode(value)) ?? Data("{}".utf8), as: UTF8.self))
    }

    static func rate(_ hz: Double) -> String {
        let khz = hz / 1000
        return (khz == khz.rounded() ? String(Int(khz)) : String(format: "%.1f", khz)) + " kHz"
    }

    private func describe(_ info: NeuralModelInfo, file: String) {
        func number(_ value: Double?, _ unit: String) -> String { value.map { String(format: "%g %@", $0, unit) } ?? "not stated" }
        let gear = [info.gearMake, info.gearModel].compactMap { $0 }.joined(separator: " ")
        print("file:          \(file)")
        print("name:          \(info.name ?? "not stated")")
        print("modeled by:    \(info.modeledBy ?? "not stated")")
        print("gear:          \(gear.isEmpty ? "not stated" : gear)\(info.gearType.map { " (\($0))" } ?? "")")
        print("tone type:     \(info.toneType ?? "not stated")")
        print("sample rate:   \(info.sampleRate.map(Self.rate) ?? "not stated (plays at 48 kHz)")")
        print("loudness:      \(number(info.loudness, "dB"))")
        print("input level:   \(number(info.inputLevelDBu, "dBu"))")
        print("output level:  \(number(info.outputLevelDBu, "dBu"))")
        print("architecture:  \(info.format) \(info.architecture)")
        print("version:       \(info.version ?? "none")")
    }
}
