import CSndfile
import Foundation

/// Audio files held in memory rather than on disk: a session keeps its tracks' encoded bytes
/// inside its archive, so they are decoded and encoded through libsndfile's virtual I/O, with no
/// temporary file anywhere.
public enum AudioData {
    /// Decodes a whole file's bytes (any format libsndfile reads). `name` names it in errors.
    /// With `maximumFrames`, a file that decodes to more is refused once it passes that, so a
    /// small file that inflates enormously (FLAC of silence) cannot fill memory.
    public static func decode(_ bytes: Data, name: String, maximumFrames: Int? = nil) throws(AudioFileError) -> AudioBuffer {
        var samples = [Float]()
        let (rate, channels) = try read(bytes, name: name, maximumFrames: maximumFrames) { block, _, _ in
            samples.append(contentsOf: block)
        }
        return AudioBuffer(samples: samples, sampleRate: rate, channels: channels)
    }

    /// Decodes a file's bytes a block at a time, handing each block (interleaved), its first
    /// frame and the channels to `body`, so a file of hours is never whole in memory; returns
    /// its rate and channels. `maximumFrames` as `decode`.
    @discardableResult
    public static func read(_ bytes: Data, name: String, maximumFrames: Int? = nil,
                            _ body: (UnsafeBufferPointer<Float>, Int, Int) -> Void) throws(AudioFileError) -> (sampleRate: Int, channels: Int) {
        let (memory, file, info) = try openForReading(bytes, name: name)
        defer { sf_close(file); withExtendedLifetime(memory) {} }
        let channels = Int(info.channels)
        let chunk = 8192
        var scratch = [Float](repeating: 0, count: chunk * channels)
        var frames = 0
        while true {
            let n = scratch.withUnsafeMutableBufferPointer { Int(sf_readf_float(file, $0.baseAddress, sf_count_t(chunk))) }
            if n <= 0 { break }
            if let maximumFrames, frames + n > maximumFrames {
                throw .notAudio(path: name, detail: "it decodes to more than the \(maximumFrames) frames expected")
            }
            scratch.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[0..<n * channels]), frames, channels) }
            frames += n
        }
        if sf_error(file) != SF_ERR_NO_ERROR {
            throw .ioFailed(path: name, reason: "reading failed: \(sndfileMessage(file))")
        }
        return (Int(info.samplerate), channels)
    }

    /// What a file's header says: its rate, channels and frames, without decoding its samples.
    public static func info(_ bytes: Data, name: String) throws(AudioFileError) -> (sampleRate: Int, channels: Int, frames: Int) {
        let (memory, file, info) = try openForReading(bytes, name: name)
        sf_close(file)
        return withExtendedLifetime(memory) { (Int(info.samplerate), Int(info.channels), Int(info.frames)) }
    }

    /// `bytes` opened for reading through virtual I/O, its header checked. The caller closes the
    /// file and keeps `memory` alive until then (libsndfile reads through it).
    fileprivate static func openForReading(_ bytes: Data, name: String) throws(AudioFileError) -> (memory: MemoryFile, file: OpaquePointer, info: SF_INFO) {
        let memory = MemoryFile(bytes)
        var io = MemoryFile.io
        var info = SF_INFO()
        let user = Unmanaged.passUnretained(memory).toOpaque()
        guard let file = sf_open_virtual(&io, Int32(SFM_READ), &info, user) else {
            throw .notAudio(path: name, detail: sndfileMessage(nil))
        }
        guard info.channels > 0, info.samplerate > 0 else {
            sf_close(file)
            throw .notAudio(path: name, detail: "it declares \(info.channels) channels at \(info.samplerate) Hz")
        }
        return (memory, file, info)
    }

    /// Encodes `buffer` as a whole file of `format` (24-bit PCM unless told) and returns its bytes.
    /// The same samples always give the same bytes. `name` names it in errors.
    public static func encode(_ buffer: AudioBuffer, format: AudioFileFormat, samples: AudioSampleFormat = .pcm24,
                              name: String) throws(AudioFileError) -> Data {
        var info = SF_INFO()
        info.samplerate = Int32(clamping: buffer.sampleRate)
        info.channels = Int32(clamping: buffer.channels)
        info.format = format.sndfileFormat(samples)
        guard sf_format_check(&info) == SF_TRUE else {
            throw .unsupported(path: name, reason: "\(format.name) cannot hold \(buffer.channels) channels of \(samples.name) samples at \(buffer.sampleRate) Hz")
        }
        let memory = MemoryFile(Data())
        var io = MemoryFile.io
        let user = Unmanaged.passUnretained(memory).toOpaque()
        guard let file = sf_open_virtual(&io, Int32(SFM_WRITE), &info, user) else {
            throw .unwritable(path: name, reason: sndfileMessage(nil))
        }
        // Float → integer: saturate at full scale rather than wrap around.
        if samples == .pcm24 { sf_command(file, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE)) }
        let written = buffer.samples.withUnsafeBufferPointer { p in
            p.isEmpty ? 0 : Int(sf_writef_float(file, p.baseAddress, sf_count_t(buffer.frames)))
        }
        let failure = written == buffer.frames ? nil : sndfileMessage(file)
        let status = sf_close(file)
        if let failure { throw .ioFailed(path: name, reason: "writing failed: \(failure)") }
        guard status == 0 else {
            throw .ioFailed(path: name, reason: "closing failed: \(String(cString: sf_error_number(status)))")
        }
        return withExtendedLifetime(memory) { memory.bytes }
    }
}

/// A file's bytes decoded a block at a time from any frame (a session track mixed as it plays).
/// One thread at a time.
public final class AudioDataReader {
    public let sampleRate: Int
    public let channels: Int
    public let frames: Int
    /// The next frame `read` gives.
    public private(set) var position = 0
    private let memory: MemoryFile
    private let file: OpaquePointer

    public init(_ bytes: Data, name: String) throws(AudioFileError) {
        let (memory, file, info) = try AudioData.openForReading(bytes, name: name)
        self.memory = memory
        self.file = file
        sampleRate = Int(info.samplerate)
        channels = Int(info.channels)
        frames = Int(info.frames)
    }

    deinit { sf_close(file) }

    /// Moves to `frame` (within the file); false if the file cannot seek there.
    public func seek(to frame: Int) -> Bool {
        guard frame != position else { return true }
        guard sf_seek(file, sf_count_t(frame), SEEK_SET) == sf_count_t(frame) else { return false }
        position = frame
        return true
    }

    /// Up to `count` frames, interleaved, into `into`; returns how many (0 at the end).
    public func read(into: UnsafeMutablePointer<Float>, frames count: Int) -> Int {
        let n = max(0, Int(sf_readf_float(file, into, sf_count_t(count))))
        position += n
        return n
    }
}

/// Bytes that libsndfile reads and writes as if they were a file. Reading holds the caller's
/// `Data` as it is (a file mapped from disk stays mapped, not copied).
private final class MemoryFile {
    var bytes: Data
    var position = 0

    init(_ bytes: Data) { self.bytes = bytes }

    static func of(_ user: UnsafeMutableRawPointer?) -> MemoryFile {
        Unmanaged<MemoryFile>.fromOpaque(user!).takeUnretainedValue()
    }

    static let io = SF_VIRTUAL_IO(
        get_filelen: { user in sf_count_t(MemoryFile.of(user).bytes.count) },
        seek: { offset, whence, user in
            let f = MemoryFile.of(user)
            let base: Int
            switch whence {
            case SEEK_SET: base = 0
            case SEEK_CUR: base = f.position
            case SEEK_END: base = f.bytes.count
            default: return -1
            }
            let target = base + Int(offset)
            guard target >= 0 else { return -1 }
            f.position = target
            return sf_count_t(target)
        },
        read: { pointer, count, user in
            let f = MemoryFile.of(user)
            let n = max(0, min(Int(count), f.bytes.count - f.position))
            if n > 0, let pointer {
                f.bytes.withUnsafeBytes { pointer.copyMemory(from: $0.baseAddress! + f.position, byteCount: n) }
            }
            f.position += n
            return sf_count_t(n)
        },
        write: { pointer, count, user in
            let f = MemoryFile.of(user)
            let n = Int(count)
            guard n > 0, let pointer else { return 0 }
            let end = f.position + n
            if end > f.bytes.count { f.bytes.append(contentsOf: repeatElement(0, count: end - f.bytes.count)) }
            f.bytes.withUnsafeMutableBytes { ($0.baseAddress! + f.position).copyMemory(from: pointer, byteCount: n) }
            f.position = end
            return count
        },
        tell: { user in sf_count_t(MemoryFile.of(user).position) })
}
