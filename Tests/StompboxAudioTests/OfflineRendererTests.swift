import Foundation
import StompboxDSP
import StompboxTestSupport
import Testing
@testable import StompboxAudio

@Suite struct OfflineRendererTests {
    /// Writes `channels` (one array each, equal lengths) as a file.
    @discardableResult
    static func writeInput(_ path: String, _ channels: [[Float]], sampleRate: Int = 48_000) throws -> AudioBuffer {
        let frames = channels[0].count
        var samples = [Float](repeating: 0, count: frames * channels.count)
        for (c, channel) in channels.enumerated() {
            for i in 0..<frames { samples[i * channels.count + c] = channel[i] }
        }
        let buffer = AudioBuffer(samples: samples, sampleRate: sampleRate, channels: channels.count)
        try AudioFile.write(buffer, to: path)
        return try AudioFile.read(path)
    }

    static func render(_ plan: RenderPlan, _ input: String, _ output: String) throws -> AudioBuffer {
        try OfflineRenderer(plan: plan).render(input: input, output: output)
        return try AudioFile.read(output)
    }

    // MARK: Channels, rate, length

    @Test func stereoIsMixedToMonoAndWrittenToBothChannels() throws {
        let folder = TemporaryFolder()
        let guitar = Signal.guitarRiff(seconds: 0.5)
        let input = try Self.writeInput(folder.file("in.wav"), [guitar.map { 0.8 * $0 }, guitar.map { 0.4 * $0 }])
        // At the defaults every pedal is off and both gains are 0 dB: the chain passes the mix.
        let out = try Self.render(RenderPlan(), folder.file("in.wav"), folder.file("out.wav"))
        #expect(out.channels == 2 && out.sampleRate == 48_000 && out.frames == input.frames)
        let left = out.channel(0), right = out.channel(1)
        #expect(left == right)
        let mix = zip(input.channel(0), input.channel(1)).map { ($0 + $1) / 2 }
        let worst = zip(mix, left).map { abs($0 - $1) }.max() ?? 1
        #expect(worst <= 2 * pcm24Step, "largest deviation from the mean of the channels: \(worst)")
        #expect(Measure.peak(left) > 0.1, "the signal went through")
    }

    @Test func oppositeChannelsCancelInTheMix() throws {
        let folder = TemporaryFolder()
        let tone = Signal.sine(frequency: 440, seconds: 0.1)
        try Self.writeInput(folder.file("in.flac"), [tone, tone.map { -$0 }])
        let out = try Self.render(RenderPlan(), folder.file("in.flac"), folder.file("out.flac"))
        #expect(Measure.peak(out.samples) <= pcm24Step)
    }

    @Test(arguments: [(44_100, 1), (32_000, 3), (96_000, 2)])
    func keepsRateAndChannelsAndAddsTheTail(rate: Int, channels: Int) throws {
        let folder = TemporaryFolder()
        let frames = 1_000
        try Self.writeInput(folder.file("in.aiff"), (0..<channels).map { _ in Signal.noise(length: frames) }, sampleRate: rate)
        let plan = RenderPlan(tailSeconds: 0.25)
        let out = try Self.render(plan, folder.file("in.aiff"), folder.file("out.wav"))
        #expect(out.sampleRate == rate && out.channels == channels)
        #expect(out.frames == frames + rate / 4)
        // Nothing is on, so the tail is silence.
        #expect(Measure.peak(out.samples[(frames * channels)...]) == 0)
    }

    @Test func withoutATailTheOutputIsAsLongAsTheInput() throws {
        let folder = TemporaryFolder()
        try Self.writeInput(folder.file("in.wav"), [Signal.noise(length: 777)])
        var plan = RenderPlan()
        plan[.reverbEnabled] = 1
        plan[.delayEnabled] = 1
        let out = try Self.render(plan, folder.file("in.wav"), folder.file("out.wav"))
        #expect(out.frames == 777)
    }

    // MARK: Actions at times

    /// A constant level makes the start of a gain ramp visible at the exact sample.
    @Test func aParameterActionStartsAtItsExactSample() throws {
        let folder = TemporaryFolder()
        try Self.writeInput(folder.file("in.wav"), [[Float](repeating: 0.25, count: 4_000)])
        // 1000 and 2001 are not multiples of the 256-frame block: only a cut block hits them.
        let plan = RenderPlan(actions: [
            RenderAction(time: 1_000.0 / 48_000, .set(ParameterAssignment(.outputGain, -6))),
            RenderAction(time: 2_001.0 / 48_000, .set(ParameterAssignment(.outputGain, 0))),
        ])
        let y = try Self.render(plan, folder.file("in.wav"), folder.file("out.wav")).samples
        let ramp = Int(48_000 * 0.02)
        let low = 0.25 * decibelsToGain(-6)
        for i in 0..<1_000 { #expect(abs(y[i] - 0.25) <= pcm24Step, "sample \(i) before the action") }
        #expect(y[1_000] < 0.25 - 5e-5, "the ramp starts at sample 1000")
        #expect(abs(y[1_000 + ramp] - low) <= 2 * pcm24Step, "and reaches -6 dB after the 20 ms ramp")
        #expect(abs(y[2_000] - low) <= 2 * pcm24Step, "unchanged until the next action")
        #expect(y[2_001] > low + 5e-5, "the second action starts at sample 2001")
        #expect(abs(y[3_999] - 0.25) <= 2 * pcm24Step)
    }

    @Test func actionsAtTheSameTimeApplyInTheOrderGiven() throws {
        let folder = TemporaryFolder()
        try Self.writeInput(folder.file("in.wav"), [[Float](repeating: 0.25, count: 3_000)])
        let plan = RenderPlan(actions: [
            RenderAction(time: 0.02, .set(ParameterAssignment(.outputGain, -6))),
            RenderAction(time: 0.01, .set(ParameterAssignment(.outputGain, 3))),
            RenderAction(time: 0.02, .set(ParameterAssignment(.outputGain, -12))),
        ])
        let y = try Self.render(plan, folder.file("in.wav"), folder.file("out.wav")).samples
        #expect(abs(y[2_999] - 0.25 * decibelsToGain(-12)) <= 2 * pcm24Step)
    }

    @Test func startingValuesApplyFromTheFirstSampleWithoutARamp() throws {
        let folder = TemporaryFolder()
        try Self.writeInput(folder.file("in.wav"), [[Float](repeating: 0.25, count: 500)])
        var plan = RenderPlan()
        plan[.outputGain] = -6
        let y = try Self.render(plan, folder.file("in.wav"), folder.file("out.wav")).samples
        #expect(abs(y[0] - 0.25 * decibelsToGain(-6)) <= 2 * pcm24Step)
    }

    @Test func theScheduleCutsBlocksAtEveryActionSample() {
        var schedule = RenderSchedule(totalFrames: 1_200, blockSize: 256, actionSamples: [0, 100, 300, 300, 1_000])
        var blocks: [RenderSchedule.Block] = []
        while let b = schedule.next() { blocks.append(b) }
        #expect(blocks.map(\.frames) == [0..<100, 100..<300, 300..<556, 556..<812, 812..<1_000, 1_000..<1_200])
        #expect(blocks.map(\.actions) == [0..<1, 1..<2, 2..<4, 4..<4, 4..<4, 4..<5])
        // Every frame exactly once, every action exactly once, at the start of the block at its sample.
        #expect(blocks.map(\.frames.count).reduce(0, +) == 1_200)
    }

    /// No block crosses a file chunk's edge, so the chain can work on each chunk in place.
    @Test func theScheduleAlsoCutsAtChunkEdges() {
        var schedule = RenderSchedule(totalFrames: 1_200, blockSize: 256, actionSamples: [100, 500], chunk: 512)
        var blocks: [RenderSchedule.Block] = []
        while let b = schedule.next() { blocks.append(b) }
        #expect(blocks.map(\.frames) == [0..<100, 100..<356, 356..<500, 500..<512, 512..<768, 768..<1_024, 1_024..<1_200])
        #expect(blocks.map(\.actions) == [0..<0, 0..<1, 1..<1, 1..<2, 2..<2, 2..<2, 2..<2])
    }

    /// A render longer than a file chunk, with a stereo file and an action in the middle of a
    /// chunk: the same samples as the chain run over the whole input in one go.
    @Test func aLongRenderInChunksEqualsTheChainInOneGo() throws {
        let folder = TemporaryFolder()
        let frames = 2 * OfflineRenderer.ioChunk + 3_000
        let riff = Array(Signal.guitarRiff(seconds: Double(frames) / 48_000).prefix(frames))
        try Self.writeInput(folder.file("in.wav"), [riff, riff])
        var plan = RenderPlan()
        plan[.delayEnabled] = 1
        plan[.overdriveEnabled] = 1
        let at = Double(OfflineRenderer.ioChunk + 5_000) / 48_000
        plan.actions = [RenderAction(time: at, .set(ParameterAssignment(.delayMix, 0.8)))]
        let y = try Self.render(plan, folder.file("in.wav"), folder.file("out.wav"))
        #expect(y.channels == 2 && y.samples.count == 2 * frames)
        // The input as the file holds it (24-bit), through a chain of the plan's board.
        let input = try AudioFile.read(folder.file("in.wav"))
        let mono: [Float] = (0..<frames).map { i -> Float in
            let l: Float = input.samples[2 * i], r: Float = input.samples[2 * i + 1]
            return (l + r) * 0.5
        }
        let chain = Chain(board: plan.boardInUse)
        chain.parameters.restore(plan.parameters)
        let block = OfflineRenderer.blockSize
        chain.prepare(sampleRate: 48_000, maximumBlockSize: block)
        let cut = Int((at * 48_000).rounded())
        var expected = mono
        expected.withUnsafeMutableBufferPointer { all in
            // Blocks of the render's size from the start and again from the action on.
            for range in [0..<cut, cut..<frames] {
                if range.lowerBound == cut { chain.parameters.set(.delayMix, 0.8) }
                for start in stride(from: range.lowerBound, to: range.upperBound, by: block) {
                    chain.process(UnsafeMutableBufferPointer(rebasing: all[start..<min(start + block, range.upperBound)]))
                }
            }
        }
        let left = (0..<frames).map { y.samples[2 * $0] }
        // The output file is 24-bit (libsndfile scales by 2²³ − 1 writing and 2²³ reading), and
        // the render also cuts a block where a file chunk ends, which the chain in one go does
        // not: the pedals' recursions, computed sixteen samples at a time, round differently
        // around such a cut (3.5 steps seen). Within 8 steps of 24-bit (−122 dB); a sample lost or
        // repeated at a chunk's edge is an error the size of the signal.
        let error = zip(left, expected).map { abs($0 - $1) }.max() ?? 1
        #expect(error <= 8 * pcm24Step, "largest difference \(error)")
    }

    @Test func theScheduleOfAnEmptyRenderIsEmpty() {
        var schedule = RenderSchedule(totalFrames: 0, blockSize: 256, actionSamples: [])
        #expect(schedule.next() == nil)
    }

    @Test func everyPedalOnWithLooperActionsStaysFiniteAndBounded() throws {
        let folder = TemporaryFolder()
        let riff = Signal.guitarRiff(seconds: 1.5)
        try Self.writeInput(folder.file("in.wav"), [riff, riff])
        var plan = RenderPlan(tailSeconds: 0.5)
        for kind in PedalKind.builtIn { plan[kind.enabledParameter] = 1 }
        plan[.overdriveDrive] = 1
        plan[.inputGain] = 12
        plan.actions = [
            RenderAction(time: 0.1, .looper(.tap)), RenderAction(time: 0.6, .looper(.tap)),
            RenderAction(time: 0.9, .looper(.tap)), RenderAction(time: 1.2, .looper(.undo)),
            RenderAction(time: 1.3, .set(ParameterAssignment(.delayTime, 20))),
            RenderAction(time: 1.7, .looper(.hold)),
        ]
        let out = try Self.render(plan, folder.file("in.wav"), folder.file("out.flac"))
        #expect(out.frames == 72_000 + 24_000)
        #expect(Measure.allFinite(out.samples))
        #expect(Measure.peak(out.samples) <= 1)
        #expect(Measure.rms(out.samples) > 0.01)
    }

    /// Pedals the render never switches on are not built: the same output to the bit, and no
    /// Looper (its tapes are 46 MB) unless it is switched on at some point.
    @Test func onlyThePedalsSwitchedOnAreBuilt() throws {
        let folder = TemporaryFolder()
        try Self.writeInput(folder.file("in.wav"), [Signal.guitarRiff(seconds: 0.5)])
        var plan = RenderPlan(tailSeconds: 0.2)
        plan[.delayEnabled] = 1
        plan.actions = [RenderAction(time: 0.3, .set(ParameterAssignment(.reverbEnabled, 1))),
                        RenderAction(time: 0.4, .set(ParameterAssignment(.overdriveEnabled, 0)))]
        #expect(plan.boardInUse == [.delay, .reverb])
        let summary = try OfflineRenderer(plan: plan).render(input: folder.file("in.wav"), output: folder.file("used.wav"))
        #expect(summary.board == [.delay, .reverb])
        // The whole board, every pedal built, renders the same samples.
        let whole = Chain(board: PedalKind.builtIn)
        let all = try OfflineRenderer(plan: plan).render(input: folder.file("in.wav"), output: folder.file("whole.wav"), chain: whole)
        #expect(all.board == PedalKind.builtIn && whole.effects.contains { $0 is Looper })
        #expect(try AudioFile.read(folder.file("used.wav")).samples == AudioFile.read(folder.file("whole.wav")).samples)
    }

    // MARK: Errors leave no partial output

    @Test func aRefusedWriteStopsTheRenderBeforeAnythingIsWritten() throws {
        let folder = TemporaryFolder()
        try Self.writeInput(folder.file("in.wav"), [Signal.noise(length: 100)])
        let plan = RenderPlan(actions: [RenderAction(time: 0, .set(ParameterAssignment(.looperEnabled, 1)))])
        let renderer = OfflineRenderer(plan: plan)
        renderer.permit = { (write: ParameterAssignment) throws(RenderError) in
            if write.parameter == .looperEnabled && write.value >= 0.5 {
                throw .refused(write, reason: "the looper is locked")
            }
        }
        #expect(throws: RenderError.refused(ParameterAssignment(.looperEnabled, 1), reason: "the looper is locked")) {
            try renderer.render(input: folder.file("in.wav"), output: folder.file("out.wav"))
        }
        #expect(folder.contents() == ["in.wav"])
    }

    @Test func aNegativeOrEndlessTailIsRefused() throws {
        let folder = TemporaryFolder()
        try Self.writeInput(folder.file("in.wav"), [Signal.noise(length: 100)])
        for tail in [-1, .infinity, .nan, 1e9] {
            let renderer = OfflineRenderer(plan: RenderPlan(tailSeconds: tail))
            #expect(throws: RenderError.self) {
                try renderer.render(input: folder.file("in.wav"), output: folder.file("out.wav"))
            }
        }
        #expect(folder.contents() == ["in.wav"])
    }

    @Test func anActionAfterTheEndIsRefused() throws {
        let folder = TemporaryFolder()
        try Self.writeInput(folder.file("in.wav"), [Signal.noise(length: 48_000)])
        let late = RenderAction(time: 1.5, .looper(.tap))
        let renderer = OfflineRenderer(plan: RenderPlan(actions: [late], tailSeconds: 0.25))
        #expect(throws: RenderError.actionAfterEnd(late, lengthSeconds: 1.25)) {
            try renderer.render(input: folder.file("in.wav"), output: folder.file("out.wav"))
        }
        #expect(folder.contents() == ["in.wav"])
    }

    @Test func aFailedRenderLeavesAnExistingOutputUntouched() throws {
        let folder = TemporaryFolder()
        folder.write("not audio at all", to: "in.wav")
        try Self.writeInput(folder.file("out.wav"), [Signal.noise(length: 100)])
        let before = try Data(contentsOf: folder.url.appendingPathComponent("out.wav"))
        #expect(throws: RenderError.self) {
            try OfflineRenderer(plan: RenderPlan()).render(input: folder.file("in.wav"), output: folder.file("out.wav"))
        }
        #expect(try Data(contentsOf: folder.url.appendingPathComponent("out.wav")) == before)
        #expect(folder.contents() == ["in.wav", "out.wav"])
    }

    @Test func renderingOntoTheInputItselfWorks() throws {
        let folder = TemporaryFolder()
        let path = folder.file("take.wav")
        try Self.writeInput(path, [[Float](repeating: 0.25, count: 1_000)])
        var plan = RenderPlan(tailSeconds: 0.01)
        plan[.outputGain] = -6
        let out = try Self.render(plan, path, path)
        #expect(out.frames == 1_480)
        #expect(abs(out.samples[500] - 0.25 * decibelsToGain(-6)) <= 2 * pcm24Step)
        #expect(folder.contents() == ["take.wav"])
    }
}
