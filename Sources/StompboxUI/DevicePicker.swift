import CGtk
import Foundation
import StompboxAudio
import Synchronization

/// The "Audio…" button in the status bar and its popover: the server (PulseAudio, JACK, or
/// automatic), input (a PulseAudio source or JACK port, the default one or the demo riff), the
/// input channel carrying the guitar, the output sink (or JACK port), the block size, the
/// playback margin and automatic latency (PulseAudio only: on JACK the period is the server's),
/// and whether JACK's ports are connected automatically. Apply hands the settings to
/// `LiveEngine.apply`. The device list is fetched on a thread of its own (a server that does
/// not answer must not freeze the window) and shown when it arrives.
final class DevicePicker {
    let engine: LiveEngine
    let button: UnsafeMutablePointer<GtkWidget>
    private let popover: UnsafeMutablePointer<GtkWidget>
    private let server: UnsafeMutablePointer<GtkWidget>
    private let connectPorts: UnsafeMutablePointer<GtkWidget>
    private let input: UnsafeMutablePointer<GtkWidget>
    private let channel: UnsafeMutablePointer<GtkWidget>
    private let output: UnsafeMutablePointer<GtkWidget>
    private let blockSize: UnsafeMutablePointer<GtkWidget>
    private let latency: UnsafeMutablePointer<GtkWidget>
    private let autoLatency: UnsafeMutablePointer<GtkWidget>
    private let note: UnsafeMutablePointer<GtkWidget>
    /// A device list fetched off the GUI thread, waiting to be shown.
    private final class Fetched: @unchecked Sendable {
        let result = Mutex<Result<Listing, Error>?>(nil)
    }
    /// Devices (or JACK ports: `jack`) as listed.
    private struct Listing { var sources: [AudioDevice]; var sinks: [AudioDevice]; var jack: Bool }
    private let fetched = Fetched()
    private var fetching = false
    static let blockSizes = [64, 128, 256, 512, 1024]

    init(engine: LiveEngine) {
        self.engine = engine
        button = gtk_menu_button_new()
        gtk_button_set_label(cast(raw(button)), "Audio…")
        addClass(button, "device-button")
        setAccessible(button, name: "Audio devices")
        popover = gtk_popover_new(button)
        gtk_menu_button_set_popover(cast(raw(button)), popover)

        let grid = gtk_grid_new()!
        gtk_grid_set_row_spacing(cast(raw(grid)), 8)
        gtk_grid_set_column_spacing(cast(raw(grid)), 10)
        gtk_container_set_border_width(cast(raw(grid)), 12)
        server = gtk_combo_box_text_new()
        for (id, title) in [("pulse", "PulseAudio"), ("jack", "JACK (inside the graph's cycle)"), ("auto", "JACK when a JACK server runs, else PulseAudio")] {
            gtk_combo_box_text_append(cast(raw(server)), id, title)
        }
        connectPorts = gtk_check_button_new_with_label("Connect the ports (off: wire them in your patchbay)")
        input = gtk_combo_box_text_new()
        channel = gtk_spin_button_new_with_range(1, 32, 1)
        output = gtk_combo_box_text_new()
        blockSize = gtk_combo_box_text_new()
        latency = gtk_spin_button_new_with_range(1, 200, 1)
        autoLatency = gtk_check_button_new_with_label("Raise the latency when dropouts keep happening (up to 40 ms)")
        note = gtk_label_new("")
        for size in DevicePicker.blockSizes {
            gtk_combo_box_text_append(cast(raw(blockSize)), String(size), "\(size) frames")
        }
        let rows: [(String, UnsafeMutablePointer<GtkWidget>)] = [
            ("Server", server), ("Input", input), ("Input channel", channel), ("Output", output), ("JACK ports", connectPorts),
            ("Block size", blockSize), ("Latency (ms)", latency), ("Automatic latency", autoLatency),
        ]
        for (i, (title, widget)) in rows.enumerated() {
            let label = gtk_label_new(title)!
            gtk_label_set_xalign(cast(raw(label)), 1)
            gtk_label_set_mnemonic_widget(cast(raw(label)), widget)
            setAccessible(widget, name: title)
            gtk_grid_attach(cast(raw(grid)), label, 0, Int32(i), 1, 1)
            gtk_grid_attach(cast(raw(grid)), widget, 1, Int32(i), 1, 1)
            gtk_widget_set_hexpand(widget, 1)
        }
        gtk_label_set_line_wrap(cast(raw(note)), 1)
        gtk_label_set_max_width_chars(cast(raw(note)), 40)
        gtk_grid_attach(cast(raw(grid)), note, 0, Int32(rows.count), 2, 1)
        let reset = gtk_button_new_with_label("Reset latency")!
        setAccessible(reset, name: "Reset latency", description: "Back to the latency set here, forgetting what automatic latency raised it to")
        gtk_grid_attach(cast(raw(grid)), reset, 0, Int32(rows.count + 1), 1, 1)
        let apply = gtk_button_new_with_label("Apply")!
        applyButton = apply
        addClass(apply, "suggested-action")
        gtk_grid_attach(cast(raw(grid)), apply, 1, Int32(rows.count + 1), 1, 1)
        gtk_widget_show_all(grid)
        gtk_container_add(cast(raw(popover)), grid)

        onSignal(raw(apply), "clicked") { [unowned self] in
            engine.apply(chosenSettings())
            gtk_popover_popdown(cast(raw(popover)))
        }
        onSignal(raw(reset), "clicked") { [unowned self] in
            engine.resetAutoLatency()
        }
        onSignal(raw(button), "toggled") { [unowned self] in
            if gtk_toggle_button_get_active(cast(raw(button))) != 0 {
                gtk_combo_box_set_active_id(cast(raw(server)), engine.settings.backend.rawValue)
                fetchDevices()
            }
        }
        // Another server: its devices (or ports), and the rows that apply to it.
        onSignal(raw(server), "changed") { [unowned self] in
            guard gtk_widget_get_visible(popover) != 0 else { return }
            fetchDevices()
        }
        gtk_combo_box_set_active_id(cast(raw(server)), engine.settings.backend.rawValue)
        refresh(sources: [], sinks: [])
    }

    /// The server chosen in the popover.
    private var chosenBackend: LiveBackend { activeID(server).flatMap(LiveBackend.init(rawValue:)) ?? engine.settings.backend }

    /// Whether the popover's lists are JACK's (the backend chosen, or `auto` with JACK running).
    private var listsJack = false
    /// The entries of the input and output lists, by id (for the tests' layout).
    private var inputIDs: [String] = []
    private var outputIDs: [String] = []
    private var applyButton: UnsafeMutablePointer<GtkWidget>?

    /// The button, the popover's controls and what it lists, for tests (the window's layout).
    var layout: [String: Any] {
        var result: [String: Any] = ["button": rootCentre(button)]
        let open = gtk_widget_get_visible(popover) != 0 && gtk_widget_get_mapped(popover) != 0
        result["open"] = open
        guard open else { return result }
        result["lists_jack"] = listsJack
        result["server"] = activeID(server) ?? ""
        result["inputs"] = inputIDs
        result["outputs"] = outputIDs
        result["input"] = activeID(input) ?? ""
        result["input_combo"] = rootCentre(input)
        if let applyButton { result["apply"] = rootCentre(applyButton) }
        result["sensitive"] = ["block": gtk_widget_get_sensitive(blockSize) != 0, "latency": gtk_widget_get_sensitive(latency) != 0,
                               "channel": gtk_widget_get_sensitive(channel) != 0, "connect": gtk_widget_get_sensitive(connectPorts) != 0]
        return result
    }

    /// Lists the devices on a thread of its own; the list is shown when it arrives.
    private func fetchDevices() {
        guard !fetching else { return }
        fetching = true
        gtk_label_set_text(cast(raw(note)), "Looking for devices…")
        let box = fetched
        let backend = chosenBackend
        Thread.detachNewThread {
            let result = Result { () throws -> Listing in
                let jack = backend == .jack || (backend == .auto && LiveBackend.jackServerAnswers())
                let list = try LiveEngine.devices(backend: jack ? .jack : .pulse)
                return Listing(sources: list.sources, sinks: list.sinks, jack: jack)
            }
            box.result.withLock { $0 = result }
        }
        addTimeout(milliseconds: 50) { [weak self] in
            guard let self else { return false }
            guard let result = fetched.result.withLock({ r -> Result<Listing, Error>? in
                defer { r = nil }
                return r
            }) else { return true }
            fetching = false
            switch result {
            case .success(let listing):
                listsJack = listing.jack
                gtk_label_set_text(cast(raw(note)), listing.sources.isEmpty && listing.sinks.isEmpty ? "No devices listed (is the server running?)" : "")
                refresh(sources: listing.sources, sinks: listing.sinks)
            case .failure(let error):
                listsJack = chosenBackend == .jack
                gtk_label_set_text(cast(raw(note)), "Cannot list devices: \(error)")
                refresh(sources: [], sinks: [])
            }
            return false
        }
    }

    /// One line for the status bar: what is playing into what.
    var summary: String {
        let s = engine.settings
        let source: String
        switch s.input {
        case .demo: source = "demo riff"
        case .defaultSource: source = "default input"
        case .source(let name): source = name
        }
        if engine.status().backend == .jack {
            // JACK's period is shown beside; ports are what the user wires.
            return s.connectPorts ? "\(source == "default input" ? "first capture port" : source) → \(s.output ?? "first playback ports")" : "ports left to your patchbay"
        }
        return "\(source) → \(s.output ?? "default output") · \(s.blockSize) frames"
    }

    /// Fills the popover from the current settings and the server's device list.
    private func refresh(sources: [AudioDevice], sinks: [AudioDevice]) {
        let s = engine.settings
        // Each list's entries go into the combo box and, by id, into `inputIDs`/`outputIDs`.
        func fill(_ combo: UnsafeMutablePointer<GtkWidget>, _ entries: [(id: String, title: String)]) -> [String] {
            let box: UnsafeMutablePointer<GtkComboBoxText> = cast(raw(combo))
            gtk_combo_box_text_remove_all(box)
            for entry in entries { gtk_combo_box_text_append(box, entry.id, entry.title) }
            return entries.map(\.id)
        }
        var inputs = [("demo", "Demo riff (no guitar needed)"), ("default", listsJack ? "First capture port" : "Default input")]
            + sources.map { ("source:" + $0.name, $0.description) }
        let inputID: String
        switch s.input {
        case .demo: inputID = "demo"
        case .defaultSource: inputID = "default"
        case .source(let name):
            inputID = "source:" + name
            if !sources.contains(where: { $0.name == name }) { inputs.append((inputID, name)) }
        }
        inputIDs = fill(input, inputs)
        gtk_combo_box_set_active_id(cast(raw(input)), inputID)

        var outputs = [("default", listsJack ? "First two playback ports" : "Default output")] + sinks.map { ("sink:" + $0.name, $0.description) }
        if let name = s.output, !sinks.contains(where: { $0.name == name }) { outputs.append(("sink:" + name, name)) }
        outputIDs = fill(output, outputs)
        gtk_combo_box_set_active_id(cast(raw(output)), s.output.map { "sink:" + $0 } ?? "default")

        gtk_spin_button_set_value(cast(raw(channel)), Double(s.inputChannel))
        gtk_combo_box_set_active_id(cast(raw(blockSize)), String(s.blockSize))
        gtk_spin_button_set_value(cast(raw(latency)), s.latencyMs)
        gtk_toggle_button_set_active(cast(raw(autoLatency)), s.autoLatency ? 1 : 0)
        gtk_toggle_button_set_active(cast(raw(connectPorts)), s.connectPorts ? 1 : 0)
        // On JACK the latency is the server's and a port is one channel; the block size is
        // jackd's period there, but on PipeWire's JACK it is the quantum Stompbox asks for.
        for widget in [channel, latency, autoLatency] { gtk_widget_set_sensitive(widget, listsJack ? 0 : 1) }
        gtk_widget_set_tooltip_text(blockSize, listsJack
            ? "With JACK: the quantum asked of PipeWire's graph; jackd runs at its own period (jack_bufsize)"
            : "Frames per block")
        gtk_widget_set_sensitive(connectPorts, chosenBackend == .pulse ? 0 : 1)
    }

    private func chosenSettings() -> LiveSettings {
        var s = engine.settings
        s.backend = chosenBackend
        s.connectPorts = gtk_toggle_button_get_active(cast(raw(connectPorts))) != 0
        let inputID = activeID(input) ?? "default"
        if inputID == "demo" { s.input = .demo }
        else if inputID.hasPrefix("source:") { s.input = .source(String(inputID.dropFirst(7))) }
        else { s.input = .defaultSource }
        let outputID = activeID(output) ?? "default"
        s.output = outputID.hasPrefix("sink:") ? String(outputID.dropFirst(5)) : nil
        s.inputChannel = Int(gtk_spin_button_get_value_as_int(cast(raw(channel))))
        s.blockSize = Int(activeID(blockSize) ?? "") ?? s.blockSize
        s.latencyMs = gtk_spin_button_get_value(cast(raw(latency)))
        s.autoLatency = gtk_toggle_button_get_active(cast(raw(autoLatency))) != 0
        return s
    }

    private func activeID(_ combo: UnsafeMutablePointer<GtkWidget>) -> String? {
        gtk_combo_box_get_active_id(cast(raw(combo))).map { String(cString: $0) }
    }
}
