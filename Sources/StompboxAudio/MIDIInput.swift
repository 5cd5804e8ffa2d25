import CALSAMIDI
import Foundation
import Synchronization

/// MIDI messages from a thread that receives them (JACK's process thread, the ALSA reader) to
/// the thread that acts on them (the window's, `run`'s): a single-producer, single-consumer ring
/// of messages of up to three bytes. Pushing never allocates, locks or waits; a full ring drops
/// the message (256 waiting means the consumer has stopped looking).
public final class MIDIInbox: @unchecked Sendable {
    static let capacity = 256
    /// Each slot: the length in the top byte, then up to three message bytes.
    private let slots = UnsafeMutablePointer<UInt32>.allocate(capacity: MIDIInbox.capacity)
    private let written = Atomic<Int>(0)
    private let read = Atomic<Int>(0)

    public init() { slots.initialize(repeating: 0, count: MIDIInbox.capacity) }
    deinit { slots.deallocate() }

    /// Producer: one message (a status byte and up to two data bytes; longer ones are dropped).
    @inline(__always)
    public func push(_ bytes: UnsafePointer<UInt8>, count: Int) {
        guard count >= 1 && count <= 3 else { return }
        let w = written.load(ordering: .relaxed)
        guard w - read.load(ordering: .acquiring) < MIDIInbox.capacity else { return }
        var packed = UInt32(count) << 24
        for i in 0..<count { packed |= UInt32(bytes[i]) << (16 - 8 * i) }
        slots[w % MIDIInbox.capacity] = packed
        written.store(w + 1, ordering: .releasing)
    }

    /// Consumer: every message waiting, oldest first.
    public func drain(_ body: ([UInt8]) -> Void) {
        var r = read.load(ordering: .relaxed)
        let w = written.load(ordering: .acquiring)
        while r < w {
            let packed = slots[r % MIDIInbox.capacity]
            let count = Int(packed >> 24)
            body((0..<count).map { UInt8(truncatingIfNeeded: packed >> (16 - 8 * $0)) })
            r += 1
        }
        read.store(r, ordering: .releasing)
    }
}

/// Stompbox's client on the ALSA sequencer: "Stompbox" with an input port `midi_in`, connected
/// from every hardware MIDI output and from each one plugged in later. Its own thread waits
/// for events (at most 0.2 s at a time, so `stop` returns within that) and puts them in `inbox`.
public final class ALSAMIDIInput: @unchecked Sendable {
    public static let clientName = "Stompbox"
    public let inbox = MIDIInbox()
    private let stopping = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    private let info = Mutex<(address: String?, connections: Int, problem: String?)>((nil, 0, nil))
    private var thread: Thread?

    /// Opens the client and starts reading; when there is no sequencer, `problem` says why.
    public init() {
        var error = [CChar](repeating: 0, count: 256)
        guard let midi = stompbox_alsa_midi_open(ALSAMIDIInput.clientName, &error, error.count) else {
            let text = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            info.withLock { $0.problem = text }
            stopped.signal()
            return
        }
        let handle = UnsafeSendable(midi)
        info.withLock {
            $0.address = "\(stompbox_alsa_midi_client(midi)):\(stompbox_alsa_midi_port(midi))"
            $0.connections = Int(stompbox_alsa_midi_connections(midi))
        }
        let t = Thread { [self] in
            let midi = handle.value
            var buffer = [UInt8](repeating: 0, count: 4 * 64)
            while !stopping.load(ordering: .acquiring) {
                let n = Int(stompbox_alsa_midi_read(midi, 200, &buffer, 64))
                if n < 0 {
                    info.withLock { $0.problem = "the ALSA sequencer stopped delivering MIDI" }
                    break
                }
                buffer.withUnsafeBufferPointer { b in
                    for i in 0..<n { inbox.push(b.baseAddress! + 4 * i + 1, count: Int(b[4 * i])) }
                }
                let connections = Int(stompbox_alsa_midi_connections(midi))
                info.withLock { $0.connections = connections }
            }
            stompbox_alsa_midi_close(midi)
            stopped.signal()
        }
        t.name = "stompbox-alsa-midi"
        thread = t
        t.start()
    }

    /// "client:port" of `midi_in` (as `aconnect -l` shows it), nil without a sequencer.
    public var address: String? { info.withLock { $0.address } }
    /// Hardware ports connected to `midi_in` now.
    public var connections: Int { info.withLock { $0.connections } }
    /// Why there is no ALSA MIDI input, or nil.
    public var problem: String? { info.withLock { $0.problem } }

    /// Ends the reader (within 0.2 s) and closes the client.
    public func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _ = stopped.wait(timeout: .now() + 1)
    }

    deinit { stop() }
}

/// Every MIDI input the engine has: JACK's `stompbox:midi_in` (on the JACK backend) and the ALSA
/// sequencer's `Stompbox:midi_in`. The window and `run` drain them a few dozen times a second.
public final class MIDIInputs {
    public let engine: LiveEngine
    public let alsa: ALSAMIDIInput?

    /// `alsa: false` (or `STOMPBOX_NO_ALSA_MIDI=1`) leaves the ALSA sequencer alone.
    public init(engine: LiveEngine, alsa: Bool = ProcessInfo.processInfo.environment["STOMPBOX_NO_ALSA_MIDI"] == nil) {
        self.engine = engine
        self.alsa = alsa ? ALSAMIDIInput() : nil
    }

    public func drain(_ body: ([UInt8]) -> Void) {
        engine.jackMIDI.drain(body)
        alsa?.inbox.drain(body)
    }

    public func stop() { alsa?.stop() }
}

private struct UnsafeSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
