import Foundation
import StompboxAudio
import StompboxSession
import StompboxTestSupport
import Testing

@Suite struct SessionAudioTests {
    /// A 44.1 kHz file added to a 48 kHz session is resampled; its length stays within one frame.
    @Test(arguments: [44_100 * 3 + 17, 1, 12_345])
    func a441kHzImportKeepsItsLengthWithinOneFrame(frames: Int) throws {
        let folder = TemporaryFolder("stompbox-session")
        let session = try Session(path: folder.file("s.stompsession"), sampleRate: 48_000, tempoBPM: 120)
        let source = AudioBuffer(samples: Signal.sine(frequency: 440, seconds: Double(frames) / 44_100, sampleRate: 44_100)
                                    .prefix(frames).map { $0 * 0.5 }, sampleRate: 44_100, channels: 1)
        #expect(source.frames == frames)
        let track = try session.addTrack(source, kind: .import, author: "ana")
        let exact = Double(frames) * 48_000 / 44_100
        #expect(abs(Double(track.frames) - exact) <= 1)
        try session.save()
        #expect(try Session.open(session.path).audio(of: track.id).frames == track.frames)
    }

    /// A session made at 44.1 kHz, played at 48 kHz: each track is resampled on load, its length
    /// within one frame, and it still sounds at its pitch.
    @Test func tracksAreResampledOnLoadForAnotherRate() throws {
        let folder = TemporaryFolder("stompbox-session")
        let session = try Session(path: folder.file("s.stompsession"), sampleRate: 44_100, tempoBPM: 120)
        let tone = Signal.sine(frequency: 1000, seconds: 2, sampleRate: 44_100, amplitude: 0.5)
        let track = try session.addTrack(AudioBuffer(samples: tone, sampleRate: 44_100, channels: 1), kind: .import, author: "ana")
        try session.save()
        let at48 = try Session.open(session.path).audio(of: track.id, at: 48_000)
        #expect(at48.sampleRate == 48_000)
        #expect(abs(Double(at48.frames) - Double(track.frames) * 48_000 / 44_100) <= 1)
        let middle = at48.samples[24_000..<72_000]
        #expect(abs(Measure.amplitude(of: 1000, in: middle, sampleRate: 48_000) - 0.5) < 0.01)
    }

    /// The pan law: a mono track is −3 dB on each side in the middle and silent on the far side
    /// when panned hard; a stereo track is unchanged in the middle.
    @Test func mixdownAppliesGainPanAndMute() throws {
        let folder = TemporaryFolder("stompbox-session")
        let session = try Session(path: folder.file("s.stompsession"), sampleRate: 48_000, tempoBPM: 120)
        let ones = AudioBuffer(samples: [Float](repeating: 0.25, count: 100), sampleRate: 48_000, channels: 1)
        try session.addTrack(ones, kind: .import, author: "a")                                   // centre
        try session.addTrack(ones, kind: .import, author: "a", start: 100, gainDB: -6.020599913, pan: -1) // hard left, half
        try session.addTrack(ones, kind: .import, author: "a", start: 200, mute: true)
        let stereo = AudioBuffer(samples: (0..<100).flatMap { _ in [Float(0.5), Float(-0.25)] }, sampleRate: 48_000, channels: 2)
        try session.addTrack(stereo, kind: .import, author: "a", start: 300)
        let result = try session.mixdown(stems: true)
        let mix = result.mix
        #expect(mix.frames == 400)
        let centre = Float(0.25 * 0.5.squareRoot())
        #expect(abs(mix.samples[0] - centre) < 1e-6 && abs(mix.samples[1] - centre) < 1e-6)
        #expect(abs(mix.samples[200] - 0.125) < 1e-6 && mix.samples[201] == 0)
        #expect(mix.samples[400] == 0 && mix.samples[401] == 0)          // muted
        #expect(mix.samples[600] == 0.5 && mix.samples[601] == -0.25)    // stereo, centred: as recorded
        #expect(!result.clips && result.peak == 0.5)
        // Four stems as long as the mix; the unmuted ones sum to it.
        #expect(result.stems.count == 4 && result.stems.allSatisfy { $0.audio.frames == 400 })
        for i in 0..<800 {
            let sum = result.stems.filter { !$0.track.mute }.reduce(Float(0)) { $0 + $1.audio.samples[i] }
            #expect(sum == mix.samples[i])
        }
        #expect(result.stems[2].audio.samples[400] != 0)   // a muted track's stem is the part itself
    }

    /// A mix above full scale is reported with its peak and where it is, not limited.
    @Test func aClippingMixIsReportedNotLimited() throws {
        let folder = TemporaryFolder("stompbox-session")
        let session = try Session(path: folder.file("s.stompsession"), sampleRate: 48_000, tempoBPM: 120)
        var loud = [Float](repeating: 0.1, count: 1000)
        loud[700] = 0.9
        for _ in 0..<2 {
            try session.addTrack(AudioBuffer(samples: loud, sampleRate: 48_000, channels: 1), kind: .import, author: "a", pan: -1)
        }
        let result = try session.mixdown()
        #expect(result.clips && abs(result.peak - 1.8) < 1e-5 && result.peakFrame == 700)
        #expect(abs(Measure.peak(result.mix.samples) - 1.8) < 1e-5)
    }

    /// The mix made a block at a time, however the blocks fall, is the whole mix sample for sample.
    @Test func theMixInBlocksIsTheMixWhole() throws {
        let folder = TemporaryFolder("stompbox-session")
        let session = try twoTrackSession(in: folder)
        try session.addTrack(riff(seconds: 0.3, channels: 2, seed: 9), kind: .import, author: "ben", start: 7_001, gainDB: 2, pan: -0.3)
        let opened = try Session.open(try { try session.save(); return session.path }())
        let whole = try opened.mixdown().mix.samples
        let mixer = try SessionMix(opened)
        var pieces = [Float](repeating: 9, count: whole.count)
        var at = 0, step = 1
        pieces.withUnsafeMutableBufferPointer { out in
            while at < mixer.frames {
                let n = min(step, mixer.frames - at)
                mixer.render(into: out.baseAddress! + 2 * at, from: at, count: n)
                at += n
                step = step * 3 % 9_973 + 1
            }
        }
        #expect(pieces == whole)
    }
}
