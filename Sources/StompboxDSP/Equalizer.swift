import Foundation

/// PLACEHOLDER: passes the signal through until the effect is written.
public final class Equalizer: AudioEffect {
    /// Centre frequencies of the six peaking bands.
    public static let bandFrequencies: [Double] = [100, 250, 630, 1600, 4000, 10000]

    let parameters: ParameterStore

    public init(parameters: ParameterStore) {
        self.parameters = parameters
    }

    public func prepare(sampleRate: Double, maximumBlockSize: Int) {}
    public func reset() {}
    public func process(_ block: UnsafeMutableBufferPointer<Float>) {}
}
