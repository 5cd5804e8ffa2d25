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

    /// A chain with the cabinet on, playing `cabinet` (an index of `cab.ir`).
    func playing(_ cabinet: Int) -> Chain {
        TestCabinets.install()
        let chain = Chain(board: [.cab])
        chain.parameters.set(.cabEnabled, 1)
        chain.parameters.set(.cabImpulse, Float(cabinet))
        chain.prepare(sampleRate: 48_000, maximumBlockSize: 256)
        return chain
    }

    func writeIR(_ taps: [Float], _ name: String, in folder: TemporaryFolder, rate: Int = 48_000) throws -> String {
        let path = folder.file(name)
        try AudioFile.write(AudioBuffer(samples: taps, sampleRate: rate, channels: 1), to: path)
        return path
    }

    /// A stereo file of two decaying noises (3 000 frames, each side its seed and decay in
    /// samples), and the response read back from it at 48 kHz.
    func writeStereoIR(seeds: (UInt64, UInt64), decays: (Double, Double), in folder: TemporaryFolder) throws -> (String, ImpulseResponse) {
        func side(_ seed: UInt64, _ decay: Double) -> [Float] {
            Signal.noise(length: 3_000, amplitude: 0.2, seed: seed).enumerated().map { i, v in v * Float(exp(-Double(i) / decay)) }
        }
        let left = side(seeds.0, decays.0), right = side(seeds.1, decays.1)
        var interleaved = [Float](repeating: 0, count: 2 * left.count)
        for i in left.indices { interleaved[2 * i] = left[i]; interleaved[2 * i + 1] = right[i] }
        let path = folder.file("stereo.wav")
        try AudioFile.write(AudioBuffer(samples: interleaved, sampleRate: 48_000, channels: 2), to: path)
        return (path, try ImpulseResponseFile.read(path, sampleRate: 48_000))
    }

    /// One's own file, loaded while the cabinet plays: it takes over within 20 ms without a
    /// step, and then the output is exactly the input through the file's response; a second
    /// file replaces the first the same way; a file that cannot be used changes nothing.
    @Test func aFileOfOnesOwnSwapsInWithoutAClick() throws {
        let folder = TemporaryFolder()
        let first = Signal.noise(length: 6_000, amplitude: 0.2, seed: 21).enumerated().map { i, v in v * Float(exp(-Double(i) / 800)) }
        let second = Signal.noise(length: 30_000, amplitude: 0.05, seed: 22).enumerated().map { i, v in v * Float(exp(-Double(i) / 6_000)) }
        let a = try writeIR(first, "first.wav", in: folder), b = try writeIR(second, "second.flac", in: folder)
        let x = zip(Signal.sine(frequency: 110, seconds: 2, amplitude: 0.3), Signal.sine(frequency: 660, seconds: 2, amplitude: 0.1)).map { $0 + $1 }
        let chain = playing(0)
        let cabinet = try #require(chain.effect(.cab) as? Cabinet)
        var y = Render.through(chain, Array(x[..<24_064]))
        try cabinet.load(file: a)
        #expect(chain.parameters.load(.cabImpulse) == Float(Cabinet.bundled.count) && cabinet.file == a)
        y += Render.through(chain, Array(x[24_064..<48_128]))
        try cabinet.load(file: b)
        y += Render.through(chain, Array(x[48_128...]))
        // Each file's response (as read back: 24-bit WAV, FLAC) applied to the whole input.
        func through(_ path: String) throws -> [Float] {
            let c = Chain(board: [.cab])
            c.parameters.set(.cabEnabled, 1)
            c.prepare(sampleRate: 48_000, maximumBlockSize: 256)
            let cab = try #require(c.effect(.cab) as? Cabinet)
            try cab.load(file: path)
            return Render.through(c, x)
        }
        let withFirst = try through(a), withSecond = try through(b)
        let settled1 = 24_064 + 960 + 256, settled2 = 48_128 + 960 + 256
        let worst1 = (settled1..<48_128).map { abs(y[$0] - withFirst[$0]) }.max()!
        let worst2 = (settled2..<x.count).map { abs(y[$0] - withSecond[$0]) }.max()!
        #expect(worst1 < 1e-5 && worst2 < 1e-5, "after each swap: \(worst1), \(worst2)")
        // No step beyond those of the signals crossed (and what crossing two of them over 20 ms adds).
        let steady = [Measure.largestStep(Array(y[4_800..<24_064])), Measure.largestStep(Array(withFirst[4_800...])),
                      Measure.largestStep(Array(withSecond[4_800...]))].max()!
        for swap in [24_064, 48_128] {
            let step = Measure.largestStep(Array(y[(swap - 1)..<(swap + 1_500)]))
            #expect(step <= 1.2 * steady + 0.002, "step \(step) at the swap at \(swap), steady \(steady)")
        }
        // Not audio: one clear message naming the file, and the second file plays on.
        let bad = folder.file("notes.txt")
        try Data("not audio".utf8).write(to: URL(fileURLWithPath: bad))
        do { try cabinet.load(file: bad); Issue.record("loaded a text file") } catch {
            #expect("\(error)".contains("notes.txt"), "\(error)")
        }
        #expect(cabinet.file == b)
    }

    /// A stereo impulse response file: on a stereo board an impulse comes out as its left channel
    /// on the left and its right channel on the right, from sample 0 (no latency), even though
    /// the board is mono up to the cabinet; a mono board (the mono output) hears the left channel.
    @Test func aStereoFileGivesEachSideItsChannel() throws {
        TestCabinets.install()
        let folder = TemporaryFolder()
        let (path, read) = try writeStereoIR(seeds: (31, 32), decays: (500, 700), in: folder)
        var x = [Float](repeating: 0, count: 4_096)
        x[0] = 0.5
        func chainWithTheFile() throws -> Chain {
            let c = Chain(board: [.overdrive, .cab])
            c.parameters.set(.cabEnabled, 1)
            c.prepare(sampleRate: 48_000, maximumBlockSize: 256)
            try #require(c.effect(.cab) as? Cabinet).load(file: path)
            // The file takes over within a crossfade: play silence through it first.
            _ = Render.stereo(c, Signal.silence(4_800))
            return c
        }
        let (l, r) = Render.stereo(try chainWithTheFile(), x)
        for (side, expected) in [(l, read.channels[0]), (r, read.channels[1])] {
            let worst = expected.indices.map { abs(side[$0] - 0.5 * expected[$0]) }.max()!
            #expect(worst < 1e-6, "\(worst)")
            #expect(side[0] == 0.5 * expected[0] && expected[0] != 0, "from sample 0")
        }
        let monoOutput = Render.through(try chainWithTheFile(), x)
        let worst = read.channels[0].indices.map { abs(monoOutput[$0] - 0.5 * read.channels[0][$0]) }.max()!
        #expect(worst < 1e-6, "mono: \(worst)")
    }

    /// The width of a stereo file survives the mono pedals after the cabinet: the EQ runs once
    /// per side (its second instance plays only while the file is stereo), so each side is the
    /// EQ applied to that side's channel. With a mono file the board stays mono through the EQ.
    @Test func aStereoFileStaysStereoThroughTheEqualizerAfterIt() throws {
        TestCabinets.install()
        let folder = TemporaryFolder()
        let (path, read) = try writeStereoIR(seeds: (41, 42), decays: (400, 600), in: folder)
        let eq: [Parameter: Float] = [.eqBand1: 9, .eqBand3: -6, .eqBand5: 4]
        func board(_ kinds: [PedalKind]) -> Chain {
            let c = Chain(board: kinds)
            for kind in kinds { c.parameters.set(kind.enabledParameter, 1) }
            for (p, v) in eq { c.parameters.set(p, v) }
            c.prepare(sampleRate: 48_000, maximumBlockSize: 256)
            return c
        }
        var x = [Float](repeating: 0, count: 6_000)
        x[0] = 0.5
        let withFile = board([.cab, .eq])
        try #require(withFile.effect(.cab) as? Cabinet).load(file: path)
        _ = Render.stereo(withFile, Signal.silence(4_800))
        let (l, r) = Render.stereo(withFile, x)
        for (side, channel, name) in [(l, read.channels[0], "left"), (r, read.channels[1], "right")] {
            let expected = Render.stereo(board([.eq]), channel.map { 0.5 * $0 } + Signal.silence(x.count - channel.count)).0
            let worst = zip(side, expected).map { abs($0 - $1) }.max()!
            #expect(worst < 1e-5, "\(name): \(worst)")
        }
        #expect(Measure.rms(zip(l, r).map { $0 - $1 }) > 0.001, "the sides differ")
        // A bundled (mono) cabinet: both sides equal, as the mono output.
        let bundled = board([.cab, .eq])
        let (ml, mr) = Render.stereo(bundled, x)
        #expect(ml == mr)
        #expect(ml == Render.through(board([.cab, .eq]), x))
    }

    /// A stereo file loaded while the guitar plays: the EQ's second instance starts clean as the
    /// sides part, under the cabinet's 20 ms crossfade, and neither side steps further than the
    /// signals crossed do.
    @Test(arguments: [[PedalKind.cab, .eq], [.cab]])
    func aStereoFileSwapsInWithoutAClick(board: [PedalKind]) throws {
        TestCabinets.install()
        let folder = TemporaryFolder()
        let (path, _) = try writeStereoIR(seeds: (51, 52), decays: (500, 900), in: folder)
        let x = zip(Signal.sine(frequency: 110, seconds: 1.5, amplitude: 0.3), Signal.sine(frequency: 660, seconds: 1.5, amplitude: 0.1)).map { $0 + $1 }
        let c = Chain(board: board)
        for kind in board { c.parameters.set(kind.enabledParameter, 1) }
        c.parameters.set(.eqBand1, 12)
        c.parameters.set(.eqBand2, -9)
        c.prepare(sampleRate: 48_000, maximumBlockSize: 256)
        let swap = 24_064
        var (l, r) = Render.stereo(c, Array(x[..<swap]))
        try #require(c.effect(.cab) as? Cabinet).load(file: path)
        let (l2, r2) = Render.stereo(c, Array(x[swap...]))
        l += l2
        r += r2
        #expect(Measure.rms(zip(l[(swap + 4_800)...], r[(swap + 4_800)...]).map { $0 - $1 }) > 0.01, "the sides part")
        for (side, name) in [(l, "left"), (r, "right")] {
            let before = Measure.largestStep(Array(side[4_800..<swap])), after = Measure.largestStep(Array(side[(swap + 4_800)...]))
            let step = Measure.largestStep(Array(side[(swap - 1)..<(swap + 2_400)]))
            #expect(step <= 1.2 * max(before, after) + 0.002, "\(name): step \(step) at the swap; \(before) before, \(after) after")
        }
    }

    /// A preset keeps the file (its state), and a chain given that state plays the same file;
    /// at another rate the file is converted like the bundled ones.
    @Test func aPresetKeepsTheFile() throws {
        let folder = TemporaryFolder()
        let taps = Signal.noise(length: 2_000, amplitude: 0.2, seed: 23)
        let path = try writeIR(taps, "mine.wav", in: folder, rate: 44_100)
        let chain = playing(0)
        try (chain.effect(.cab) as? Cabinet)?.load(file: path)
        let states = chain.pedalStates
        #expect(states["cab"].flatMap(FileState.file(in:)) == path)
        let other = Chain(board: [.cab])
        other.parameters.set(.cabEnabled, 1)
        other.parameters.set(.cabImpulse, Float(Cabinet.bundled.count))
        other.prepare(sampleRate: 48_000, maximumBlockSize: 256)
        try other.restore(states: states)
        #expect((other.effect(.cab) as? Cabinet)?.file == path)
        var x = [Float](repeating: 0, count: 4_000)
        x[0] = 1
        let converted = try ImpulseResponseFile.read(path, sampleRate: 48_000).channels[0]
        let y = Render.through(other, x)
        let worst = (0..<converted.count).map { abs(y[$0] - converted[$0]) }.max()!
        #expect(worst < 1e-6, "\(worst)")
        // A state naming a file that is gone is an error naming the pedal and the file.
        #expect(throws: PedalStateError.self) { try other.restore(states: ["cab": FileState.json(file: folder.file("gone.wav"))]) }
    }
}
