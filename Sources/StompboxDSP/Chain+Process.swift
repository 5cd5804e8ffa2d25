extension Chain {
    /// Processes `buffer` in place; any length (split into blocks of at most `maximumBlockSize`).
    /// Audio thread: allocation- and lock-free.
    public func process(_ buffer: UnsafeMutableBufferPointer<Float>) {
        precondition(maximumBlockSize > 0, "Chain.prepare was not called")
        lastOutputPeak = 0
        guard let base = buffer.baseAddress else { return }
        var start = 0
        while start < buffer.count {
            let n = min(maximumBlockSize, buffer.count - start)
            processBlock(UnsafeMutableBufferPointer(start: base + start, count: n), nil)
            start += n
        }
    }

    /// Processes the mono input in `left` into a stereo output in `left` and `right` (the same
    /// length; `right`'s contents on entry are not read); any length, split into blocks of at
    /// most `maximumBlockSize`. Audio thread: allocation- and lock-free.
    public func process(left: UnsafeMutableBufferPointer<Float>, right: UnsafeMutableBufferPointer<Float>) {
        precondition(maximumBlockSize > 0, "Chain.prepare was not called")
        precondition(left.count == right.count, "the two sides differ in length")
        lastOutputPeak = 0
        guard let l = left.baseAddress, let r = right.baseAddress else { return }
        var start = 0
        while start < left.count {
            let n = min(maximumBlockSize, left.count - start)
            processBlock(UnsafeMutableBufferPointer(start: l + start, count: n), UnsafeMutableBufferPointer(start: r + start, count: n))
            start += n
        }
    }

    /// One block: mono in `block`, or with `right` a stereo output.
    private func processBlock(_ block: UnsafeMutableBufferPointer<Float>, _ right: UnsafeMutableBufferPointer<Float>?) {
        let p = parameters
        inputGain.setTarget(decibelsToGain(p.load(.inputGain)))
        // The tuner open (and not playing through) mutes the output, gliding like the gain does.
        outputGain.setTarget(tunerTap.isMuting ? 0 : decibelsToGain(p.load(.outputGain)))

        // Nothing that is not a number goes further; absurd levels are bounded.
        let inPeakBits = largestMagnitudeBits(block)
        if inPeakBits <= 0x7f80_0000 {
            meters.note(input: Float(bitPattern: inPeakBits))
        } else {
            // A NaN is in there (rare): meter the largest number instead.
            var peak: Float = 0
            for x in block where x.isFinite { peak = max(peak, abs(x)) }
            meters.note(input: peak)
        }
        var gain = inputGain // a local: no exclusivity check per sample
        if !gain.isRamping && gain.current == 1 && inPeakBits <= Float(64).bitPattern {
            // Unity and in range (the usual case): nothing to do.
        } else if !gain.isRamping {
            let g = gain.current
            for i in block.indices {
                let x = block[i]
                block[i] = x.isFinite ? min(max(x * g, -64), 64) : 0
            }
        } else {
            for i in block.indices {
                let x = block[i]
                block[i] = x.isFinite ? min(max(x * gain.next(), -64), 64) : 0
            }
        }
        inputGain = gain
        tunerTap.write(block)

        processBoard(block, right)

        // The same glide on both sides.
        @inline(__always) func applyOutputGain(_ side: UnsafeMutableBufferPointer<Float>) -> SmoothedValue {
            var gain = outputGain
            if gain.isRamping {
                for i in side.indices { side[i] *= gain.next() }
            } else if gain.current != 1 {
                let g = gain.current
                for i in side.indices { side[i] *= g }
            }
            return gain
        }
        let glided = applyOutputGain(block)
        if let right { _ = applyOutputGain(right) }
        outputGain = glided
        // The metronome after the pedals, before the limiter (in the middle of a stereo board).
        let countingIn = looperControl.isCountingIn
        let peak: Float
        if let right {
            let n = block.count
            let clicks = UnsafeMutableBufferPointer(rebasing: self.clicks[0..<n])
            clicks.update(repeating: 0)
            if metronome.mix(into: clicks, p, countingIn: countingIn) {
                for i in 0..<n {
                    block[i] += clicks[i]
                    right[i] += clicks[i]
                }
            }
            peak = limiter.process(block, right)
        } else {
            metronome.mix(into: block, p, countingIn: countingIn)
            peak = limiter.process(block)
        }
        lastOutputPeak = max(lastOutputPeak, peak)
        meters.note(output: peak, limiterGain: limiter.lowestGain, ducked: limiter.ducked)
    }

    /// The pedals on the board, and a new board's fade: out to the dry input, swap, back in.
    /// With `right`, a stereo board (the right side filled in whether or not a pedal made it differ).
    private func processBoard(_ block: UnsafeMutableBufferPointer<Float>, _ right: UnsafeMutableBufferPointer<Float>?) {
        if fade == .none, retired.load(ordering: .acquiring) == 0 {
            let next = pending.exchange(0, ordering: .acquiringAndReleasing)
            if next != 0 {
                incoming = Unmanaged<Board>.fromOpaque(UnsafeRawPointer(bitPattern: next)!)
                fade = .out
                fadePosition = 0
            }
        } else if fade == .swap, let next = incoming {
            // The old board has faded out: the new one takes over from this block.
            retired.store(UInt(bitPattern: active.toOpaque()), ordering: .releasing)
            active = next
            incoming = nil
            next._withUnsafeGuaranteedRef { board in
                activeSlots = board.slots
                activeCount = board.count
            }
            for i in 0..<activeCount where activeSlots[i].entering { activeSlots[i].enter() }
            fade = .in
            fadePosition = 0
        }
        if fade != .none {
            boardInput.baseAddress!.update(from: block.baseAddress!, count: block.count)
        }

        let p = parameters
        if let right {
            var stereo = false
            for i in 0..<activeCount {
                activeSlots[i].run(block, right, stereo: &stereo, dry: dry, dryRight: dryRight, parameters: p)
            }
            if !stereo { right.baseAddress!.update(from: block.baseAddress!, count: block.count) }
        } else {
            for i in 0..<activeCount { activeSlots[i].run(block, dry: dry, parameters: p) }
        }

        guard fade == .out || fade == .in else { return }
        // The same fade on both sides.
        let from = fadePosition, length = Float(fadeLength), fadingOut = fade == .out
        @inline(__always) func fadeSide(_ side: UnsafeMutableBufferPointer<Float>) {
            var position = from
            for i in side.indices {
                let g = min(Float(position) / length, 1)
                if fadingOut {
                    side[i] += g * (boardInput[i] - side[i])                   // wet → dry
                } else {
                    side[i] = boardInput[i] + g * (side[i] - boardInput[i])    // dry → wet
                }
                position += 1
            }
        }
        fadeSide(block)
        if let right { fadeSide(right) }
        fadePosition = from + block.count
        if fadePosition >= fadeLength { fade = fadingOut ? .swap : .none }
    }
}
