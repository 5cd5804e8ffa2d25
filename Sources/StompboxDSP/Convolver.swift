import CFFTW
import Foundation
import Synchronization

/// An impulse response made ready for `Convolver`: its first `partition` taps for the direct
/// (time-domain) head, and the spectra of all its partitions of `partition` taps each (the
/// first one's too, for blocks that arrive whole).
/// Built off the audio thread (FFTs); immutable afterwards, read by the audio thread.
public final class ConvolutionKernel: @unchecked Sendable {
    /// Taps per partition (the head's length and the FFT block: the transform is twice this).
    public let partition: Int
    /// How many taps the impulse response has (after trimming nothing).
    public let length: Int
    /// The head's taps, reversed (`head[P − 1 − m] = h[m]`), so each output is one dot product.
    let head: UnsafeMutablePointer<Float>
    /// Partitions 0…`tailPartitions` (the head's, then the tail's): `Convolver.lanes(partition)`
    /// real parts then as many imaginary parts each (the `partition + 1` bins, then zeros),
    /// scaled by 1/(2P) so the inverse transform needs no scaling.
    let spectra: UnsafeMutablePointer<Float>
    /// How many partitions follow the head's.
    let tailPartitions: Int
    /// A stereo impulse response's right side, kept alive with this one (its left side); read on
    /// the audio thread without reference counting.
    public private(set) var right: Unmanaged<ConvolutionKernel>?

    /// This kernel as the left side of a stereo impulse response whose right side is `taps`.
    /// Off the audio thread, before the kernel is handed over.
    public convenience init(left: [Float], right: [Float], partition: Int = Convolver.defaultPartition) {
        self.init(taps: left, partition: partition)
        self.right = Unmanaged.passRetained(ConvolutionKernel(taps: right, partition: partition))
    }

    /// `taps`: the impulse response at the session's rate (not empty).
    public init(taps: [Float], partition: Int = Convolver.defaultPartition) {
        precondition(partition >= 16 && partition & (partition - 1) == 0, "a partition is a power of two")
        self.partition = partition
        length = max(1, taps.count)
        head = .allocate(capacity: partition)
        head.initialize(repeating: 0, count: partition)
        for m in 0..<min(partition, taps.count) { head[partition - 1 - m] = taps[m] }
        tailPartitions = max(0, (taps.count - 1) / partition)
        let bins = partition + 1, lanes = Convolver.lanes(partition)
        spectra = .allocate(capacity: (tailPartitions + 1) * 2 * lanes)
        spectra.initialize(repeating: 0, count: (tailPartitions + 1) * 2 * lanes)
        let fft = FFTPair(size: 2 * partition)
        defer { fft.free() }
        let scale = 1 / Float(2 * partition)
        for k in 0...tailPartitions {
            fft.real.update(repeating: 0, count: 2 * partition)
            let start = k * partition
            for m in 0..<max(0, min(partition, taps.count - start)) { fft.real[m] = taps[start + m] * scale }
            fft.forward()
            let re = spectra + k * 2 * lanes, im = re + lanes
            for b in 0..<bins {
                re[b] = fft.complex[2 * b]
                im[b] = fft.complex[2 * b + 1]
            }
        }
    }

    deinit {
        head.deallocate()
        spectra.deallocate()
        right?.release()
    }
}

/// FFTW's plans are made by one thread at a time (its planner is not thread-safe); executing
/// them (the new-array calls) is safe from any thread. The flag: `FFTPair.wisdom` given to FFTW.
private let planner = Mutex(false)

/// A real forward and inverse transform of one size with their own (SIMD-aligned) buffers.
struct FFTPair {
    let size: Int
    let real: UnsafeMutablePointer<Float>
    /// `size/2 + 1` interleaved complex values (as FFTW has them, and as floats).
    let spectrum: UnsafeMutablePointer<fftwf_complex>
    let complex: UnsafeMutablePointer<Float>
    let forwardPlan: fftwf_plan
    let inversePlan: fftwf_plan
    /// Whether the plans came from `wisdom` (else from FFTW's estimate).
    let wise: Bool

    /// FFTW's wisdom for the convolver's transforms (256 points: partitions of 128), found with
    /// `FFTW_MEASURE` on the development host: the fastest of six such plans, a pair of transforms
    /// in 480–540 ns where `FFTW_ESTIMATE`'s plan took 640–700 ns in the same runs. Kept here
    /// rather than measured at start-up, which would take about 130 ms and could pick another plan
    /// from one run to the next (another plan rounds differently). Where it does not apply
    /// (another FFTW, a processor without AVX, another size), the plan is FFTW's estimate.
    static let wisdom = """
        (fftw-3.3.10 fftwf_wisdom #x9e7d4dee #xdb14fed1 #x34bf76a4 #xeb6e8fdf
          (fftwf_codelet_hc2cbdft_2 0 #x10bdd #x10bdd #x0 #xd9d6a831 #xbe5a39ac #x2e0f46d1 #xfe02dec6)
          (fftwf_codelet_n2fv_32_avx 0 #x11bdd #x11bdd #x0 #x12d24524 #x289b57fa #x2bd8cbf3 #xaac91103)
          (fftwf_codelet_r2cfII_8 2 #x11bdd #x11bdd #x0 #x23fb2e26 #x3fe4d3f4 #x78d7c0db #xaba9deb1)
          (fftwf_codelet_n2bv_8_avx 0 #x10bdd #x10bdd #x0 #xbd7ff304 #x3b08865b #x47962b2b #xd1189ffa)
          (fftwf_codelet_hc2cfdftv_8_sse2 0 #x11bdd #x11bdd #x0 #x4bb69ce7 #x4599107c #x14ecc846 #x282ba2c3)
          (fftwf_codelet_r2cb_2 2 #x10bdd #x10bdd #x0 #x87fbdeeb #xf9c66fd5 #x6ca0eba9 #x25f0fb86)
          (fftwf_codelet_t2bv_16_avx 0 #x10bdd #x10bdd #x0 #xdecbd8fc #x48c91b31 #x1e3d2434 #xc732f759)
          (fftwf_codelet_r2cf_8 2 #x11bdd #x11bdd #x0 #xaae37515 #xc366903c #xc804fee2 #x44fc70a7)
          (fftwf_codelet_r2cbIII_2 2 #x10bdd #x10bdd #x0 #xf99977a6 #x2562f752 #xa5b49120 #x0b313dd4)
        )
        """

    init(size: Int) {
        self.size = size
        real = fftwf_alloc_real(size)!
        spectrum = fftwf_alloc_complex(size / 2 + 1)!
        complex = UnsafeMutableRawPointer(spectrum).assumingMemoryBound(to: Float.self)
        let (f, i, wise) = planner.withLock { [real, spectrum] imported in
            if !imported {
                imported = true
                _ = fftwf_import_wisdom_from_string(FFTPair.wisdom)
            }
            func plans(_ flags: UInt32) -> (fftwf_plan?, fftwf_plan?) {
                (fftwf_plan_dft_r2c_1d(Int32(size), real, spectrum, flags), fftwf_plan_dft_c2r_1d(Int32(size), spectrum, real, flags))
            }
            // The wisdom's plans if it has them (no measuring then), else FFTW's estimate.
            let wise = plans(UInt32(FFTW_MEASURE) | UInt32(FFTW_WISDOM_ONLY))
            if let f = wise.0, let i = wise.1 { return (f, i, true) }
            if let f = wise.0 { fftwf_destroy_plan(f) }
            if let i = wise.1 { fftwf_destroy_plan(i) }
            let estimated = plans(UInt32(FFTW_ESTIMATE))
            return (estimated.0!, estimated.1!, false)
        }
        forwardPlan = f
        inversePlan = i
        self.wise = wise
        real.initialize(repeating: 0, count: size)
        complex.initialize(repeating: 0, count: size + 2)
    }

    /// `real` → `complex`. Any thread.
    @inline(__always) func forward() { fftwf_execute_dft_r2c(forwardPlan, real, spectrum) }
    /// `complex` → `real` (unscaled: FFTW's inverse multiplies by `size`). Any thread; it
    /// overwrites `complex`.
    @inline(__always) func inverse() { fftwf_execute_dft_c2r(inversePlan, spectrum, real) }

    func free() {
        planner.withLock { _ in
            fftwf_destroy_plan(forwardPlan)
            fftwf_destroy_plan(inversePlan)
        }
        fftwf_free(real)
        fftwf_free(spectrum)
    }
}

/// Convolution with an impulse response by uniformly partitioned FFT (overlap-save, a
/// frequency-domain delay line of the input's spectra), with no added latency.
/// - A block of P samples that arrives whole (a call's input from a partition boundary on, as
///   with the usual block sizes: 128, 256 … 1024) is convolved with every partition at once in
///   the frequency domain: one forward and one inverse transform, and its output is ready in
///   the same call.
/// - Input that arrives in smaller pieces (blocks of 64, or a call cut short) gets the first
///   partition directly in the time domain, sample by sample, and the rest (whose delay is at
///   least one partition) from the input blocks already complete.
/// Both ways give the same convolution (to rounding: about 1e-7 of the signal), and they may
/// alternate from one block to the next.
///
/// Two kernels can be applied at once: while the impulse response changes, the old and the new
/// one run from the same input history and their outputs are crossfaded (no restart).
///
/// Threads: `init` off the audio thread (allocates, plans FFTs); `process` and `reset` on it,
/// allocation- and lock-free.
public final class Convolver {
    public static let defaultPartition = 128
    public let partition: Int
    /// Whether its transforms are planned from FFTW's wisdom kept with it (`FFTPair.wisdom`):
    /// false where that does not apply, and the slower estimated plans run instead.
    public var transformsFromWisdom: Bool { fft.wise }
    /// The longest tail (in partitions) a kernel may have here.
    public let capacity: Int
    private let fft: FFTPair
    private var bins: Int { partition + 1 }
    /// What a spectrum's real (or imaginary) parts take in `frames`, in a kernel and in
    /// `accumulator`: its bins, then zeros up to a multiple of sixteen, so `sum` works in
    /// sixteen-lane vectors only.
    private var lanes: Int { Convolver.lanes(partition) }

    /// `partition + 1` bins rounded up to a multiple of sixteen.
    static func lanes(_ partition: Int) -> Int { (partition + 1 + 15) & ~15 }
    /// The input's last `partition − 1` samples, then the block being filled (for the head).
    private let history: UnsafeMutablePointer<Float>
    /// How many samples of the current block have arrived.
    private var filled = 0
    /// The spectra of the last `capacity + 1` overlapping input frames (2P samples: the block
    /// before and the block), split real/imaginary (`lanes` each), newest at `newest`.
    private let frames: UnsafeMutablePointer<Float>
    private var newest = 0
    /// The previous complete block, the first half of the next frame.
    private let previous: UnsafeMutablePointer<Float>
    /// Two slots, each the tail's output for the current block of the kernel that owns it (its
    /// address: kernels live as long as the effect that uses this convolver); computed when a
    /// block begins to arrive in pieces, forgotten when it is complete.
    private let tails: UnsafeMutablePointer<Float>
    private var owners: (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) = (nil, nil)
    private var frameCount: Int { capacity + 1 }
    /// A sum's real parts, then its imaginary parts (`lanes` each).
    private let accumulator: UnsafeMutablePointer<Float>

    public init(partition: Int = Convolver.defaultPartition, longestKernel taps: Int) {
        self.partition = partition
        capacity = max(1, (max(1, taps) - 1) / partition)
        fft = FFTPair(size: 2 * partition)
        history = .allocate(capacity: 2 * partition)
        history.initialize(repeating: 0, count: 2 * partition)
        let lanes = Convolver.lanes(partition)
        frames = .allocate(capacity: (capacity + 1) * 2 * lanes)
        frames.initialize(repeating: 0, count: (capacity + 1) * 2 * lanes)
        previous = .allocate(capacity: partition)
        previous.initialize(repeating: 0, count: partition)
        tails = .allocate(capacity: 2 * partition)
        tails.initialize(repeating: 0, count: 2 * partition)
        accumulator = .allocate(capacity: 2 * lanes)
        accumulator.initialize(repeating: 0, count: 2 * lanes)
    }

    deinit {
        fft.free()
        history.deallocate()
        frames.deallocate()
        previous.deallocate()
        tails.deallocate()
        accumulator.deallocate()
    }

    /// Forgets the input. Audio thread safe.
    public func reset() {
        history.update(repeating: 0, count: 2 * partition)
        frames.update(repeating: 0, count: frameCount * 2 * lanes)
        previous.update(repeating: 0, count: partition)
        tails.update(repeating: 0, count: 2 * partition)
        owners = (nil, nil)
        filled = 0
        newest = 0
    }

    /// Takes `other`'s input history and tails (a convolver of the same partition and capacity),
    /// so it goes on as if it had heard the same input: the right side's convolver when the
    /// sides part, having been mono until then. Audio thread safe (copies, no allocation).
    public func copyState(from other: Convolver) {
        guard other.partition == partition && other.capacity == capacity else { reset(); return }
        history.update(from: other.history, count: 2 * partition)
        frames.update(from: other.frames, count: frameCount * 2 * lanes)
        previous.update(from: other.previous, count: partition)
        tails.update(from: other.tails, count: 2 * partition)
        owners = other.owners
        filled = other.filled
        newest = other.newest
    }

    /// The slot holding `kernel`'s tail for the current block; computed now from the input
    /// already complete if no slot has it (a kernel just switched to), taking the slot that
    /// `other` does not hold.
    private func slot(for kernel: ConvolutionKernel, keeping other: ConvolutionKernel, _ keepOther: Bool) -> UnsafeMutablePointer<Float> {
        let me = Unmanaged.passUnretained(kernel).toOpaque()
        if owners.0 == me { return tails }
        if owners.1 == me { return tails + partition }
        let keep: UnsafeMutableRawPointer? = keepOther ? Unmanaged.passUnretained(other).toOpaque() : nil
        let second = keep != nil && owners.0 == keep
        let slot = second ? tails + partition : tails
        tail(of: kernel, into: slot)
        if second { owners.1 = me } else { owners.0 = me }
        return slot
    }

    /// Convolves `input` (n samples) with `kernel` into `out` (which may be `input`). Audio thread.
    public func process(_ input: UnsafePointer<Float>, count n: Int, first kernel: ConvolutionKernel, into out: UnsafeMutablePointer<Float>) {
        run(input, n, kernel, out, kernel, out, both: false)
    }

    /// Convolves `input` with `first` into `out` and with `second` into `out2`, from the same
    /// input (a change of kernel being crossfaded). `out` may be `input`. Audio thread.
    public func process(_ input: UnsafePointer<Float>, count n: Int, first: ConvolutionKernel, into out: UnsafeMutablePointer<Float>,
                        second: ConvolutionKernel, into out2: UnsafeMutablePointer<Float>) {
        run(input, n, first, out, second, out2, both: true)
    }

    /// (Kernels as plain, non-optional arguments: nothing is retained on the audio thread.)
    @inline(__always)
    private func run(_ input: UnsafePointer<Float>, _ n: Int, _ first: ConvolutionKernel, _ out: UnsafeMutablePointer<Float>,
                     _ second: ConvolutionKernel, _ out2: UnsafeMutablePointer<Float>, both: Bool) {
        let p = partition
        var done = 0
        while done < n {
            // The block being filled sits after the last P − 1 samples of input.
            let block = history + (p - 1)
            if filled == 0 && n - done >= p {
                // A whole block: every partition in the frequency domain.
                block.update(from: input + done, count: p)
                pushFrame(block)
                whole(first, into: out + done)
                if both { whole(second, into: out2 + done) }
                history.update(from: history + p, count: p - 1)
                done += p
                continue
            }
            let firstTail = slot(for: first, keeping: second, both)
            let secondTail = both ? slot(for: second, keeping: first, true) : firstTail
            let m = min(n - done, p - filled)
            block.advanced(by: filled).update(from: input + done, count: m)
            Convolver.head(history + filled, first.head, p, count: m, plus: firstTail + filled, into: out + done)
            if both {
                Convolver.head(history + filled, second.head, p, count: m, plus: secondTail + filled, into: out2 + done)
            }
            filled += m
            done += m
            if filled == p {
                pushFrame(block)
                // Keep the last P − 1 samples for the head.
                history.update(from: history + p, count: p - 1)
                filled = 0
            }
        }
    }

    /// `count` outputs of the head (plus the tail's share): output i is Σ_j reversedHead[j]·x[i + j].
    /// Eight outputs at a time, each tap multiplying eight consecutive inputs: no horizontal
    /// sums. Thirty-two at a time where there are that many: four independent sums, so one sum's
    /// additions do not wait for each other's results (a single sum is bound by the adder's
    /// latency, 128 taps in a row). Each output's terms are added in the same order either way.
    /// `out` may overlap the input it was copied from, not `x`.
    @inline(__always)
    private static func head(_ x: UnsafePointer<Float>, _ reversedHead: UnsafePointer<Float>, _ taps: Int, count: Int,
                             plus tail: UnsafePointer<Float>, into out: UnsafeMutablePointer<Float>) {
        var i = 0
        while i + 32 <= count {
            var s0 = UnsafeRawPointer(tail + i).loadUnaligned(as: SIMD8<Float>.self)
            var s1 = UnsafeRawPointer(tail + i + 8).loadUnaligned(as: SIMD8<Float>.self)
            var s2 = UnsafeRawPointer(tail + i + 16).loadUnaligned(as: SIMD8<Float>.self)
            var s3 = UnsafeRawPointer(tail + i + 24).loadUnaligned(as: SIMD8<Float>.self)
            let base = UnsafeRawPointer(x + i)
            for j in 0..<taps {
                let h = SIMD8(repeating: reversedHead[j])
                let at = base + j * MemoryLayout<Float>.stride
                s0 += h * at.loadUnaligned(as: SIMD8<Float>.self)
                s1 += h * at.loadUnaligned(fromByteOffset: 32, as: SIMD8<Float>.self)
                s2 += h * at.loadUnaligned(fromByteOffset: 64, as: SIMD8<Float>.self)
                s3 += h * at.loadUnaligned(fromByteOffset: 96, as: SIMD8<Float>.self)
            }
            let o = UnsafeMutableRawPointer(out + i)
            o.storeBytes(of: s0, as: SIMD8<Float>.self)
            o.storeBytes(of: s1, toByteOffset: 32, as: SIMD8<Float>.self)
            o.storeBytes(of: s2, toByteOffset: 64, as: SIMD8<Float>.self)
            o.storeBytes(of: s3, toByteOffset: 96, as: SIMD8<Float>.self)
            i += 32
        }
        while i + 8 <= count {
            var sum = UnsafeRawPointer(tail + i).loadUnaligned(as: SIMD8<Float>.self)
            let base = x + i
            for j in 0..<taps {
                sum += SIMD8(repeating: reversedHead[j]) * UnsafeRawPointer(base + j).loadUnaligned(as: SIMD8<Float>.self)
            }
            UnsafeMutableRawPointer(out + i).storeBytes(of: sum, as: SIMD8<Float>.self)
            i += 8
        }
        while i < count {
            out[i] = dot(x + i, reversedHead, taps) + tail[i]
            i += 1
        }
    }

    /// Σ_{m<P} reversedHead[m] · x[m]: the head's output for the sample at x + P − 1.
    @inline(__always)
    private static func dot(_ x: UnsafePointer<Float>, _ reversedHead: UnsafePointer<Float>, _ count: Int) -> Float {
        var sum = SIMD8<Float>()
        var m = 0
        while m + 8 <= count {
            let a = UnsafeRawPointer(x + m).loadUnaligned(as: SIMD8<Float>.self)
            let b = UnsafeRawPointer(reversedHead + m).loadUnaligned(as: SIMD8<Float>.self)
            sum += a * b
            m += 8
        }
        var rest: Float = 0
        while m < count { rest += x[m] * reversedHead[m]; m += 1 }
        return sum.sum() + rest
    }

    /// A block of P is complete (at `block`): its frame's spectrum joins the delay line, and the
    /// tails computed for it are forgotten.
    private func pushFrame(_ block: UnsafePointer<Float>) {
        let p = partition, bins = self.bins
        // Frame = [previous block, this block].
        fft.real.update(from: previous, count: p)
        (fft.real + p).update(from: block, count: p)
        previous.update(from: block, count: p)
        fft.forward()
        newest = (newest + 1) % frameCount
        let re = frames + newest * 2 * lanes, im = re + lanes
        for b in 0..<bins {
            re[b] = fft.complex[2 * b]
            im[b] = fft.complex[2 * b + 1]
        }
        owners = (nil, nil)
    }

    /// The newest block's output, all partitions: Σ_{k=0…K} frame(newest − k) · H_k, inverted;
    /// the last P samples of the inverse are the block's.
    private func whole(_ kernel: ConvolutionKernel, into out: UnsafeMutablePointer<Float>) {
        let count = min(kernel.tailPartitions, capacity)
        sum(kernel, partitions: 0...count, newestFrameFor: 0)
        fft.inverse()
        out.update(from: fft.real + partition, count: partition)
    }

    /// The next block's share of partitions 1…K: Σ_k frame(newest − k + 1) · H_k, inverted; the
    /// last P samples of the inverse are the block's.
    private func tail(of kernel: ConvolutionKernel, into out: UnsafeMutablePointer<Float>) {
        let p = partition
        let count = min(kernel.tailPartitions, capacity)
        guard count > 0 else {
            out.update(repeating: 0, count: p)
            return
        }
        sum(kernel, partitions: 1...count, newestFrameFor: 1)
        fft.inverse()
        out.update(from: fft.real + p, count: p)
    }

    /// Into `fft.complex`: Σ over `partitions` of frame(newest − k + `lead`) · H_k, partition by
    /// partition in order for each bin, each product added into the sum with two fused
    /// multiply-adds. All 144 lanes of a partition 128's spectrum at once: its sums stay in 18
    /// sixteen-lane registers while each partition's spectra are read once, front to back (the
    /// reads of 16 or 32 bins at a time, going from partition to partition, cost the board
    /// about 2 % more in `make bench`). Other partitions: 144 lanes at a time, then 16. The
    /// lanes past the last bin are zeros in every kernel.
    private func sum(_ kernel: ConvolutionKernel, partitions: ClosedRange<Int>, newestFrameFor lead: Int) {
        typealias V = SIMD16<Float>
        let lanes = self.lanes, stride = 2 * lanes
        let frameCount = self.frameCount, newest = self.newest
        let ar = accumulator, ai = accumulator + lanes
        let imaginary = lanes * MemoryLayout<Float>.stride, vector = MemoryLayout<V>.stride
        // (Wrapping index arithmetic: the indices are bounded by the buffers' sizes, and an
        // overflow check per partition would cost as much as a bin's multiplies.)
        /// Partition k's input and kernel spectra from bin `b` on.
        @inline(__always) func spectra(_ k: Int, _ b: Int) -> (x: UnsafeRawPointer, h: UnsafeRawPointer) {
            var slot = newest &- k &+ lead
            if slot < 0 { slot &+= frameCount }
            return (UnsafeRawPointer(frames + (slot &* stride &+ b)), UnsafeRawPointer(kernel.spectra + (k &* stride &+ b)))
        }
        /// Adds the products of the `v`th sixteen bins from `x` and `h` into the sums `r`, `i`.
        @inline(__always) func multiplyAdd(_ r: inout V, _ i: inout V, _ x: UnsafeRawPointer, _ h: UnsafeRawPointer, _ v: Int) {
            let at = v &* vector
            let xr = x.loadUnaligned(fromByteOffset: at, as: V.self), xi = x.loadUnaligned(fromByteOffset: imaginary &+ at, as: V.self)
            let hr = h.loadUnaligned(fromByteOffset: at, as: V.self), hi = h.loadUnaligned(fromByteOffset: imaginary &+ at, as: V.self)
            r = mulAdd(-xi, hi, mulAdd(xr, hr, r))
            i = mulAdd(xi, hr, mulAdd(xr, hi, i))
        }
        @inline(__always) func store(_ r: V, _ i: V, _ b: Int) {
            UnsafeMutableRawPointer(ar + b).storeBytes(of: r, as: V.self)
            UnsafeMutableRawPointer(ai + b).storeBytes(of: i, as: V.self)
        }
        var b = 0
        while b &+ 144 <= lanes {
            var r0 = V(), r1 = V(), r2 = V(), r3 = V(), r4 = V(), r5 = V(), r6 = V(), r7 = V(), r8 = V()
            var i0 = V(), i1 = V(), i2 = V(), i3 = V(), i4 = V(), i5 = V(), i6 = V(), i7 = V(), i8 = V()
            for k in partitions {
                let (x, h) = spectra(k, b)
                multiplyAdd(&r0, &i0, x, h, 0); multiplyAdd(&r1, &i1, x, h, 1); multiplyAdd(&r2, &i2, x, h, 2)
                multiplyAdd(&r3, &i3, x, h, 3); multiplyAdd(&r4, &i4, x, h, 4); multiplyAdd(&r5, &i5, x, h, 5)
                multiplyAdd(&r6, &i6, x, h, 6); multiplyAdd(&r7, &i7, x, h, 7); multiplyAdd(&r8, &i8, x, h, 8)
            }
            store(r0, i0, b); store(r1, i1, b &+ 16); store(r2, i2, b &+ 32)
            store(r3, i3, b &+ 48); store(r4, i4, b &+ 64); store(r5, i5, b &+ 80)
            store(r6, i6, b &+ 96); store(r7, i7, b &+ 112); store(r8, i8, b &+ 128)
            b &+= 144
        }
        while b < lanes {
            var r = V(), i = V()
            for k in partitions {
                let (x, h) = spectra(k, b)
                multiplyAdd(&r, &i, x, h, 0)
            }
            store(r, i, b)
            b &+= 16
        }
        let out = fft.complex
        for b in 0..<bins {
            out[2 * b] = ar[b]
            out[2 * b + 1] = ai[b]
        }
    }
}
