import CSndfile
import Foundation
import StompboxTestSupport
import Testing
@testable import StompboxAudio

/// One step of 24-bit PCM: the most a sample may move on its way through a file.
let pcm24Step: Float = 1.0 / 8_388_608

@Suite struct AudioFileTests {
    /// A test tone with a different sine on each channel, so swapped or mixed channels show.
    static func tone(channels: Int, frames: Int, sampleRate: Int) -> AudioBuffer {
        var samples = [Float](repeating: 0, count: frames * channels)
        for i in 0..<frames {
            for c in 0..<channels {
                let f = 220.0 * Double(c + 1)
                samples[i * channels + c] = Float(0.5 * sin(2 * .pi * f * Double(i) / Double(sampleRate)))
            }
        }
        return AudioBuffer(samples: samples, sampleRate: sampleRate, channels: channels)
    }

    @Test(arguments: ["wav", "aiff", "flac"], [1, 2])
    func roundTripKeepsRateLengthChannelsAndSamples(ext: String, channels: Int) throws {
        let folder = TemporaryFolder()
        let path = folder.file("tone.\(ext)")
        let original = Self.tone(channels: channels, frames: 12_345, sampleRate: 44_100)
        try AudioFile.write(original, to: path)

        let back = try AudioFile.read(path)
        #expect(back.sampleRate == 44_100)
        #expect(back.channels == channels)
        #expect(back.frames == 12_345)
        let worst = zip(original.samples, back.samples).map { abs($0 - $1) }.max() ?? 1
        #expect(worst <= pcm24Step, "largest error \(worst) is more than one 24-bit step")
        #expect(folder.contents() == ["tone.\(ext)"], "no temporary file left beside it")
    }

    @Test(arguments: [("wav", SF_FORMAT_WAV), ("aiff", SF_FORMAT_AIFF), ("flac", SF_FORMAT_FLAC)])
    func writesTwentyFourBitPCMInTheFormatOfTheExtension(ext: String, major: Int) throws {
        let folder = TemporaryFolder()
        let path = folder.file("x.\(ext.uppercased())")
        try AudioFile.write(Self.tone(channels: 1, frames: 100, sampleRate: 48_000), to: path)
        var info = SF_INFO()
        let file = try #require(sf_open(path, Int32(SFM_READ), &info))
        defer { sf_close(file) }
        #expect(Int(info.format) & Int(SF_FORMAT_TYPEMASK) == major)
        #expect(Int(info.format) & Int(SF_FORMAT_SUBMASK) == Int(SF_FORMAT_PCM_24))
    }

    @Test func keepsUnusualRatesAndManyChannels() throws {
        let folder = TemporaryFolder()
        let path = folder.file("six.wav")
        try AudioFile.write(Self.tone(channels: 6, frames: 500, sampleRate: 96_000), to: path)
        let back = try AudioFile.read(path)
        #expect(back.sampleRate == 96_000 && back.channels == 6 && back.frames == 500)
    }

    @Test func samplesBeyondFullScaleSaturateInsteadOfWrapping() throws {
        let folder = TemporaryFolder()
        let path = folder.file("loud.wav")
        try AudioFile.write(AudioBuffer(samples: [1.5, -1.5, 0.25], sampleRate: 48_000, channels: 1), to: path)
        let back = try AudioFile.read(path).samples
        #expect(back[0] > 0.999 && back[1] < -0.999)
        #expect(abs(back[2] - 0.25) <= pcm24Step)
    }

    @Test func readsFloatFilesWrittenByOthers() throws {
        // A 32-bit float WAV (what a DAW often exports), written with libsndfile directly.
        let folder = TemporaryFolder()
        let path = folder.file("float.wav")
        var info = SF_INFO()
        info.samplerate = 22_050
        info.channels = 2
        info.format = Int32(SF_FORMAT_WAV) | Int32(SF_FORMAT_FLOAT)
        let file = try #require(sf_open(path, Int32(SFM_WRITE), &info))
        let samples: [Float] = [0.1, -0.2, 0.3, -0.4]
        #expect(sf_writef_float(file, samples, 2) == 2)
        sf_close(file)

        let back = try AudioFile.read(path)
        #expect(back.sampleRate == 22_050 && back.channels == 2)
        #expect(back.samples == samples)
        #expect(back.channel(1) == [-0.2, -0.4])
    }

    // MARK: Errors name the file and say what is wrong

    @Test func aMissingFileIsSaidToBeMissing() {
        let folder = TemporaryFolder()
        let path = folder.file("nothing.wav")
        #expect(throws: AudioFileError.missingFile(path: path)) { try AudioFile.read(path) }
        #expect(AudioFileError.missingFile(path: path).description.contains(path))
    }

    @Test func aTextFileIsNotAnAudioFile() throws {
        let folder = TemporaryFolder()
        let path = folder.write("this is not audio\n", to: "notes.wav")
        let error = try #require(throws: AudioFileError.self) { try AudioFile.read(path) }
        guard case .notAudio(let p, let detail) = error else {
            Issue.record("expected notAudio, got \(error)")
            return
        }
        #expect(p == path)
        #expect(!detail.isEmpty, "libsndfile's own reason is kept")
        #expect(error.description.contains(path) && error.description.contains("not an audio file"))
    }

    @Test func aFolderIsNotAnAudioFile() {
        let folder = TemporaryFolder()
        #expect(throws: AudioFileError.isFolder(path: folder.path)) { try AudioFile.read(folder.path) }
    }

    @Test(arguments: ["out.mp3", "out", "out.wav.txt"])
    func anUnknownExtensionIsRefusedBeforeWriting(name: String) {
        let folder = TemporaryFolder()
        let path = folder.file(name)
        #expect(throws: AudioFileError.unknownExtension(path: path)) {
            try AudioFile.write(Self.tone(channels: 1, frames: 10, sampleRate: 48_000), to: path)
        }
        #expect(folder.contents().isEmpty)
    }

    @Test func aMissingFolderIsAnUnwritableDestination() throws {
        let folder = TemporaryFolder()
        let path = folder.file("no/such/folder/out.wav")
        let error = try #require(throws: AudioFileError.self) {
            try AudioFile.write(Self.tone(channels: 1, frames: 10, sampleRate: 48_000), to: path)
        }
        guard case .unwritable(let p, let reason) = error else {
            Issue.record("expected unwritable, got \(error)")
            return
        }
        #expect(p == path && reason.contains("does not exist"))
    }

    @Test func aFolderInTheWayIsAnUnwritableDestination() throws {
        let folder = TemporaryFolder()
        let path = folder.file("taken.wav")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        #expect(throws: AudioFileError.unwritable(path: path, reason: "it is a folder")) {
            try AudioFile.write(Self.tone(channels: 1, frames: 10, sampleRate: 48_000), to: path)
        }
    }

    @Test func flacRefusesMoreThanEightChannelsWithAPlainReason() throws {
        let folder = TemporaryFolder()
        let path = folder.file("nine.flac")
        let error = try #require(throws: AudioFileError.self) {
            try AudioFile.write(Self.tone(channels: 9, frames: 10, sampleRate: 48_000), to: path)
        }
        #expect(error.description.contains("FLAC cannot hold 9 channels"))
        #expect(folder.contents().isEmpty)
    }

    // MARK: Atomic output

    @Test func anAbandonedOutputLeavesTheOldFileAndNoTemporaryFile() throws {
        let folder = TemporaryFolder()
        let path = folder.file("take.wav")
        let old = Self.tone(channels: 1, frames: 100, sampleRate: 48_000)
        try AudioFile.write(old, to: path)
        let oldBytes = try Data(contentsOf: URL(fileURLWithPath: path))

        let writer = try AtomicAudioFileWriter(path: path, sampleRate: 48_000, channels: 2)
        let frames = [Float](repeating: 0.1, count: 2000)
        try frames.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: 1000) }
        #expect(FileManager.default.fileExists(atPath: writer.temporaryPath))
        #expect(writer.temporaryPath.hasPrefix(folder.path + "/"), "beside the output, so rename is atomic")
        writer.discard()

        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == oldBytes)
        #expect(folder.contents() == ["take.wav"])
    }

    @Test func aWriterThatGoesAwayUncommittedRemovesItsTemporaryFile() throws {
        let folder = TemporaryFolder()
        do {
            let writer = try AtomicAudioFileWriter(path: folder.file("x.flac"), sampleRate: 48_000, channels: 1)
            let one: [Float] = [0.5]
            try one.withUnsafeBufferPointer { try writer.write($0.baseAddress!, frames: 1) }
        }
        #expect(folder.contents().isEmpty)
    }

    @Test func commitReplacesAnExistingFileWhole() throws {
        let folder = TemporaryFolder()
        let path = folder.file("take.aiff")
        try AudioFile.write(Self.tone(channels: 1, frames: 100, sampleRate: 48_000), to: path)
        try AudioFile.write(Self.tone(channels: 2, frames: 300, sampleRate: 44_100), to: path)
        let back = try AudioFile.read(path)
        #expect(back.channels == 2 && back.frames == 300 && back.sampleRate == 44_100)
        #expect(folder.contents() == ["take.aiff"])
    }
}
