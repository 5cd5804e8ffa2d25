/// What a prepared WaveNet plays from, as trivial values in memory its arena owns: the audio
/// thread reads and advances them without reference counting.
enum NAMWaveNetPlan {
    /// A FiLM: scale (and shift) computed from the condition by a 1×1 with bias.
    struct FiLM {
        var gemm: NeuralGEMM
        var dimension: Int
        var shift: Bool
    }

    struct Layer {
        /// The dilated convolution's input history (the FiLM'd input when conv_pre_film).
        var ring: NeuralRing
        var kernelSize: Int
        var dilation: Int
        /// The dilated convolution, with the input mixin's columns after the taps when `mixinFused`.
        var conv: NeuralGEMM
        var mixin: NeuralGEMM?
        var mixinFused: Bool
        /// kernelSize + 1 segments, filled per block.
        var segments: UnsafeMutablePointer<NeuralGEMM.Segment>
        var activation: NAMActivation
        var secondary: NAMActivation
        var gating: NAMWaveNetConfig.Gating
        var layer1x1: NeuralGEMM?
        var head1x1: NeuralGEMM?
        /// Eight entries, in `NAMWaveNetConfig.filmKeys`' order.
        var films: UnsafeMutablePointer<FiLM?>
        /// No gating, FiLM or head1x1: the activation and the skip sum are one pass over the
        /// convolution's output.
        var fused: Bool
        var preFiLM: Bool { films[0] != nil }
    }

    struct LayerArray {
        var channels: Int
        var bottleneck: Int
        var inputSize: Int
        var headInputs: Int
        var headSize: Int
        var rechannel: NeuralGEMM
        var layers: UnsafeMutablePointer<Layer>
        var layerCount: Int
        /// The layers' skip sum, kept as a history for the head convolution's taps.
        var headRing: NeuralRing
        var headKernel: Int
        var headDilation: Int
        var head: NeuralGEMM
        var headSegments: UnsafeMutablePointer<NeuralGEMM.Segment>
        /// The last layer's output (channels rows) and the head's (headSize rows), `pad` apart.
        var output: UnsafeMutablePointer<Float>
        var headOutput: UnsafeMutablePointer<Float>
    }

    /// One convolution of the post-stack head, with the history of its (activated) input.
    struct HeadConv {
        var ring: NeuralRing
        var kernelSize: Int
        var conv: NeuralGEMM
        var segments: UnsafeMutablePointer<NeuralGEMM.Segment>
    }
}
