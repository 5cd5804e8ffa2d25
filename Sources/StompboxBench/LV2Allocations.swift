import Foundation
import MallocInterposerSwift
import StompboxAudio
import StompboxDSP
import StompboxTestSupport

/// `StompboxBench --lv2-allocations URI…`: heap allocations inside `LV2Pedal.process` for each
/// plugin, over 10 s of guitar in blocks of 128 at 48 kHz, with every control moved between
/// blocks (outside the counted call, as a knob would be) and a reset (as after NaN) halfway;
/// the interposer counts every thread, so the work the host thread does stays outside it.
/// A first pass warms up (a debug build sets up Swift type metadata lazily on first use); the
/// second is counted. Prints one line per plugin; exits 1 if any counted pass allocated.
enum LV2Allocations {
    static func run(_ uris: [String]) -> Never {
        let block = 128
        let frames = 480_000 / block * block
        let riff = Signal.guitarRiff(seconds: Double(frames) / 48_000).map { $0 * 0.5 }
        var failed = false
        for uri in uris {
            let pedal: LV2Pedal
            do {
                pedal = try LV2Pedal(uri: uri, sampleRate: 48_000, maximumBlockSize: block)
            } catch {
                print("lv2 \(uri): \(error)")
                failed = true
                continue
            }
            var counts: [Int] = []
            for _ in 0..<2 {
                var work = riff
                MallocInterposerSwift.reset()
                work.withUnsafeMutableBufferPointer { all in
                    for b in 0..<frames / block {
                        let step = b % 50
                        if step == 0 {
                            for (k, c) in pedal.info.controls.enumerated() {
                                try? pedal.setControl(symbol: c.symbol, value: (b / 50 + k) % 2 == 0 ? c.minimum : c.maximum)
                            }
                        }
                        let piece = UnsafeMutableBufferPointer(rebasing: all[b * block..<(b + 1) * block])
                        if b == frames / block / 2 {
                            // Not counted: the host thread's deactivate/activate may allocate (the
                            // interposer counts every thread), and it is not the audio thread.
                            pedal.reset()
                            _ = pedal.waitUntilRunning()
                        }
                        MallocInterposerSwift.hook()
                        pedal.process(piece)
                        MallocInterposerSwift.unhook()
                    }
                }
                counts.append(MallocInterposerSwift.getStatistics().mallocCount)
                _ = pedal.waitUntilRunning()
            }
            print("lv2 \(uri): heap allocations in process: \(counts[1]) in \(frames / block) blocks (warm-up pass: \(counts[0]))")
            if counts[1] != 0 { failed = true }
        }
        exit(failed ? 1 : 0)
    }
}
