import StompboxAudio
import StompboxDSP

/// A session's `loop` tracks as the Looper takes them back: each onto a track of its own, all
/// in step with the cycle they were saved with.
public struct SessionLoops {
    /// For `Looper.load`: at the moment they start, the session is at frame `origin`, where the
    /// earliest loop starts its first pass, and each loop is where the cycle puts it then.
    public var loops: [LoopToLoad]
    public var cycle: Int
    public var origin: Int
    /// Per loop, the session track it came from and its mix (for the Looper's track settings).
    public var tracks: [SessionTrack]
    /// Loop tracks left out, with why (they stay session tracks).
    public var left: [(id: String, reason: String)]
}

extension Session {
    /// The loop tracks that can go back onto the Looper's tracks (in start order, up to its eight
    /// tracks), decoded: each a whole number of cycles long (the manifest's `cycle_frames`, or
    /// the first loop's length) and starting a whole number of cycles from the others, mono or
    /// stereo, at most `maximumLength` frames. Nil when there is none, or the session is at
    /// another rate than `rate` (its loops would have to be converted to another cycle).
    public func loopsForLooper(rate: Int, maximumLength: Int) throws(SessionError) -> SessionLoops? {
        let candidates = manifest.tracks.filter { $0.kind == .loop }.sorted { ($0.start, $0.id) < ($1.start, $1.id) }
        guard !candidates.isEmpty, rate == manifest.sampleRate else { return nil }
        let cycle = manifest.cycleFrames > 0 ? manifest.cycleFrames : candidates[0].frames
        guard cycle > 0 else { return nil }
        var left: [(id: String, reason: String)] = []
        var chosen: [SessionTrack] = []
        for track in candidates {
            if track.frames == 0 || track.frames % cycle != 0 {
                left.append((track.id, "not a whole number of \(cycle)-frame cycles"))
            } else if track.frames > maximumLength {
                left.append((track.id, "longer than a Looper track holds"))
            } else if !(1...2).contains(track.channels) {
                left.append((track.id, "\(track.channels) channels"))
            } else if let first = chosen.first, (track.start - first.start) % cycle != 0 {
                left.append((track.id, "not in step with the other loops"))
            } else if chosen.count == LooperControl.trackCount {
                left.append((track.id, "every Looper track is taken"))
            } else {
                chosen.append(track)
            }
        }
        guard let origin = chosen.first?.start else { return nil }
        var loops: [LoopToLoad] = []
        for (i, track) in chosen.enumerated() {
            let audio = try audio(of: track.id)
            let length = track.frames
            // How far into its loop it is when the session is at `origin`.
            let position = ((origin - track.start) % length + length) % length
            if audio.channels == 1 {
                loops.append(LoopToLoad(track: i, left: audio.samples, right: nil, position: position))
            } else {
                loops.append(LoopToLoad(track: i, left: audio.channel(0), right: audio.channel(1), position: position))
            }
        }
        return SessionLoops(loops: loops, cycle: cycle, origin: origin, tracks: chosen, left: left)
    }
}
