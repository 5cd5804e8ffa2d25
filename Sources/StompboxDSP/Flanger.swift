import Foundation

/// PLACEHOLDER: passes the signal through until the effect is written.
public final class Flanger: AudioEffect {
    let parameters: ParameterStore

    public init(parameters: ParameterStore) {
        self.parameters = parameters
    }

    public func prepare(sampleRate: Double, maximumBlockSize: Int) {}
    public func reset() {}
    public func process(_ block: UnsafeMutableBufferPointer<Float>) {}
}
