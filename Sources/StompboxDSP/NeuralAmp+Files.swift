import Foundation

/// How the window offers the Amp Model's files: a chooser of model files, the model's own name
/// on the pedal, and a model a preset named that is gone.
extension NeuralAmp {
    public var fileChooserTitle: String { "Load a model" }
    public var fileTypes: (name: String, patterns: [String]) {
        ("Amp models (NAM, AIDA-X)", NeuralModels.fileExtensions.flatMap { ["*.\($0)", "*.\($0.uppercased())"] })
    }

    public func label(forFile path: String) -> String {
        let status = status
        guard status.file == path else { return ((path as NSString).lastPathComponent as NSString).deletingPathExtension }
        return status.missing == nil ? status.name : "\(status.name) (missing)"
    }

    public var fileProblem: String? {
        let status = status
        return status.missing.map { _ in status.summary }
    }

    public var fileDetail: String? { status.summary }
}
