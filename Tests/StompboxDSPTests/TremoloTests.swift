import Foundation
import Testing
@testable import StompboxDSP
import StompboxTestSupport

@Suite struct TremoloTests {
    /// The gain envelope: a constant 0.5 through the tremolo, divided by 0.5.
    func envelope(shape: TremoloShape, rate: Float, depth: Float, cycles: Double = 6) -> [Float] {
        let p = store([.tremoloShape: Float(shape.rawValue), .tremoloRate: rate, .tremoloDepth: depth])
        let t = prepared(Tremolo(parameters: p))
        return Render.through(t, constant(0.5, seconds: cycles / Double(rate))).map { $0 / 0.5 }
    }

    static let cases: [(TremoloShape, Float, Float)] = TremoloShape.allCases.flatMap { shape in
        [(Float(0.5), Float(1)), (5, 0.4), (5, 1), (15, 0.7)].map { (shape, $0.0, $0.1) }
    }

    @Test(arguments: cases)
    func envelopeHasThePeriodAndDepthAsked(_ shape: TremoloShape, _ rate: Float, _ depth: Float) {
        let g = envelope(shape: shape, rate: rate, depth: depth)
        let crossings = downwardCrossings(g, level: 1 - depth / 2)
        #expect(crossings.count >= 5)
        let period = meanPeriod(crossings) / testRate
        let expected = 1 / Double(rate)
        #expect(abs(period / expected - 1) <= 0.01, "\(shape.name) \(rate) Hz: period \(period) s, expected \(expected)")
        #expect(abs(Double(g.min()!) - Double(1 - depth)) <= 0.01, "\(shape.name): minimum \(g.min()!)")
        #expect(abs(Double(g.max()!) - 1) <= 0.01)
    }

    @Test func shapesFollowTheirCurves() {
        let rate: Float = 2, n = Int(testRate / 2)
        let sine = envelope(shape: .sine, rate: rate, depth: 1, cycles: 1)
        let triangle = envelope(shape: .triangle, rate: rate, depth: 1, cycles: 1)
        let square = envelope(shape: .square, rate: rate, depth: 1, cycles: 1)
        for i in stride(from: 0, to: n, by: 97) {
            let phase = Double(i) / Double(n)
            #expect(abs(Double(sine[i]) - (0.5 + 0.5 * cos(2 * Double.pi * phase))) < 0.002)
            #expect(abs(Double(triangle[i]) - abs(1 - 2 * phase)) < 0.002)
        }
        // The square sits at its two levels for half a cycle each, apart from its rounded edges.
        let low = square.filter { $0 < 0.5 }.count
        #expect(abs(Double(low) / Double(n) - 0.5) < 0.01)
        let plateau = square.filter { $0 < 0.001 || $0 > 0.999 }.count
        #expect(Double(plateau) / Double(n) > 0.98)
    }

    @Test(arguments: [Float(0.5), 5, 15])
    func squareEdgesAreSoftenedNotClicks(_ rate: Float) {
        let g = envelope(shape: .square, rate: rate, depth: 1, cycles: 3)
        // A full swing takes at least ~1.5 ms (smoothstep over 2 ms: steepest slope 1.5/96 per sample).
        #expect(Measure.largestStep(g) < 0.02, "step \(Measure.largestStep(g))")
    }

    @Test func rateChangesKeepThePhaseContinuous() {
        let p = store([.tremoloShape: 0, .tremoloRate: 2, .tremoloDepth: 1])
        let t = prepared(Tremolo(parameters: p))
        var g = Render.through(t, constant(0.5, seconds: 0.3))
        p.set(.tremoloRate, 15)
        g += Render.through(t, constant(0.5, seconds: 0.3))
        p.set(.tremoloShape, 2)
        g += Render.through(t, constant(0.5, seconds: 0.3))
        // 15 Hz sine at full depth moves at most π·15/48000·0.5 ≈ 0.0005 per sample (×0.5 level).
        #expect(Measure.largestStep(g) < 0.02)
    }

    @Test func depthZeroIsTransparent() {
        let t = prepared(Tremolo(parameters: store([.tremoloDepth: 0])))
        let x = Signal.guitarRiff(seconds: 0.5)
        #expect(Render.through(t, x) == x)
    }
}
