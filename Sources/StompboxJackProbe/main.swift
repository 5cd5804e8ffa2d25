// StompboxJackProbe: plays seeded noise into a JACK port and records another on the same frame
// clock, then prints where the noise came back: `lag=0 correlation=1.000000 xruns=0`.
// For the tests on PipeWire's JACK, where it runs under `pw-jack` (a probe inside the test
// process would load jackd2's libjack, not PipeWire's).
//
//   StompboxJackProbe --to stompbox:in --from stompbox:out_1 [--seconds 1]
import Foundation
import StompboxTestSupport

var to: String?, from: String?, seconds = 1.0
var arguments = CommandLine.arguments.dropFirst()
while let option = arguments.popFirst() {
    switch option {
    case "--to": to = arguments.popFirst()
    case "--from": from = arguments.popFirst()
    case "--seconds": seconds = arguments.popFirst().flatMap(Double.init) ?? seconds
    default:
        FileHandle.standardError.write(Data("StompboxJackProbe: unknown option \(option)\n".utf8))
        exit(2)
    }
}
guard let to, let from else {
    FileHandle.standardError.write(Data("usage: StompboxJackProbe --to PORT --from PORT [--seconds S]\n".utf8))
    exit(2)
}
do {
    let signal = jackTestNoise(seconds: seconds / 2)
    let probe = try JackProbe(signal: signal, recordFrames: Int(seconds * 48_000))
    try probe.connect(probe.playPort, to)
    try probe.connect(from, probe.recordPort)
    let found = bestLag(signal, in: try probe.run(), maximumLag: 4_096)
    print(String(format: "lag=%d correlation=%.6f xruns=%d", found.lag, found.correlation, probe.xruns))
    probe.close()
} catch {
    FileHandle.standardError.write(Data("StompboxJackProbe: \(error)\n".utf8))
    exit(1)
}
