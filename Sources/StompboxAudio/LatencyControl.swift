import Foundation

/// Keeps the live loop's playback margin at its target while the input and the output run on
/// two clocks, the way PulseAudio's module-loopback and zita-ajbridge do: a control loop reads
/// the measured margin after every block written and steers a variable-ratio resampler.
///
/// The margin is how much output is still queued in front of a block at the moment it is
/// written (what protects against a late wake-up), plus whatever captured input is still
/// waiting: `playbackLatency − block + waitingInput`. It is the same for every block of a burst
/// of input, and the end-to-end latency is margin + one block + the capture side.
///
/// Phases:
/// - **Warm-up** (`warmUp` seconds after the first block): the first reading sets the margin to
///   the target in one step (silence put in or input dropped); at the end of warm-up the
///   averaged margin sets it once more. Nothing is playing yet that a jump could spoil.
/// - **Bit-exact**: until the frame counts show another clock, the ratio is exactly 1 and the
///   resampler is bypassed: one clock for in and out (the same interface, or two sinks on one
///   server clock) never drifts, so the chain's output reaches the output bit for bit.
/// - **Following**: once the servers' frame counts show the input on another clock
///   (`clockDrift`, from a `ClockDriftMeter`), and the margin has not gone the other way, the
///   resampler is engaged for the rest of the session, its ratio starting from that drift,
///   then steered by a PI loop (critically damped,
///   time constant `timeConstant`, limited to ±`maximumCorrection`) that holds the level where
///   it was. A quick move of the level (another client joined the device) is a step, not
///   drift: the band is centred again where it settles.
/// - **Dropout**: a margin far outside the target (the output ran dry, or the loop fell behind
///   and input piled up) is set back with one correction once the spell is over (see
///   `observe`), and counted so automatic latency can react.
///
/// Pure arithmetic on numbers the session measures: no allocation, safe on the audio thread.
public struct LatencyControl: Sendable {
    /// What the session has to do after an observation.
    public enum Action: Equatable, Sendable {
        case none
        /// Put this many frames of silence in front of the next block (margin too small).
        case insertSilence(Int)
        /// Drop this many frames of waiting input (margin too large).
        case dropInput(Int)
    }

    public let sampleRate: Double
    public let blockSeconds: Double
    /// The margin wanted, in seconds.
    public private(set) var target: Double
    public var warmUp = 0.5
    public var deadBand = 0.0006
    public var timeConstant = 1.5
    public var maximumCorrection = 0.002
    /// A margin this far off (seconds) is a dropout: corrected at once rather than steered.
    public var dropoutError: Double

    /// Output frames per input frame; exactly 1 until the input is found to drift.
    public private(set) var ratio = 1.0
    /// True once the resampler is in the path.
    public private(set) var following = false
    /// How fast the input's clock runs against the output's (+0.0003: 300 ppm fast): the
    /// correction averaged over the last ~10 s, without the moment-to-moment steering that holds
    /// the level. 0 until following.
    public private(set) var drift = 0.0
    /// The margin, low-pass filtered (seconds); nil before the first observation.
    public private(set) var filteredMargin: Double?
    /// The drift measured apart from the margin, from the servers' frame counts (a
    /// `ClockDriftMeter`), or nil while there is no verdict yet. It decides whether to follow
    /// (see `observe`); the margin is read through interpolated playback time, which can creep
    /// on one clock for a few seconds as it settles, and that is not drift.
    public var clockDrift: Double?

    private var start: Double?
    private var lastTime = 0.0
    private var warmedUp = false
    private var correctNext = false
    /// Where the margin settled (the dead band's centre, and the level held once following).
    private var reference = 0.0
    private var referenceLatched = false
    public var stepThreshold = 0.0004
    private var integral = 0.0
    /// The filtered margin every 0.1 s over the last 6 s: where the level settled, and its steps.
    private var history = InlineArray<60, Double>(repeating: 0)
    private var historyCount = 0
    private var lastHistoryTime = 0.0
    private static let historyLength = 60
    private static let historyInterval = 0.1

    /// `blockSeconds` sets how far off a margin must be to count as a dropout: more than a block
    /// and at least 4 ms, so the jitter of a server's own period never does.
    public init(sampleRate: Double, target: Double, blockSeconds: Double) {
        self.sampleRate = sampleRate
        self.target = target
        self.blockSeconds = blockSeconds
        dropoutError = max(0.004, 1.5 * blockSeconds)
    }

    /// Moves the target (automatic latency); the step is taken at once.
    public mutating func retarget(_ seconds: Double) -> Action {
        let step = seconds - target
        target = seconds
        reference += step
        guard let m = filteredMargin else { return .none }
        filteredMargin = m + step
        return step > 0 ? .insertSilence(frames(step)) : step < 0 ? .dropInput(frames(-step)) : .none
    }

    /// Dropouts found: the output queue ran empty (an underrun: a gap was heard), or input piled
    /// up behind a late loop and had to be dropped (an overrun). One late burst of input is one
    /// dropout, however many readings it spans.
    public private(set) var underruns = 0
    public private(set) var overruns = 0
    public var dropouts: Int { underruns + overruns }

    /// How long a margin must stay far off before it is corrected, and how long the readings
    /// after a starved spell are watched before the level is set again (seconds).
    public var hold: Double { max(0.05, 2.5 * blockSeconds) }

    /// How long a margin that crept far above the target may stay there (seconds).
    public static let creptHold = 4.0

    /// A level that settled this far above the target (seconds), lowest reading included, for
    /// `creptHold` is brought back: less than a dropout, but latency nobody asked for (PipeWire
    /// sometimes hands a stream one more quantum of queue when a client joins the input's
    /// device, and keeps it). The session takes it from the queued output, crossfaded.
    public var settledHighThreshold: Double { max(0.002, blockSeconds / 4) }
    /// Level trims made: queued output taken back under a crossfade, not a dropout.
    public private(set) var trims = 0
    /// Since when every reading has been above `target + settledHighThreshold`, and the lowest.
    private var settledHighSince: Double?
    private var settledHighMinimum = Double.infinity
    /// When the last trim was made; an underrun soon after says the server needs that queue,
    /// and the level is left alone from then on.
    private var lastTrim = -Double.infinity
    /// When the last underrun was counted (`countUnderrun`).
    private var lastUnderrun = -Double.infinity
    private var trimsAllowed = true

    /// Since when the margin has been far below the target (the output starving), if it is.
    private var starvedSince: Double?
    private var starvedCounted = false
    /// Since when the margin has been back after starving, or far above the target.
    private var recoveringSince: Double?
    private var highSince: Double?
    private var creptSince: Double?
    /// The lowest margin read since `recoveringSince` / `highSince`.
    private var spellMinimum = Double.infinity
    /// The readings' sum and count since `recoveringSince`, and whether that spell is a gap the
    /// server held as latency (rather than a starved output).
    private var spellSum = 0.0
    private var spellReadings = 0
    private var heldGapSpell = false

    /// Feeds the margin measured when a block was written (seconds) at time `now` (seconds,
    /// monotonic). Returns what to do about it.
    ///
    /// A margin far off is handled as a spell, not reading by reading. A server that hands the
    /// input over late (PipeWire's pulse server does, by several periods at a time) starves the
    /// output and then delivers everything at once: putting silence in while it is late would
    /// only add latency once the input arrives. So a starved output is left alone for `hold`
    /// (only counted, if its queue really ran empty); once the input is back, the lowest margin
    /// of the next `hold` seconds says where the level is, and one correction sets it back to the
    /// target (a server that stopped reading while starved now holds the gap as extra latency).
    /// A margin that stays far below for `hold` gets silence; one that stays far above gets its
    /// excess dropped.
    public mutating func observe(margin: Double, at now: Double) -> Action {
        guard margin.isFinite else { return .none }
        guard let t0 = start, let previous = filteredMargin else {
            // The first reading: set the margin at once, then refine it at the end of warm-up.
            start = now
            lastTime = now
            return correct(to: target, from: margin)
        }
        let dt = max(0, min(0.5, now - lastTime))
        lastTime = now
        if !warmedUp {
            // Quick filter while nothing is steered yet.
            let m = previous + (1 - exp(-dt / 0.1)) * (margin - previous)
            filteredMargin = m
            guard now - t0 >= warmUp else { return .none }
            warmedUp = true
            lastHistoryTime = now
            return correct(to: target, from: m)
        }

        // Starving: the queue in front of the block has shrunk far below the target, or the
        // server said it ran dry and the margin shows it.
        let band = lowBand
        let low = margin < target - band
        if let since = fallSince, now - since >= Self.heldGapWait {
            // No verdict from the frame counts (no timing replies came): the margin decides.
            fallSince = nil
            if low {
                starvedSince = nil
                clearHistory(now)
                return correct(to: target, from: margin)
            }
        }
        let ranDry = correctNext && low
        // Or the other way: a server that stops reading while a stream is dry (PipeWire's pulse
        // server with prebuf, when the input came a quantum late) plays silence and keeps its
        // place, so the input that comes next sits behind the gap: the level is up by the gap
        // the first time it is read, never low. A gap heard, and latency to take back.
        let heldGap = correctNext && margin > target + band && starvedSince == nil && recoveringSince == nil
        correctNext = false
        if heldGap {
            highSince = nil
            settledHighSince = nil
            countUnderrun(at: now, unlessJustCounted: true)
            clearHistory(now)
            recoveringSince = now
            spellMinimum = margin
            spellSum = margin
            spellReadings = 1
            heldGapSpell = true
            return .none
        }
        // A spell starts far below (or low, once the server said the output ran dry) and lasts
        // while the readings stay low: the blocks of one late burst are one spell.
        if margin < target - dropoutError || ranDry || (starvedSince != nil && low) {
            highSince = nil
            settledHighSince = nil
            recoveringSince = nil
            if starvedSince == nil {
                starvedSince = now
                starvedCounted = false
            }
            if !starvedCounted && (margin <= 0 || ranDry) {
                // The queue was empty when this block came: the output played a gap.
                starvedCounted = true
                countUnderrun(at: now, unlessJustCounted: true)
                clearHistory(now)
            }
            guard now - starvedSince! >= hold else { return .none }
            // Still starving after `hold`: a level that dropped, or a margin misread. Read
            // through libpulse's interpolated playback time, the margin can dip by a couple of
            // ms from a level at the target while the queue stands still; silence put in then
            // is a gap nobody needed. Where the session's frame counts can tell
            // (`fallsCounted`), they decide (`levelFell`). A level that had already sunk (the
            // filtered margin, not updated during the spell, is off the target: an input
            // running slow, not yet followed) is set back by the margin.
            starvedSince = nil
            clearHistory(now)
            if fallsCounted && atTarget {
                if fallSince == nil {
                    fallSince = now
                    fallHeard = false
                }
                fallHeard = fallHeard || starvedCounted
                return .none
            }
            return correct(to: target, from: margin)
        }
        if starvedSince != nil {
            starvedSince = nil
            // A dip that never emptied the queue lost nothing (a block captured late, the
            // bottom of a jittery level): the level comes back by itself. Only an emptied
            // queue may have left the gap behind as latency.
            guard starvedCounted else { return .none }
            recoveringSince = now
            spellMinimum = margin
            heldGapSpell = false
            return .none
        }
        if let since = recoveringSince {
            spellMinimum = min(spellMinimum, margin)
            spellSum += margin
            spellReadings += 1
            guard now - since >= (heldGapSpell ? Self.heldGapWait : hold) else { return .none }
            recoveringSince = nil
            // After a late burst the readings come down as the burst drains: the lowest is the
            // level. After a held gap the level is steady, a quantum up: its mean is the level,
            // as the filtered margin it is compared with was.
            let level = heldGapSpell ? spellSum / Double(spellReadings) : spellMinimum
            filteredMargin = level
            clearHistory(now)
            return abs(level - target) > deadBand ? correct(to: target, from: level) : .none
        }
        if margin > target + dropoutError && previous < target + dropoutError / 2 {
            // The level jumped up: input piled up behind a late loop or server. Drop the excess
            // once it has stayed for `hold`, down to where its lowest reading puts the target.
            if highSince == nil {
                highSince = now
                settledHighSince = nil
                spellMinimum = margin
                return .none
            }
            spellMinimum = min(spellMinimum, margin)
            guard now - highSince! >= hold else { return .none }
            highSince = nil
            guard spellMinimum > target + dropoutError else { return .none }
            overruns += 1
            clearHistory(now)
            return correct(to: target, from: spellMinimum)
        }
        if previous > target + dropoutError {
            // Crept up and stayed up (a server's own adaptive buffering can hand a few ms back
            // and forth for a few seconds when a stream joins; that comes back by itself, so
            // only a level that stays high this long is cut back).
            if creptSince == nil { creptSince = now }
            if now - creptSince! >= LatencyControl.creptHold {
                creptSince = nil
                overruns += 1
                clearHistory(now)
                return correct(to: target, from: previous)
            }
        } else {
            creptSince = nil
        }
        let m = previous + (1 - exp(-dt / 0.3)) * (margin - previous)
        filteredMargin = m

        if !following, trimsAllowed, highSince == nil, recoveringSince == nil {
            // Settled high: every reading above the band for `creptHold`; trimmed to the target
            // by its lowest reading. Beyond a dropout's size it is a level that crept (above).
            if margin > target + settledHighThreshold && m <= target + dropoutError {
                if settledHighSince == nil {
                    settledHighSince = now
                    settledHighMinimum = margin
                }
                settledHighMinimum = min(settledHighMinimum, margin)
                if now - settledHighSince! >= Self.creptHold {
                    settledHighSince = nil
                    trims += 1
                    lastTrim = now
                    clearHistory(now)
                    return correct(to: target, from: settledHighMinimum)
                }
            } else {
                settledHighSince = nil
            }
        }

        if !following {
            remember(m, at: now)
            // A quick move of the level (another stream joined the device, the server changed its
            // own buffering) is a step, not drift: clocks drift by at most a few hundred ppm, so
            // the margin cannot move 0.4 ms in half a second on its own. After a step the level
            // is watched afresh from where it settled.
            if historyCount >= 6 && abs(m - history[historyCount - 6]) > stepThreshold {
                clearHistory(now)
                referenceLatched = false
                return .none
            }
            if !referenceLatched && historyCount >= 10 {
                var sum = 0.0
                for i in (historyCount - 10)..<historyCount { sum += history[i] }
                reference = sum / 10
                referenceLatched = true
            }
            // Drift is what the frame counts say (`clockDrift`: exact, and on one clock they never
            // move), unless the margin has clearly gone the other way. The margin alone is not
            // trusted with it: read through interpolated playback time, it can creep on one clock.
            // Nor is it waited for: a margin that keeps being set back by spells (an input that
            // comes in bursts, drifting towards the low edge) never gets six quiet seconds.
            let moved = referenceLatched && abs(m - reference) > deadBand
            // A small drift must show in the margin too before it is followed: on PulseAudio the
            // counts now and then slope by 50-90 ppm on one clock for long enough to pass the
            // meter (the servers' device-latency estimates settling), and following that bends
            // the output. A real one moves the margin past the dead band within seconds.
            if let counted = clockDrift, abs(counted) > Self.smallestDrift,
               moved ? (m > reference) == (counted > 0) : abs(counted) >= Self.plainDrift {
                following = true
                if !referenceLatched {
                    reference = m
                    referenceLatched = true
                }
                integral = counted / ki
                drift = counted
            } else {
                // Moved, and the frame counts say one clock (a server settling into new
                // buffering): centre the band where the level is now.
                if moved, let counted = clockDrift, abs(counted) <= Self.smallestDrift, historyCount == Self.historyLength {
                    clearHistory(now)
                }
                return .none
            }
        }
        // Hold the level where it was: no pitch bend to pull it back to the nominal target.
        let error = m - reference
        let limit = maximumCorrection
        let u = kp * error + ki * integral
        if abs(u) < limit || (u > 0) != (error > 0) {
            integral += error * dt     // no wind-up while saturated
        }
        ratio = 1 - min(max(kp * error + ki * integral, -limit), limit)
        drift += (1 - exp(-dt / 10)) * ((1 - ratio) - drift)
        return .none
    }

    /// The frame counts show a gap the server kept as latency (the end to end grew by it after
    /// the output ran dry, or after a dropout): the gap is taken back, exactly, where the
    /// margin's readings only tell it to within their jitter (a quantum on PipeWire), or not at
    /// all (a few hundred µs hide in its band). Not counted again: the server's dry report (or
    /// the dropout) that started it was. A level the margin was about to set from its own
    /// readings (after a starved spell, or a jump up it would have taken for input piled up) is
    /// left to this.
    public mutating func gapHeld(_ seconds: Double, at now: Double) -> Action {
        let n = frames(seconds)
        settleByCounts(shift: -n, at: now)
        return n > 0 ? .dropInput(n) : .none
    }

    /// The frame counts set the level (`gapHeld`, `levelFell`): every spell the margin was
    /// watching ends, and the filtered margin moves by the frames put in (+) or dropped (−).
    private mutating func settleByCounts(shift n: Int, at now: Double) {
        fallSince = nil
        starvedSince = nil
        recoveringSince = nil
        highSince = nil
        creptSince = nil
        settledHighSince = nil
        clearHistory(now)
        if let m = filteredMargin { filteredMargin = m + Double(n) / sampleRate }
    }

    /// The margin is far below the target and being watched: the input may still be on its way.
    public var starving: Bool { starvedSince != nil }

    /// How far below the target a margin reads low (seconds).
    private var lowBand: Double { max(0.0015, blockSeconds / 2) }

    /// The filtered margin is at the target (within half the low band): where the session takes
    /// the end to end it later measures a fall from.
    public var atTarget: Bool {
        guard let m = filteredMargin else { return false }
        return abs(m - target) < lowBand / 2
    }

    /// Set by the session before each observation: whether its frame counts can say if a level
    /// that read low for `hold` really fell (they had a figure from when the level was at the
    /// target).
    public var fallsCounted = false
    /// A margin stayed low for `hold` and waits (since `fallSince`) for the frame counts to
    /// say whether the level fell (`levelFell`); after `heldGapWait` without them the margin
    /// decides.
    public var awaitingFallVerdict: Bool { fallSince != nil }
    private var fallSince: Double?
    private var fallHeard = false

    /// The frame counts' verdict on a margin that stayed low (`awaitingFallVerdict`): the end to
    /// end fell by `seconds` since the level was last at the target (net of a raised target).
    /// On one clock it only falls when the server skipped output the queue no longer held (a gap
    /// heard); with two, also by the drift not yet followed. That much silence puts it back,
    /// exactly, counted as an underrun unless the server's dry report already was. Not fallen:
    /// the margin was misread, nothing is put in.
    public mutating func levelFell(_ seconds: Double, at now: Double) -> Action {
        guard fallSince != nil else { return .none }
        let n = seconds > Self.countsJitter ? max(0, frames(seconds)) : 0
        if n > 0 && !fallHeard { countUnderrun(at: now) }
        settleByCounts(shift: n, at: now)
        return n > 0 ? .insertSilence(n) : .none
    }

    /// A change of the end to end in frame counts smaller than this (seconds) is the figure's own
    /// jitter between timing replies, not a gap kept or a fall.
    public static let countsJitter = 0.0003

    /// A gap held as latency waits this long (seconds) for the frame counts to say how long it
    /// was (`gapHeld`) before the level is set from the margin's own readings.
    static let heldGapWait = 0.35

    /// The server reported that the output ran dry: a dropout, counted at once (once per spell:
    /// not again within `hold` of the last one counted). If the next observation finds the
    /// margin collapsed, the margin is set back to the target in one step.
    ///
    /// Counted even when the margin reads intact. The sink rewinds after the queue refills, but
    /// not always far enough: on PulseAudio (mostly at 64 frames / 4 ms) 15 of 18 such reports
    /// were heard on the scope, as 2-36 frames skipped or silent (the margin read 1.5-2.7 ms, the
    /// frame counts moved by less than their jitter); nothing else in the client tells those
    /// from the 3 that were not. Automatic latency needs every one; a report nobody heard costs
    /// at most a step of latency, and only with another within half a minute.
    public mutating func outputRanDry(at now: Double) {
        correctNext = warmedUp
        if warmedUp { countUnderrun(at: now, unlessJustCounted: true) }
    }

    // MARK: Helpers

    /// Below this (seconds per second) two clocks are taken for one.
    static let smallestDrift = 30e-6
    /// From this drift (seconds per second) up the frame counts are followed on their own.
    static let plainDrift = 150e-6
    /// An underrun this soon after a trim (seconds) stops trimming for the session.
    static let trimProbation = 10.0

    private var kp: Double { 2 / timeConstant }
    private var ki: Double { 1 / (timeConstant * timeConstant) }

    /// A gap heard. One soon after a trim says the server needed the queue that was trimmed:
    /// no more trims this session. `unlessJustCounted`: the same gap seen a second way (the
    /// server's report, then the margin) within `hold` of the last count is not counted again.
    private mutating func countUnderrun(at now: Double, unlessJustCounted: Bool = false) {
        if unlessJustCounted && now - lastUnderrun < hold { return }
        underruns += 1
        lastUnderrun = now
        if now - lastTrim < Self.trimProbation { trimsAllowed = false }
    }

    private func frames(_ seconds: Double) -> Int { Int((seconds * sampleRate).rounded()) }

    private mutating func correct(to wanted: Double, from m: Double) -> Action {
        fallSince = nil
        reference = wanted
        referenceLatched = following
        let n = frames(wanted - m)
        filteredMargin = m + Double(n) / sampleRate
        if n > 0 { return .insertSilence(n) }
        if n < 0 { return .dropInput(-n) }
        return .none
    }

    private mutating func clearHistory(_ now: Double) {
        historyCount = 0
        if !following { referenceLatched = false }
        lastHistoryTime = now
    }

    private mutating func remember(_ m: Double, at now: Double) {
        guard now - lastHistoryTime >= Self.historyInterval else { return }
        lastHistoryTime = now
        if historyCount == Self.historyLength {
            for i in 1..<Self.historyLength { history[i - 1] = history[i] }
            historyCount -= 1
        }
        history[historyCount] = m
        historyCount += 1
    }
}

/// How fast the input's clock runs against the output's, from frame counts alone: the frames
/// the input device has captured minus the frames the output device has played, both read from
/// the servers' timing replies and brought to one instant. On one clock that difference stays
/// put whatever the loop does (silence put in or input dropped moves neither end); with two
/// clocks it grows or shrinks by the drift. No interpolated time enters it, so a playback clock
/// that settles slowly is not mistaken for drift. A dropout can step it: clear it then. So can
/// the server re-buffering a device when another stream joins it (a few hundred µs, once): the
/// verdict waits while a step lies in the span.
///
/// Least squares over the last `length` readings (about 15 s), once there are `minimum` (about
/// 6 s); an input that arrives in bursts (a pipe) puts a ms or so of jitter on each reading,
/// which the longer span averages out.
/// Pure arithmetic, safe on the audio thread.
public struct ClockDriftMeter: Sendable {
    public static let length = 150
    public static let minimum = 60
    /// Readings closer together than this are skipped (seconds).
    public static let interval = 0.09
    public let sampleRate: Double
    private var times = InlineArray<150, Double>(repeating: 0)
    private var offsets = InlineArray<150, Double>(repeating: 0)
    private var count = 0

    public init(sampleRate: Double) { self.sampleRate = sampleRate }

    /// Captured − played (frames) at `time` (seconds).
    public mutating func add(offset frames: Double, at time: Double) {
        guard frames.isFinite, time.isFinite else { return }
        if count > 0 && time - times[count - 1] < Self.interval { return }
        if count == Self.length {
            for i in 1..<Self.length {
                times[i - 1] = times[i]
                offsets[i - 1] = offsets[i]
            }
            count -= 1
        }
        times[count] = time
        offsets[count] = frames
        count += 1
    }

    public mutating func clear() { count = 0 }

    /// Seconds per second (+0.0003: the input 300 ppm fast); nil until there are `minimum`
    /// readings, or while the two halves of the span tell different stories: a level that
    /// stepped once (a server re-buffering when another stream joins a device) slopes in one
    /// half only, a clock in both.
    public var drift: Double? {
        guard count >= Self.minimum else { return nil }
        let early = slope(0..<(count / 2)), late = slope((count / 2)..<count), all = slope(0..<count)
        let small = LatencyControl.smallestDrift
        if abs(early) < small && abs(late) < small {
            // Two quiet halves, but a step between them if the whole slopes.
            return abs(all) < small ? all : nil
        }
        return Self.agree(early, late) && Self.agree(all, early) && Self.agree(all, late) ? all : nil
    }

    /// Two slopes that tell the same story: each beyond `smallestDrift`, the same way, within a
    /// factor of three.
    private static func agree(_ a: Double, _ b: Double) -> Bool {
        let small = LatencyControl.smallestDrift
        return abs(a) > small && abs(b) > small && (a > 0) == (b > 0) && abs(a) < 3 * abs(b) && abs(b) < 3 * abs(a)
    }

    private func slope(_ range: Range<Int>) -> Double {
        let n = Double(range.count), t0 = times[range.lowerBound]
        var sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0
        for i in range {
            let x = times[i] - t0, y = offsets[i]
            sx += x; sy += y; sxx += x * x; sxy += x * y
        }
        let d = n * sxx - sx * sx
        return d > 0 ? (n * sxy - sx * sy) / d / sampleRate : 0
    }
}

/// Automatic latency: when dropouts keep happening at the chosen target, raise it step by step
/// (up to a cap) until they stop. A single dropout (a one-off hiccup) does not raise it; two
/// within `window` seconds do. The raised target is kept until the user changes the settings or
/// resets it.
public struct AutoLatency: Sendable {
    public let requested: Double
    public let cap: Double
    public let step: Double
    public var window = 30.0
    public private(set) var target: Double
    /// Dropouts counted since the target was last raised (or set).
    public private(set) var dropouts = 0
    /// Every dropout since the target was set by the user.
    public private(set) var totalDropouts = 0
    private var recent = (-Double.infinity, -Double.infinity)

    /// Targets in seconds; `step` is how much each raise adds.
    public init(requested: Double, cap: Double, step: Double) {
        self.requested = requested
        self.cap = max(cap, requested)
        self.step = step
        target = requested
    }

    /// Notes a dropout at `now`; returns the new target if it was raised.
    public mutating func noteDropout(at now: Double) -> Double? {
        dropouts += 1
        totalDropouts += 1
        recent = (recent.1, now)
        guard now - recent.0 <= window, target < cap else { return nil }
        target = min(cap, target + step)
        recent = (-Double.infinity, -Double.infinity)
        return target
    }

    public var isRaised: Bool { target > requested + 1e-9 }
}
