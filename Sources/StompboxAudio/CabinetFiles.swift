import CSamplerate
import Foundation
import StompboxDSP
import Synchronization

/// The bundled cabinets as `data/cabinets/cabinets.json` lists them.
public struct CabinetCatalogue: Sendable, Equatable {
    public struct Entry: Sendable, Equatable, Codable {
        public let id: String
        public let name: String
        public let file: String
        public let description: String
    }

    public static let format = "stompbox-cabinets"
    public let folder: URL
    public let entries: [Entry]

    private struct File: Codable {
        let format: String
        let version: Int
        let cabinets: [Entry]
    }

    /// Reads `folder/cabinets.json`. Throws an error naming the file and what is wrong with it.
    public static func load(folder: URL) throws(CabinetError) -> CabinetCatalogue {
        let url = folder.appendingPathComponent("cabinets.json")
        guard let data = try? Data(contentsOf: url) else { throw .missingCatalogue(url.path) }
        let file: File
        do { file = try JSONDecoder().decode(File.self, from: data) } catch {
            throw .damagedCatalogue(url.path, "\(error)")
        }
        guard file.format == format, file.version == 1 else {
            throw .damagedCatalogue(url.path, "not a version 1 \(format) file")
        }
        return CabinetCatalogue(folder: folder, entries: file.cabinets)
    }

    public func entry(_ id: String) -> Entry? { entries.first { $0.id == id } }
    public func url(of entry: Entry) -> URL { folder.appendingPathComponent(entry.file) }
}

public enum CabinetError: Error, Equatable, CustomStringConvertible {
    case missingCatalogue(String)
    case damagedCatalogue(String, String)
    case unknownCabinet(String, known: [String])
    case unreadable(String, String)
    case empty(String)

    public var description: String {
        switch self {
        case .missingCatalogue(let path): "the cabinets' catalogue '\(path)' cannot be read"
        case .damagedCatalogue(let path, let why): "the cabinets' catalogue '\(path)' is damaged: \(why)"
        case .unknownCabinet(let id, let known): "no cabinet '\(id)' (the cabinets are \(known.joined(separator: ", ")))"
        case .unreadable(let path, let why): "the impulse response '\(path)' cannot be used: \(why)"
        case .empty(let path): "the impulse response '\(path)' has no samples"
        }
    }
}

/// Reads impulse responses (WAV, FLAC or AIFF through libsndfile; mono or stereo; any rate) and
/// converts them to a session's rate with libsamplerate's best sinc converter.
public enum ImpulseResponseFile {
    /// The impulse response in `path`, at `sampleRate`.
    public static func read(_ path: String, sampleRate: Double) throws(CabinetError) -> ImpulseResponse {
        let buffer: AudioBuffer
        do { buffer = try AudioFile.read(path) } catch { throw .unreadable(path, "\(error)") }
        guard buffer.frames > 0 else { throw .empty(path) }
        let channels = (0..<buffer.channels).map { c in
            stride(from: c, to: buffer.samples.count, by: buffer.channels).map { buffer.samples[$0] }
        }
        return resampled(ImpulseResponse(channels: channels, sampleRate: Double(buffer.sampleRate)), to: sampleRate)
    }

    /// `ir` at `rate`. A sampled impulse response stands for h(t)/rate, so a converted one is
    /// scaled by old rate / new rate: its frequency response stays the same.
    public static func resampled(_ ir: ImpulseResponse, to rate: Double) -> ImpulseResponse {
        guard rate > 0, ir.sampleRate > 0, rate != ir.sampleRate else { return ir }
        let ratio = rate / ir.sampleRate
        let gain = Float(ir.sampleRate / rate)
        let channels = ir.channels.map { taps in convertRate(taps, ratio: ratio, quality: SRC_SINC_BEST_QUALITY).map { $0 * gain } }
        return ImpulseResponse(channels: channels, sampleRate: rate)
    }
}

/// The bundled cabinets from their folder (`data/cabinets`), read when first asked for and kept
/// per sample rate. Any thread but the audio thread.
public final class CabinetFiles: CabinetSource, @unchecked Sendable {
    private let folder: URL
    private let state = Mutex<(catalogue: CabinetCatalogue?, cache: [String: ImpulseResponse])>((nil, [:]))

    public init(folder: URL) { self.folder = folder }

    public func catalogue() throws(CabinetError) -> CabinetCatalogue {
        if let known = state.withLock({ $0.catalogue }) { return known }
        let loaded = try CabinetCatalogue.load(folder: folder)
        state.withLock { $0.catalogue = loaded }
        return loaded
    }

    public func impulseResponse(file path: String, sampleRate: Double) throws -> ImpulseResponse {
        try ImpulseResponseFile.read(path, sampleRate: sampleRate)
    }

    public func impulseResponse(cabinet id: String, sampleRate: Double) throws -> ImpulseResponse {
        let key = "\(id)@\(sampleRate)"
        if let cached = state.withLock({ $0.cache[key] }) { return cached }
        let catalogue = try catalogue()
        guard let entry = catalogue.entry(id) else { throw CabinetError.unknownCabinet(id, known: catalogue.entries.map(\.id)) }
        let ir = try ImpulseResponseFile.read(catalogue.url(of: entry).path, sampleRate: sampleRate)
        state.withLock { $0.cache[key] = ir }
        return ir
    }
}
