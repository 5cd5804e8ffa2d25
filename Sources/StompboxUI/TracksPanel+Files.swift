import CGtk
import Foundation
import StompboxAudio
import StompboxDSP
import StompboxSession

/// Open…, Save, Save as… and Add audio file…: the session file, its tracks, and the Looper's
/// tracks saved into it.
extension TracksPanel {
    static let sessionFilter = (name: "Stompbox sessions (*.stompsession)", patterns: ["*.stompsession"])
    static let audioFilter = (name: "Audio files (WAV, FLAC, AIFF, Ogg…)",
                              patterns: ["*.wav", "*.WAV", "*.flac", "*.FLAC", "*.aif", "*.aiff", "*.ogg", "*.opus", "*.mp3", "*.caf", "*.w64", "*.rf64"])
    /// Loop tracks carry this author when saved (a person's name is not known here).
    static var author: String { let name = NSUserName(); return name.isEmpty ? "Stompbox" : name }

    /// Shows the opened session's name and rebuilds its rows; their waveforms are computed off
    /// the main thread from the stored audio.
    func showSession() {
        for row in sessionRows { gtk_widget_destroy(row.widget) }
        var rows: [SessionTrackRow] = []
        if let session {
            let name = sessionHasFile ? URL(fileURLWithPath: session.path).lastPathComponent : "New session"
            let text = "\(name)\(unsaved ? " (not saved)" : ""): \(session.manifest.tracks.count) track\(session.manifest.tracks.count == 1 ? "" : "s")"
            gtk_label_set_text(cast(raw(sessionLabel)), text)
            if let a = gtk_widget_get_accessible(sessionLabel) { atk_object_set_description(a, text) }
            for track in session.manifest.tracks {
                let row = SessionTrackRow(track: track, rate: session.manifest.sampleRate) { [unowned self] id, gain, pan, mute in
                    editMix(id, gain, pan, mute)
                }
                rows.append(row)
                gtk_box_pack_start(cast(raw(sessionRowsBox)), row.widget, 0, 0, 0)
                gtk_widget_show_all(row.widget)
                guard let bytes = session.storedAudio(of: track.id) else { continue }
                let inbox = computedPeaks, id = track.id, file = track.file, frames = track.frames
                DispatchQueue.global(qos: .utility).async {
                    // Block by block: a track of hours is never decoded whole.
                    let bins = 256
                    var peaks = [Float](repeating: 0, count: bins)
                    let read = try? AudioData.read(bytes, name: file, maximumFrames: frames) { block, first, channels in
                        for (k, x) in block.enumerated() where x.isFinite {
                            let bin = min(bins - 1, (first + k / channels) * bins / max(1, frames))
                            peaks[bin] = max(peaks[bin], min(1, abs(x)))
                        }
                    }
                    guard read != nil else { return }
                    inbox.put(id, peaks)
                }
            }
        } else {
            gtk_label_set_text(cast(raw(sessionLabel)), "No session open")
            if let a = gtk_widget_get_accessible(sessionLabel) { atk_object_set_description(a, "No session open") }
        }
        sessionRows = rows
    }

    private func editMix(_ id: String, _ gain: Double, _ pan: Double, _ mute: Bool) {
        guard let session else { return }
        do { try session.setMix(of: id, gainDB: gain, pan: pan, mute: mute) } catch { return say(error.description, error: true) }
        if !unsaved { unsaved = true; showSessionLabel() }
    }

    private func showSessionLabel() {
        guard let session else { return }
        let name = sessionHasFile ? URL(fileURLWithPath: session.path).lastPathComponent : "New session"
        let text = "\(name)\(unsaved ? " (not saved)" : ""): \(session.manifest.tracks.count) track\(session.manifest.tracks.count == 1 ? "" : "s")"
        gtk_label_set_text(cast(raw(sessionLabel)), text)
        if let a = gtk_widget_get_accessible(sessionLabel) { atk_object_set_description(a, text) }
    }

    func openSession() {
        guard let path = Dialogs.chooseFile(parent: window, title: "Open Session", save: false, filter: Self.sessionFilter, accept: "_Open") else { return }
        // The loops go back onto the Looper only when it holds none (a player's loops are never
        // overwritten) and it may be used.
        let empty = control.cycle == 0 && (0..<LooperControl.trackCount).allSatisfy { control.track($0).length == 0 && control.track($0).state == .stopped }
        let why: String? = isLooperLocked() ? "the Looper is locked" : empty ? nil : "the Looper holds loops: clear it and open again to take them"
        let rate = Int(engine.chain.sampleRate)
        let running = engine.status().state == .running
        runJob("Opening \(URL(fileURLWithPath: path).lastPathComponent)…", { [unowned self] () throws -> (Session, SessionLoops?, LoopLoadOutcome?) in
            let opened = try Session.open(path)
            guard why == nil, let loops = try opened.loopsForLooper(rate: rate, maximumLength: Int(Looper.minimumCapacity * Double(rate))) else {
                return (opened, nil, nil)
            }
            // The Looper runs only while it is on.
            store.set(.looperEnabled, 1)
            let outcome = engine.chain.loadLoops(loops.loops, cycle: loops.cycle, audioRunning: running)
            if outcome == .loaded {
                for (i, track) in loops.tracks.enumerated() {
                    store.set(.looperTrackGain(i), Float(track.gainDB))
                    store.set(.looperTrackPan(i), Float(track.pan))
                    store.set(.looperTrackMute(i), track.mute ? 1 : 0)
                }
            }
            return (opened, loops, outcome)
        }) { [unowned self] result in
            switch result {
            case .success(let (opened, loops, outcome)):
                let (message, muted) = adoptLoops(opened, loops, outcome, why: why)
                show(opened, unsaved: muted)
                say(message)
            case .failure(let error):
                // The session shown before stays as it was.
                say(Self.describe(error), error: true)
            }
        }
    }

    /// Shows `opened` as the panel's session, as read from (or just written to) its file.
    func show(_ opened: Session, unsaved: Bool = false) {
        session = opened
        sessionHasFile = true
        self.unsaved = unsaved
        showSession()
    }

    /// Takes in what became of an opened session's loop tracks: those the Looper took are muted
    /// in the session's mix from now on, as the Looper plays them (a take's wet track will hold
    /// them), and where they started is kept for Save (`loopOrigin`). Returns what to tell the
    /// player, and whether the session's mix changed.
    private func adoptLoops(_ opened: Session, _ loops: SessionLoops?, _ outcome: LoopLoadOutcome?,
                            why: String?) -> (message: String?, muted: Bool) {
        loopOrigin = nil
        let count = opened.manifest.tracks.filter { $0.kind == .loop }.count
        guard count > 0 else { return (nil, false) }
        let plural = { (n: Int) in "\(n) loop track\(n == 1 ? "" : "s")" }
        guard let loops, let outcome else {
            let reason = why ?? (opened.manifest.sampleRate != Int(engine.chain.sampleRate)
                ? "the session is at \(opened.manifest.sampleRate) Hz and the audio at \(Int(engine.chain.sampleRate)) Hz"
                : "none fits the Looper")
            return ("\(plural(count)) shown as session tracks (\(reason)).", false)
        }
        switch outcome {
        case .loaded:
            for track in loops.tracks { try? opened.setMix(of: track.id, gainDB: track.gainDB, pan: track.pan, mute: true) }
            loopOrigin = (clock: control.loadClock, frame: loops.origin, cycle: loops.cycle)
            var text = "\(plural(loops.tracks.count)) back in the Looper, in step (muted in the session's mix: the Looper plays them)."
            if !loops.left.isEmpty { text += " Left as session tracks: " + loops.left.map { "\($0.id) (\($0.reason))" }.joined(separator: ", ") + "." }
            return (text, !loops.tracks.isEmpty)
        case .busy: return ("\(plural(count)) shown as session tracks (the Looper started a loop meanwhile).", false)
        case .invalid(let reason): return ("\(plural(count)) shown as session tracks (\(reason)).", false)
        case .timedOut: return ("\(plural(count)) shown as session tracks (the Looper did not take them: is the audio running?).", false)
        }
    }

    static func describe(_ error: any Error) -> String {
        (error as? PanelMessage)?.text ?? (error as? SessionError)?.description ?? (error as? AudioFileError)?.description ?? "\(error)"
    }

    /// Save (to the file the session came from; without one, as Save as…) or Save as…; `then`
    /// runs once it is saved.
    func saveSession(asNew: Bool, then: (() -> Void)? = nil) {
        var target = sessionHasFile && !asNew ? session?.path : nil
        if target == nil {
            let suggested = session.map { URL(fileURLWithPath: $0.path).lastPathComponent } ?? "Session.stompsession"
            guard var path = Dialogs.chooseFile(parent: window, title: "Save Session", save: true, suggestedName: suggested,
                                                filter: Self.sessionFilter, accept: "_Save") else { return }
            if !path.hasSuffix(".stompsession") { path += ".stompsession" }
            target = path
        }
        guard let target else { return }
        let opened = session
        runJob("Saving \(URL(fileURLWithPath: target).lastPathComponent)…", { [unowned self] () throws -> (Session, Int) in
            let session = try opened ?? newSession(at: target)
            let added = try addLoopTracks(to: session)
            // The Looper keeps its loops: they go into the file, not into the tracks shown below it.
            defer { for id in added { session.removeTrack(id) } }
            try session.save(to: target)
            return (session, added.count)
        }) { [unowned self] result in
            switch result {
            case .success(let (saved, fromLooper)):
                sessionHasFile = true
                session = saved
                unsaved = false
                let open = (0..<LooperControl.trackCount).filter { control.track($0).state == .recording }.map { "\($0 + 1)" }
                say("Saved \(URL(fileURLWithPath: target).lastPathComponent): \(saved.manifest.tracks.count) tracks, \(fromLooper) from the Looper."
                    + (open.isEmpty ? "" : " Loop track \(open.joined(separator: ", ")) was still recording its first pass and is not in it."))
                showSessionLabel()
                then?()
            case .failure(let error):
                say(Self.describe(error), error: true)
                showSessionLabel()
            }
        }
    }

    /// Each Looper track that holds a loop, as a `loop` track of `session` (its mix from the
    /// `looper.trackN_*` parameters), and the Looper's cycle as `cycle_frames`. Returns their ids.
    private func addLoopTracks(to session: Session) throws(SessionError) -> [String] {
        let rate = Int(engine.chain.sampleRate)
        var added: [String] = []
        let cycle = control.cycle
        // Where the loops go in the session: loaded ones keep their place (and new ones are put
        // in time with them); otherwise the earliest starts at frame 0.
        let saving = (0..<LooperControl.trackCount).filter { control.track($0).length > 0 && control.track($0).state != .recording }
        let copies = saving.map { loopAudio($0) }
        let origin: (clock: Int, frame: Int)
        if let loaded = loopOrigin, loaded.cycle == Int((Double(cycle) * Double(session.manifest.sampleRate) / Double(rate)).rounded()) {
            origin = (loaded.clock, loaded.frame)
        } else {
            origin = (copies.compactMap { $0?.start }.min() ?? 0, 0)
        }
        // A wet track plays what the Looper played while it was recorded: its loops are muted in
        // the mix, so they are not heard twice.
        let heldByWet = session.manifest.tracks.contains { $0.kind == .wet }
        // A first pass still being recorded has no loop yet: it is left out (the message says so).
        for (track, copy) in zip(saving, copies) {
            guard let loop = copy else {
                for id in added { session.removeTrack(id) }
                throw SessionError(path: session.path, .invalid("loop track \(track + 1)'s audio could not be copied (is the audio running?)"))
            }
            let audio = loop.isStereo
                ? AudioBuffer(samples: zip(loop.left, loop.right).flatMap { [$0, $1] }, sampleRate: rate, channels: 2)
                : AudioBuffer(samples: loop.left, sampleRate: rate, channels: 1)
            let scale = Double(session.manifest.sampleRate) / Double(rate)
            var start = loop.start - origin.clock
            // Begun before the loops it is in time with: its first whole pass after them.
            if start < 0 { start = (start % loop.length + loop.length) % loop.length }
            // A loop the file holds already (saved before, or taken back in from it) is not
            // added again: the same samples, however they were encoded.
            if session.manifest.sampleRate == rate, session.manifest.tracks.contains(where: { held in
                held.kind == .loop && held.frames == audio.frames && held.channels == audio.channels
                    && (try? session.audio(of: held.id))?.samples == audio.samples
            }) { continue }
            let gain = Double(store.load(.looperTrackGain(track)))
            let added1: SessionTrack
            do throws(SessionError) {
                added1 = try session.addTrack(audio, kind: .loop, author: Self.author, start: origin.frame + Int((Double(start) * scale).rounded()),
                                              gainDB: gain.isFinite ? gain : 0, pan: Double(store.load(.looperTrackPan(track))),
                                              mute: heldByWet || store.isOn(.looperTrackMute(track)))
            } catch {
                for id in added { session.removeTrack(id) }
                throw error
            }
            // A loop the file holds already (saved before, the same audio) is not added twice.
            if session.manifest.tracks.contains(where: { $0.id != added1.id && $0.kind == .loop && $0.sha256 == added1.sha256 }) {
                session.removeTrack(added1.id)
                continue
            }
            added.append(added1.id)
        }
        if cycle > 0 { session.cycleFrames = Int((Double(cycle) * Double(session.manifest.sampleRate) / Double(rate)).rounded()) }
        return added
    }

    /// A track's audio: copied by the audio thread while audio runs, read directly when not.
    func loopAudio(_ track: Int) -> LoopTrackAudio? {
        if let copy = control.copyTrack(track, timeout: .seconds(2)) { return copy }
        return engine.status().state == .running ? nil : engine.chain.looperTrackAudio(track)
    }

    /// An empty session at the engine's rate and the board's tempo.
    private func newSession(at path: String) throws(SessionError) -> Session {
        try Session(path: path, sampleRate: Int(engine.chain.sampleRate), tempoBPM: Double(store.load(.tempo)))
    }

    func addAudioFile() {
        guard let path = Dialogs.chooseFile(parent: window, title: "Add Audio File", save: false, filter: Self.audioFilter, accept: "_Add") else { return }
        let name = URL(fileURLWithPath: path).lastPathComponent
        let opened = session
        runJob("Adding \(name)…", { [unowned self] () throws -> (Session, SessionTrack) in
            let audio: AudioBuffer
            do throws(AudioFileError) { audio = try AudioFileReader(path: path).readAll() } catch {
                throw PanelMessage(text: "\(name) cannot be added: \(error.description)")
            }
            let session = try opened ?? newSession(at: FileManager.default.currentDirectoryPath + "/Session.stompsession")
            return (session, try session.addTrack(audio, kind: .import, author: Self.author))
        }) { [unowned self] result in
            switch result {
            case .success(let (added, track)):
                session = added
                unsaved = true
                say("Added \(name) as \(track.id).")
                showSession()
            case .failure(let error):
                say(Self.describe(error), error: true)
            }
        }
    }

    /// The state file's `tracks` (tests read it): each row's words and the panel's message.
    var state: [String: Any] {
        [
            "loops": loopRows.map { ["track": $0.track + 1, "state": $0.summary, "peaks": $0.face.peaks.count] as [String: Any] },
            "session": sessionRows.map { ["id": $0.id, "summary": $0.summary, "peaks": $0.face.peaks.count] as [String: Any] },
            "session_path": sessionHasFile ? session?.path ?? "" : "",
            "message": String(cString: gtk_label_get_text(cast(raw(messageLabel)))),
            "recording": gtk_toggle_button_get_active(cast(raw(recordButton))) != 0,
        ]
    }

    /// Where the panel's controls are (root pixels) for tests that aim clicks and touches.
    var layout: [String: Any] {
        var result: [String: Any] = [
            "record": rootCentre(recordButton), "open": rootCentre(openButton), "save": rootCentre(saveButton),
            "save_as": rootCentre(saveAsButton), "add": rootCentre(addButton),
            "panel": rootPoint(widget, 0, 0) + [Int(gtk_widget_get_allocated_width(widget)), Int(gtk_widget_get_allocated_height(widget))],
        ]
        for row in loopRows {
            result["loop\(row.track + 1)"] = rootCentre(row.face.widget)
            result["loop\(row.track + 1)_gain"] = rootCentre(row.mix.gain)
        }
        return result
    }
}
