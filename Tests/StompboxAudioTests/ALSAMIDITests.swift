import Foundation
import StompboxAudio
import StompboxTestSupport
import Testing

/// Stompbox's ALSA sequencer client, where the machine has a sequencer; where it has none, the
/// client says why in one sentence and the program goes on without it.
@Suite("MIDI on the ALSA sequencer")
struct ALSAMIDITests {
    @Test("Without a sequencer the input names the problem and stops at once",
          .enabled(if: ALSAMIDISender.unavailableReason != nil, "this machine has a sequencer"))
    func withoutASequencer() throws {
        let input = ALSAMIDIInput()
        #expect(input.address == nil)
        #expect(input.problem?.contains("/dev/snd/seq") == true, "\(input.problem ?? "-")")
        let started = Date()
        input.stop()
        #expect(Date().timeIntervalSince(started) < 0.5)
    }

    @Test("A sender's program change, controller and note arrive as MIDI bytes at Stompbox:midi_in",
          .enabled(if: ALSAMIDISender.unavailableReason == nil, Comment(rawValue: ALSAMIDISender.unavailableReason ?? "")))
    func messagesArrive() throws {
        let input = ALSAMIDIInput()
        defer { input.stop() }
        let address = try #require(input.address, "\(input.problem ?? "")")
        let sender = try ALSAMIDISender(to: address)
        try sender.programChange(2)
        try sender.controller(80, 127, channel: 3)
        try sender.note(36, velocity: 90, channel: 9)
        var received: [[UInt8]] = []
        let deadline = Date().addingTimeInterval(3)
        while received.count < 3 && Date() < deadline {
            input.inbox.drain { received.append($0) }
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(received == [[0xC0, 2], [0xB3, 80, 127], [0x99, 36, 90]], "\(received)")
        // Stopping returns within the reader's 0.2 s wait.
        let started = Date()
        input.stop()
        #expect(Date().timeIntervalSince(started) < 0.5)
    }
}
