import Foundation

/// PLACEHOLDER: passes the signal through until the effect is written.
public final class Looper: AudioEffect {
    let parameters: ParameterStore
    let control: LooperControl

    public init(parameters: ParameterStore, control: LooperControl) {
        self.parameters = parameters
        self.control = control
    }

    public func prepare(sampleRate: Double, maximumBlockSize: Int) {}
    public func reset() {}
    public func process(_ block: UnsafeMutableBufferPointer<Float>) {}
}
