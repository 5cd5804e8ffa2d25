import Foundation

/// Reads model files: Neural Amp Modeler captures (`.nam`, file format 0.5 to 0.7) and AIDA-X /
/// RTNeural Keras models (`.json`, `.aidax`). Each architecture's builder lives beside its
/// network; this reads the envelope (version, architecture, metadata, rate) and checks it.
/// Not on the audio thread.
public enum NeuralModels {
    /// The NAM file versions read: 0.5.0 up to 0.7.x (0.7 is the A2 trainer's format).
    public static let earliestNAMVersion = (0, 5, 0)
    public static let latestNAMVersion = (0, 7)
    /// The file name extensions a model may have.
    public static let fileExtensions = ["nam", "json", "aidax"]

    /// Reads the model in `path`. Throws one `NeuralModelError` naming the file and the problem.
    public static func load(file path: String) throws -> NeuralModel {
        let name = (path as NSString).lastPathComponent
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw NeuralModelError(file: name, problem: FileManager.default.fileExists(atPath: path) ? "cannot be read" : "no such file")
        }
        return try parse(data, file: name)
    }

    /// Reads a model from a file's bytes; `file` names it in messages.
    public static func parse(_ data: Data, file: String) throws -> NeuralModel {
        do {
            guard let object = try? JSONSerialization.jsonObject(with: data), let json = object as? [String: Any] else {
                throw NeuralModelProblem("is not a model file (not JSON)")
            }
            if json["architecture"] != nil || json["weights"] != nil && json["config"] != nil {
                return try nam(json)
            }
            if json["layers"] != nil {
                return try NeuralKerasModel.build(json)
            }
            throw NeuralModelProblem("is not a model file (neither a NAM capture nor an AIDA-X/RTNeural model)")
        } catch let problem as NeuralModelProblem {
            throw NeuralModelError(file: file, problem: problem.description)
        }
    }

    /// A NAM file's envelope: checks the version, reads the metadata and builds the
    /// architecture it names (a container's submodels through here too).
    static func nam(_ json: [String: Any]) throws -> NeuralModel {
        let version = try NeuralJSON.string(json["version"], "version")
        let parts = version.split(separator: ".", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 3, let major = parts[0], let minor = parts[1], parts[2] != nil else {
            throw NeuralModelProblem("has a version \"\(version)\" that is not major.minor.patch")
        }
        if (major, minor) > latestNAMVersion {
            throw NeuralModelProblem("is NAM format \(version), newer than this Stompbox reads (up to \(latestNAMVersion.0).\(latestNAMVersion.1).x)")
        }
        if (major, minor) < (earliestNAMVersion.0, earliestNAMVersion.1) {
            throw NeuralModelProblem("is NAM format \(version), older than this Stompbox reads (0.5.0 on)")
        }
        let architecture = try NeuralJSON.string(json["architecture"], "architecture")
        var info = NeuralModelInfo(format: "NAM", version: version, architecture: architecture)
        if let rate = NeuralJSON.number(json["sample_rate"]) {
            guard rate.isFinite, rate >= 8_000, rate <= 384_000 else { throw NeuralModelProblem("has a sample rate \(rate) no interface plays") }
            info.sampleRate = rate
        }
        if let metadata = json["metadata"] as? [String: Any] {
            info.name = metadata["name"] as? String
            info.modeledBy = metadata["modeled_by"] as? String
            info.gearMake = metadata["gear_make"] as? String
            info.gearModel = metadata["gear_model"] as? String
            info.gearType = metadata["gear_type"] as? String
            info.toneType = metadata["tone_type"] as? String
            info.loudness = NeuralJSON.number(metadata["loudness"]).flatMap { $0.isFinite ? $0 : nil }
            info.inputLevelDBu = NeuralJSON.number(metadata["input_level_dbu"]).flatMap { $0.isFinite ? $0 : nil }
            info.outputLevelDBu = NeuralJSON.number(metadata["output_level_dbu"]).flatMap { $0.isFinite ? $0 : nil }
        }
        let config = try NeuralJSON.object(json["config"], "config")
        let network: any NeuralNetwork
        switch architecture {
        case "Linear": network = try NAMLinear.build(config: config, weights: NeuralJSON.floats(json["weights"], "weights"))
        case "WaveNet": network = try NAMWaveNet.build(config: config, weights: NeuralJSON.floats(json["weights"], "weights"))
        case "SlimmableContainer": network = try NAMWaveNet.buildContainer(config: config, sampleRate: info.sampleRate)
        case "LSTM": network = try NAMLSTM.build(config: config, weights: NeuralJSON.floats(json["weights"], "weights"))
        case "ConvNet": network = try NAMConvNet.build(config: config, weights: NeuralJSON.floats(json["weights"], "weights"))
        default: throw NeuralModelProblem("has an architecture \"\(architecture)\" this Stompbox does not play")
        }
        return NeuralModel(info: info, network: network)
    }

    /// Runs a freshly prepared network on silence until its history and state are what
    /// silence leaves (its receptive field, or 0.5 s at `rate` for a recurrent one), so its
    /// first block on the audio thread starts from rest. Not on the audio thread.
    public static func prewarm(_ network: any NeuralNetwork, rate: Double, maximumBlockSize: Int) {
        network.reset()
        let total = network.isRecurrent ? Int(rate * 0.5) : network.receptiveField
        let block = max(1, maximumBlockSize)
        let silence = [Float](repeating: 0, count: block)
        var scratch = [Float](repeating: 0, count: block)
        var done = 0
        silence.withUnsafeBufferPointer { input in
            scratch.withUnsafeMutableBufferPointer { output in
                while done < total {
                    let count = min(block, total - done)
                    network.process(input.baseAddress!, output.baseAddress!, count: count)
                    done += count
                }
            }
        }
    }
}
