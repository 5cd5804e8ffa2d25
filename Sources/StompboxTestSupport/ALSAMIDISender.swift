import CALSAMIDI
import Foundation

/// A second ALSA sequencer client for tests: an output port connected to `client:port`,
/// sending program changes, controllers and notes as a hardware controller would.
public final class ALSAMIDISender {
    private let handle: OpaquePointer

    /// Why the ALSA sequencer cannot be tested here, or nil.
    public static var unavailableReason: String? {
        FileManager.default.fileExists(atPath: "/dev/snd/seq") ? nil
            : "no /dev/snd/seq here (the snd-seq kernel module is not loaded, or the container has no /dev/snd): the ALSA sequencer client cannot be tested"
    }

    public init(to address: String) throws {
        let parts = address.split(separator: ":").compactMap { Int32($0) }
        guard parts.count == 2 else { throw JackRigError("not an ALSA address: \(address)") }
        var error = [CChar](repeating: 0, count: 256)
        guard let h = stompbox_alsa_midi_open_sender("stompbox-test-sender", parts[0], parts[1], &error, error.count) else {
            throw JackRigError(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        handle = h
    }

    deinit { stompbox_alsa_midi_close(handle) }

    public func programChange(_ program: Int, channel: Int = 0) throws { try send(0, channel, program, 0) }
    public func controller(_ number: Int, _ value: Int, channel: Int = 0) throws { try send(1, channel, number, value) }
    public func note(_ number: Int, velocity: Int, channel: Int = 0) throws { try send(2, channel, number, velocity) }

    private func send(_ kind: Int32, _ channel: Int, _ number: Int, _ value: Int) throws {
        let r = stompbox_alsa_midi_send(handle, kind, Int32(channel), Int32(number), Int32(value))
        guard r == 0 else { throw JackRigError("the ALSA sequencer refused the event (\(r))") }
    }
}
