import CSndfile
import CSamplerate
import Foundation

/// What can go wrong with an audio file, said in plain words with the file's path.
public enum AudioFileError: Error, Equatable, CustomStringConvertible {
    /// Nothing at that path.
    case missingFile(path: String)
    /// The path is a folder, not a file.
    case isFolder(path: String)
    /// libsndfile could not read it as audio; `detail` is libsndfile's own message.
    case notAudio(path: String, detail: String)
    /// The output's extension names no format we write.
    case unknownExtension(path: String)
    /// The output cannot be created there (no such folder, no permission, …).
    case unwritable(path: String, reason: String)
    /// The format cannot hold this rate or channel count (FLAC tops out at 8 channels).
    case unsupported(path: String, reason: String)
    /// Reading or writing failed part-way (disk full, file truncated under us).
    case ioFailed(path: String, reason: String)

    public var description: String {
        switch self {
        case .missingFile(let path): "'\(path)' does not exist"
        case .isFolder(let path): "'\(path)' is a folder, not an audio file"
        case .notAudio(let path, let detail): "'\(path)' is not an audio file that can be read (\(detail))"
        case .unknownExtension(let path):
            "cannot tell which format to write '\(path)' in: its name must end in .wav, .aiff or .flac"
        case .unwritable(let path, let reason): "cannot write '\(path)': \(reason)"
        case .unsupported(let path, let reason): "cannot write '\(path)': \(reason)"
        case .ioFailed(let path, let reason): "'\(path)': \(reason)"
        }
    }
}

/// The formats Stompbox writes, chosen from the output's extension.
///
/// WAV is written as 24-bit PCM rather than 32-bit float: it is what an audio interface records,
/// every DAW, sampler, phone and hardware player opens it, and the chain's safety limiter already
/// keeps the output within ±1.0, so float's headroom above full scale would carry nothing. 24 bits
/// give a 144 dB range, far below any guitar rig's noise floor.
public enum AudioFileFormat: String, CaseIterable, Sendable {
    case wav, aiff, flac

    /// The format for a path's extension (case-insensitive: .wav/.wave, .aiff/.aif, .flac).
    public init(path: String) throws(AudioFileError) {
        switch (path as NSString).pathExtension.lowercased() {
        case "wav", "wave": self = .wav
        case "aiff", "aif": self = .aiff
        case "flac": self = .flac
        default: throw .unknownExtension(path: path)
        }
    }

    var name: String {
        switch self {
        case .wav: "WAV"
        case .aiff: "AIFF"
        case .flac: "FLAC"
        }
    }

    /// libsndfile's major format | the sample encoding (24-bit PCM unless told).
    func sndfileFormat(_ samples: AudioSampleFormat = .pcm24) -> Int32 {
        let major: Int32
        switch self {
        case .wav: major = Int32(SF_FORMAT_WAV)
        case .aiff: major = Int32(SF_FORMAT_AIFF)
        case .flac: major = Int32(SF_FORMAT_FLAC)
        }
        return major | samples.sndfileSubtype
    }
}

/// How samples are stored. 24-bit PCM is the default (see `AudioFileFormat`); 32-bit float is
/// for audio that must keep peaks above full scale or every bit of a float signal (a session's
/// tracks, on request). FLAC holds PCM only.
public enum AudioSampleFormat: String, CaseIterable, Sendable {
    case pcm24, float32

    var sndfileSubtype: Int32 {
        switch self {
        case .pcm24: Int32(SF_FORMAT_PCM_24)
        case .float32: Int32(SF_FORMAT_FLOAT)
        }
    }

    var name: String {
        switch self {
        case .pcm24: "24-bit"
        case .float32: "32-bit float"
        }
    }
}

/// A whole audio file in memory: interleaved frames as Float (full scale ±1.0).
public struct AudioBuffer: Equatable, Sendable {
    public var samples: [Float]
    public var sampleRate: Int
    public var channels: Int

    public init(samples: [Float], sampleRate: Int, channels: Int) {
        precondition(channels > 0 && samples.count % channels == 0, "samples must hold whole frames")
        self.samples = samples
        self.sampleRate = sampleRate
        self.channels = channels
    }

    public var frames: Int { samples.count / channels }

    /// One channel's samples (0-based).
    public func channel(_ c: Int) -> [Float] {
        precondition((0..<channels).contains(c))
        return stride(from: c, to: samples.count, by: channels).map { samples[$0] }
    }
}

/// Reads any file libsndfile reads (WAV, AIFF, FLAC, Ogg, …) frame by frame as Float.
public final class AudioFileReader {
    public let path: String
    public let sampleRate: Int
    public let channels: Int
    /// As the file's header says; `read` returns fewer if the file is cut short.
    public let frames: Int
    private let file: OpaquePointer

    public init(path: String) throws(AudioFileError) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw .missingFile(path: path)
        }
        guard !isFolder.boolValue else { throw .isFolder(path: path) }
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw .notAudio(path: path, detail: sndfileMessage(nil))
        }
        guard info.channels > 0, info.samplerate > 0 else {
            sf_close(file)
            throw .notAudio(path: path, detail: "it declares \(info.channels) channels at \(info.samplerate) Hz")
        }
        self.path = path
        self.file = file
        sampleRate = Int(info.samplerate)
        channels = Int(info.channels)
        frames = Int(info.frames)
    }

    deinit { sf_close(file) }

    /// Reads up to `frameCount` interleaved frames into `buffer` (which holds at least
    /// `frameCount * channels` samples); returns how many frames were read (0 at the end).
    public func read(into buffer: UnsafeMutablePointer<Float>, frames frameCount: Int) throws(AudioFileError) -> Int {
        let n = sf_readf_float(file, buffer, sf_count_t(frameCount))
        if n < frameCount, sf_error(file) != SF_ERR_NO_ERROR {
            throw .ioFailed(path: path, reason: "reading failed: \(sndfileMessage(file))")
        }
        return Int(n)
    }

    /// Reads the rest of the file.
    public func readAll() throws(AudioFileError) -> AudioBuffer {
        var samples = [Float]()
        samples.reserveCapacity(max(0, frames) * channels)
        let chunk = 8192
        var scratch = [Float](repeating: 0, count: chunk * channels)
        while true {
            let n = try scratch.withUnsafeMutableBufferPointer { (p) throws(AudioFileError) -> Int in
                try read(into: p.baseAddress!, frames: chunk)
            }
            if n == 0 { break }
            samples.append(contentsOf: scratch[0..<n * channels])
        }
        return AudioBuffer(samples: samples, sampleRate: sampleRate, channels: channels)
    }
}

/// Writes 24-bit PCM (or `samples`) in the format of the path's extension, straight to `path`.
/// For an output that must never be left half-written, use `AtomicAudioFileWriter`.
public final class AudioFileWriter {
    public let path: String
    public let format: AudioFileFormat
    public let sampleRate: Int
    public let channels: Int
    private var file: OpaquePointer?

    /// `reportedPath` names the file in errors (the temporary file's final name, for instance).
    /// `large`: a WAV is written as RF64, which has no 4 GB limit (libsndfile makes it a plain
    /// WAV at `close` when it stayed small).
    public init(path: String, format: AudioFileFormat, sampleRate: Int, channels: Int,
                samples: AudioSampleFormat = .pcm24, reportedPath: String? = nil, large: Bool = false) throws(AudioFileError) {
        let shown = reportedPath ?? path
        self.path = shown
        self.format = format
        self.sampleRate = sampleRate
        self.channels = channels
        guard sampleRate > 0, channels > 0 else {
            throw .unsupported(path: shown, reason: "\(channels) channels at \(sampleRate) Hz is not audio")
        }
        var info = SF_INFO()
        info.samplerate = Int32(clamping: sampleRate)
        info.channels = Int32(clamping: channels)
        info.format = format.sndfileFormat(samples)
        if large && format == .wav { info.format = (info.format & ~Int32(SF_FORMAT_TYPEMASK)) | Int32(SF_FORMAT_RF64) }
        guard sf_format_check(&info) == SF_TRUE else {
            throw .unsupported(path: shown, reason: "\(format.name) cannot hold \(channels) channels of \(samples.name) samples at \(sampleRate) Hz")
        }
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw .unwritable(path: shown, reason: sndfileMessage(nil))
        }
        self.file = file
        if large && format == .wav { sf_command(file, Int32(SFC_RF64_AUTO_DOWNGRADE), nil, Int32(SF_TRUE)) }
        // Float → integer: saturate at full scale rather than wrap around.
        if samples == .pcm24 { sf_command(file, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE)) }
    }

    deinit { if let file { sf_close(file) } }

    /// Appends `frameCount` interleaved frames.
    public func write(_ samples: UnsafePointer<Float>, frames frameCount: Int) throws(AudioFileError) {
        guard let file else { preconditionFailure("write after close") }
        let n = sf_writef_float(file, samples, sf_count_t(frameCount))
        guard n == frameCount else {
            throw .ioFailed(path: path, reason: "writing failed: \(sndfileMessage(file))")
        }
    }

    /// Writes the header's lengths for what is written so far, so a file left by a killed
    /// process reads up to here.
    public func updateHeader() {
        guard let file else { return }
        sf_command(file, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
    }

    public func write(_ buffer: AudioBuffer) throws(AudioFileError) {
        precondition(buffer.channels == channels)
        try buffer.samples.withUnsafeBufferPointer { (p) throws(AudioFileError) in
            guard let base = p.baseAddress else { return }
            try write(base, frames: buffer.frames)
        }
    }

    /// Flushes to disk and closes; the header's lengths are final after this.
    public func close() throws(AudioFileError) {
        guard let file else { return }
        self.file = nil
        sf_write_sync(file)
        let status = sf_close(file)
        guard status == 0 else {
            throw .ioFailed(path: path, reason: "closing failed: \(String(cString: sf_error_number(status)))")
        }
    }
}

/// Writes to a temporary file beside `path` and renames it onto `path` in `commit()`, so `path`
/// is either its old self or the complete new file, never a partial one. Unless committed, the
/// temporary file is removed (by `discard()` or when the writer goes away).
public final class AtomicAudioFileWriter {
    public let path: String
    public let temporaryPath: String
    private var writer: AudioFileWriter?

    public init(path: String, sampleRate: Int, channels: Int, samples: AudioSampleFormat = .pcm24) throws(AudioFileError) {
        let format = try AudioFileFormat(path: path)
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw .unwritable(path: path, reason: "the folder '\(folder)' does not exist")
        }
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            throw .unwritable(path: path, reason: "it is a folder")
        }
        self.path = path
        let suffix = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        temporaryPath = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(suffix).partial").path
        writer = try AudioFileWriter(path: temporaryPath, format: format, sampleRate: sampleRate,
                                     channels: channels, samples: samples, reportedPath: path)
    }

    deinit { discard() }

    public func write(_ samples: UnsafePointer<Float>, frames: Int) throws(AudioFileError) {
        guard let writer else { preconditionFailure("write after commit or discard") }
        try writer.write(samples, frames: frames)
    }

    /// Closes the temporary file and renames it onto `path`.
    public func commit() throws(AudioFileError) {
        guard let writer else { preconditionFailure("commit after commit or discard") }
        do {
            try writer.close()
        } catch {
            discard()
            throw error
        }
        self.writer = nil
        guard rename(temporaryPath, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw .unwritable(path: path, reason: reason)
        }
    }

    /// Abandons the output: closes and removes the temporary file; `path` is untouched.
    public func discard() {
        guard writer != nil else { return }
        writer = nil
        unlink(temporaryPath)
    }
}

/// Whole-file conveniences.
public enum AudioFile {
    public static func read(_ path: String) throws(AudioFileError) -> AudioBuffer {
        try AudioFileReader(path: path).readAll()
    }

    /// Copies `frames` frames of the file at `source`, from frame `skipping`, into a new file at
    /// `destination` (`format`, `samples`), a block at a time, so a file of hours never sits in
    /// memory. Where the source ends early, the rest is silence. With `rate` (another than the
    /// source's) the frames are converted to it on the way (libsamplerate's medium sinc, as
    /// `AudioBuffer.resampled`), and the result is their duration at that rate rounded to the
    /// nearest frame; without, exactly `frames` long. Returns the frames written.
    @discardableResult
    public static func transcode(_ source: String, skipping: Int, frames: Int, to destination: String,
                                 format: AudioFileFormat, samples: AudioSampleFormat, rate: Int? = nil) throws(AudioFileError) -> Int {
        let reader = try AudioFileReader(path: source)
        let outRate = rate ?? reader.sampleRate
        let writer = try AudioFileWriter(path: destination, format: format, sampleRate: outRate,
                                         channels: reader.channels, samples: samples)
        let block = 65_536, channels = reader.channels
        var scratch = [Float](repeating: 0, count: block * channels)
        // The source's frames in order, silence past its end.
        var skip = skipping, left = frames
        func next(_ base: UnsafeMutablePointer<Float>) throws(AudioFileError) -> Int {
            while skip > 0 {
                let n = try reader.read(into: base, frames: min(block, skip))
                if n == 0 { skip = 0; break }
                skip -= n
            }
            let want = min(block, left)
            guard want > 0 else { return 0 }
            let got = try reader.read(into: base, frames: want)
            if got < want { (base + got * channels).update(repeating: 0, count: (want - got) * channels) }
            left -= want
            return want
        }
        var written = 0
        if outRate == reader.sampleRate {
            try scratch.withUnsafeMutableBufferPointer { (p) throws(AudioFileError) in
                while true {
                    let n = try next(p.baseAddress!)
                    if n == 0 { break }
                    try writer.write(p.baseAddress!, frames: n)
                    written += n
                }
            }
        } else {
            written = try convert(next: next, scratch: &scratch, block: block, frames: frames, from: reader.sampleRate,
                                  to: outRate, channels: channels, writer: writer, name: source)
        }
        try writer.close()
        return written
    }

    /// Streams `frames` source frames (from `next`) through a sample-rate converter into `writer`:
    /// exactly their duration at `to`, rounded to the nearest frame.
    private static func convert(next: (UnsafeMutablePointer<Float>) throws(AudioFileError) -> Int, scratch: inout [Float], block: Int,
                                frames: Int, from: Int, to: Int, channels: Int, writer: AudioFileWriter,
                                name: String) throws(AudioFileError) -> Int {
        let ratio = Double(to) / Double(from)
        let target = Int((Double(frames) * ratio).rounded())
        var error: Int32 = 0
        guard let converter = src_new(Int32(SRC_SINC_MEDIUM_QUALITY), Int32(channels), &error) else {
            throw .ioFailed(path: name, reason: "the sample-rate converter cannot start: \(String(cString: src_strerror(error)))")
        }
        defer { src_delete(converter) }
        let outBlock = Int(Double(block) * ratio) + 256
        var output = [Float](repeating: 0, count: outBlock * channels)
        var written = 0, pending = 0, consumed = 0, ended = false
        try scratch.withUnsafeMutableBufferPointer { (input) throws(AudioFileError) in
            try output.withUnsafeMutableBufferPointer { (out) throws(AudioFileError) in
                while written < target {
                    if pending == 0 && !ended {
                        pending = try next(input.baseAddress!)
                        consumed = 0
                        if pending == 0 { ended = true }
                    }
                    var data = SRC_DATA()
                    data.data_in = UnsafePointer(input.baseAddress! + consumed * channels)
                    data.input_frames = pending
                    data.data_out = out.baseAddress!
                    data.output_frames = outBlock
                    data.end_of_input = ended ? 1 : 0
                    data.src_ratio = ratio
                    let status = src_process(converter, &data)
                    if status != 0 { throw .ioFailed(path: name, reason: "converting the rate failed: \(String(cString: src_strerror(status)))") }
                    consumed += data.input_frames_used
                    pending -= data.input_frames_used
                    let n = min(data.output_frames_gen, target - written)
                    if n > 0 { try writer.write(out.baseAddress!, frames: n) }
                    written += n
                    if ended && data.output_frames_gen == 0 { break }
                }
                // The converter's last frames fell short of the exact length: silence up to it.
                if written < target {
                    out.baseAddress!.update(repeating: 0, count: outBlock * channels)
                    while written < target {
                        let n = min(outBlock, target - written)
                        try writer.write(out.baseAddress!, frames: n)
                        written += n
                    }
                }
            }
        }
        return written
    }

    /// Writes `buffer` atomically in the format of `path`'s extension (24-bit PCM).
    public static func write(_ buffer: AudioBuffer, to path: String) throws(AudioFileError) {
        try write(buffer, to: path, samples: .pcm24)
    }

    /// Writes `buffer` atomically in the format of `path`'s extension with `samples`.
    public static func write(_ buffer: AudioBuffer, to path: String, samples: AudioSampleFormat) throws(AudioFileError) {
        let out = try AtomicAudioFileWriter(path: path, sampleRate: buffer.sampleRate, channels: buffer.channels, samples: samples)
        try buffer.samples.withUnsafeBufferPointer { (p) throws(AudioFileError) in
            if let base = p.baseAddress { try out.write(base, frames: buffer.frames) }
        }
        try out.commit()
    }
}

func sndfileMessage(_ file: OpaquePointer?) -> String {
    var text = String(cString: sf_strerror(file)).trimmingCharacters(in: .whitespacesAndNewlines)
    if text.hasSuffix(".") { text.removeLast() }
    return text
}
