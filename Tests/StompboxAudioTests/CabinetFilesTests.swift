import Foundation
import Testing
import StompboxAudio
import StompboxDSP
import StompboxTestSupport

/// The bundled cabinets on disk, impulse responses read from files and converted to a session's rate.
@Suite struct CabinetFilesTests {
    @Test func theCatalogueListsTheBundledCabinetsInOrder() throws {
        let catalogue = try CabinetCatalogue.load(folder: TestCabinets.folder)
        #expect(catalogue.entries.map(\.id) == Cabinet.bundled)
        #expect(catalogue.entries.map(\.name) == Cabinet.names, "the window's menu shows the catalogue's names")
        for entry in catalogue.entries {
            let ir = try TestCabinets.files.impulseResponse(cabinet: entry.id, sampleRate: 48_000)
            #expect(ir.channels.count == 1 && ir.frames >= 2_048 && ir.frames <= 48_000, "\(entry.id): \(ir.frames) frames")
            #expect(!entry.name.isEmpty && !entry.description.isEmpty)
        }
        // How they were made is stated beside them.
        let readme = try String(contentsOf: TestCabinets.folder.appendingPathComponent("README.md"), encoding: .utf8)
        for entry in catalogue.entries { #expect(readme.contains(entry.name) || readme.contains(entry.id), "\(entry.id) is not described") }
    }

    /// |H(f)| in dB of taps at a rate.
    func response(_ taps: [Float], at hz: Double, rate: Double) -> Double {
        var re = 0.0, im = 0.0
        for (n, h) in taps.enumerated() {
            let w = 2 * Double.pi * hz * Double(n) / rate
            re += Double(h) * cos(w)
            im -= Double(h) * sin(w)
        }
        return 10 * log10(re * re + im * im)
    }

    /// At 44.1 kHz the cabinet applies the response converted to that rate, from sample 0, and
    /// sounds the same: its response stays within 0.2 dB of the original's up to 5 kHz.
    @Test func atAnotherRateTheResponseIsConvertedAndSoundsTheSame() throws {
        TestCabinets.install()
        for (index, id) in Cabinet.bundled.enumerated() {
            let original = try TestCabinets.files.impulseResponse(cabinet: id, sampleRate: 48_000).channels[0]
            let converted = try TestCabinets.files.impulseResponse(cabinet: id, sampleRate: 44_100).channels[0]
            for hz in [100.0, 600, 1_000, 3_000, 5_000] {
                let a = response(original, at: hz, rate: 48_000), b = response(converted, at: hz, rate: 44_100)
                #expect(abs(a - b) < 0.2, "\(id) at \(hz) Hz: \(a) dB at 48 kHz, \(b) dB at 44.1 kHz")
            }
            let chain = Chain(board: [.cab])
            chain.parameters.set(.cabEnabled, 1)
            chain.parameters.set(.cabImpulse, Float(index))
            chain.prepare(sampleRate: 44_100, maximumBlockSize: 256)
            var x = [Float](repeating: 0, count: converted.count + 100)
            x[0] = 1
            let y = Render.through(chain, x)
            let worst = (0..<converted.count).map { abs(y[$0] - converted[$0]) }.max()!
            #expect(worst < 1e-6, "\(id) at 44.1 kHz: \(worst) from the converted response")
        }
    }

    @Test func aStereoFileKeepsBothChannels() throws {
        let folder = TemporaryFolder()
        let left = Signal.noise(length: 1_000, amplitude: 0.3, seed: 1), right = Signal.noise(length: 1_000, amplitude: 0.3, seed: 2)
        let interleaved = zip(left, right).flatMap { [$0, $1] }
        try AudioFile.write(AudioBuffer(samples: interleaved, sampleRate: 48_000, channels: 2), to: folder.file("stereo.wav"))
        let ir = try ImpulseResponseFile.read(folder.file("stereo.wav"), sampleRate: 48_000)
        #expect(ir.channels.count == 2)
        // 24-bit PCM on disk: equal to a few parts in ten million.
        #expect(zip(ir.channels[0], left).allSatisfy { abs($0 - $1) < 1e-6 } && zip(ir.channels[1], right).allSatisfy { abs($0 - $1) < 1e-6 })
    }

    @Test func badFilesGiveOneClearMessage() throws {
        let folder = TemporaryFolder()
        try Data("not json".utf8).write(to: URL(fileURLWithPath: folder.file("cabinets.json")))
        #expect(throws: CabinetError.self) { try CabinetCatalogue.load(folder: URL(fileURLWithPath: folder.path)) }
        do { _ = try CabinetCatalogue.load(folder: URL(fileURLWithPath: folder.path)) } catch {
            #expect(error.description.contains("cabinets.json") && error.description.contains("damaged"), "\(error)")
        }
        try Data("RIFF nonsense".utf8).write(to: URL(fileURLWithPath: folder.file("ir.wav")))
        do { _ = try ImpulseResponseFile.read(folder.file("ir.wav"), sampleRate: 48_000); Issue.record("read a file that is not audio") } catch {
            #expect(error.description.contains("ir.wav") && error.description.contains("cannot be used"), "\(error)")
        }
        let files = CabinetFiles(folder: TestCabinets.folder)
        #expect(throws: CabinetError.unknownCabinet("nope", known: Cabinet.bundled)) { try files.impulseResponse(cabinet: "nope", sampleRate: 48_000) }
    }
}
