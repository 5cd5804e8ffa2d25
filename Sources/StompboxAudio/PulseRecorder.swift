import CPulse
import Foundation

/// One mono recording stream from a PulseAudio source (or PipeWire's pulse server) through the
/// simple API, for the tuner's live input. Reads block until the samples are there; a program
/// that reads on its main thread keeps the default SIGINT/SIGTERM, which end it even while a read
/// waits on a stalled device.
public final class PulseRecorder {
    public let rate: Int
    private let stream: OpaquePointer

    /// Opens `source` (nil: the default source) at `rate`, mono float, in fragments of about 10 ms.
    public init(source: String?, rate: Int = 48_000, name: String = "Stompbox tuner") throws(RecordError) {
        self.rate = rate
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(rate), channels: 1)
        let fragment = UInt32(rate / 100 * 4)
        var attributes = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max, minreq: UInt32.max, fragsize: fragment)
        var error: Int32 = 0
        guard let stream = pa_simple_new(nil, "Stompbox", PA_STREAM_RECORD, source, name, &spec, nil, &attributes, &error) else {
            throw RecordError.failed(source: source ?? "the default source", reason: String(cString: pa_strerror(error)))
        }
        self.stream = stream
    }

    deinit { pa_simple_free(stream) }

    /// Fills `buffer` with the next samples.
    public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(RecordError) {
        var error: Int32 = 0
        guard pa_simple_read(stream, buffer.baseAddress, buffer.count * MemoryLayout<Float>.size, &error) == 0 else {
            throw RecordError.failed(source: "the input", reason: String(cString: pa_strerror(error)))
        }
    }
}

public enum RecordError: Error, CustomStringConvertible {
    case failed(source: String, reason: String)
    public var description: String {
        switch self {
        case .failed(let source, let reason): "cannot record from \(source): \(reason)"
        }
    }
}
