import CLilv
import CLV2Host
import Foundation
import StompboxDSP
import Synchronization

/// An installed LV2 plugin as a pedal.
///
/// - **Stereo board**: a plugin with two audio inputs or outputs plays in stereo (left and right
///   into its first two inputs, its first two outputs out; one input gets the middle of the two
///   sides, one output feeds both). A mono plugin plays the middle of the sides on both.
/// - **Mono board**: the mono block feeds every audio input (so mono and stereo plugins both work),
///   and the pedal's output is the plugin's *first* audio output. Not the mean of two: fed the
///   same signal on both sides, a stereo effect's channels often differ only in phase (a
///   chorus or a ping-pong delay moves them in opposition), and their mean would comb-filter or
///   cancel the very effect; a decorrelated reverb's mean would also lose about 3 dB. The first
///   output is exactly the plugin's own signal, and the channel a reference host writes first.
/// - **Controls**: one `Atomic<Float>` per control input port, written from any thread by
///   `setControl` (clamped to the port's range) and read by `process` once per block.
/// - **Threads**: built and prepared off the audio thread; `process` and `reset` are audio-
///   thread safe (no allocation, lock, log or reference counting). Work the plugin schedules
///   (LV2 worker) runs on the pedal's own host thread and its responses reach the plugin right
///   after its `run` on the audio thread.
/// - **Reset**: LV2 clears a plugin's state only through deactivate/activate, which may not be
///   called on the audio thread (they are in LV2's Instantiation threading class, and may
///   allocate). So `reset()` pauses the plugin and asks the host thread to do it; while paused
///   (normally well under a block), `process` leaves its block as it came in (dry). This is
///   how the chain's NaN recovery works for LV2 pedals: the chain puts the dry block in place of
///   the NaN one and calls `reset()`; the next blocks are dry until the instance is clean again.
///
/// As a pedal on the board (`PedalKind.lv2`), its control values are the cells of its kind's
/// `PedalValues` (so knobs, presets and `--set` reach the plugin), and it reports its latency there.
public final class LV2Pedal: StatefulEffect, StereoEffect, @unchecked Sendable {
    /// The plugin, as its data describes it.
    public let info: LV2PluginInfo
    public let world: LV2World
    public var uri: String { info.uri }
    /// The rate and block limit the instance was made for.
    public private(set) var sampleRate: Double
    public private(set) var maximumBlockSize: Int
    /// Set when `prepare` had to make a new instance and the plugin refused; the pedal then
    /// passes its input through unchanged.
    public private(set) var lastError: LV2Error?

    private let layout: LV2PortLayout
    private let controlCount: Int
    private let values: UnsafeMutablePointer<Atomic<Float>>
    /// The kind's values holding `values` (nil: this pedal allocated them itself).
    private let pedalValues: PedalValues?
    /// Where the plugin's latency output is copied after each run (nil when it reports none).
    private let latencyCell: UnsafeMutablePointer<Atomic<Float>>?
    private let latencyOutput: Int?
    private let symbols: [String: Int]
    /// The sample rate's bits, for clamping rate-relative ports from any thread.
    private let clampRate: Atomic<UInt64>

    // The instance and the buffers connected to it (replaced only by `prepare`).
    private var instance: UnsafeMutablePointer<LilvInstance>?
    private var host: OpaquePointer?
    private var blockLimit = 0
    private var inputCount = 0
    private var outputCount = 0
    private var inputs = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var outputs = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    private var portValues = UnsafeMutablePointer<Float>.allocate(capacity: 1)
    /// Per control: whether it glides (continuous), where to, by how much a step.
    private let glides: UnsafeMutablePointer<Bool>
    private let byRatio: UnsafeMutablePointer<Bool>
    private let glideTarget: UnsafeMutablePointer<Float>
    private let glideStep: UnsafeMutablePointer<Float>
    /// Steps of a glide (50 ms at the instance's rate).
    private var glideSteps = 1
    /// The next block takes the control values as they are (a new instance).
    private var snapControls = true
    private var scratch = UnsafeMutablePointer<Float>.allocate(capacity: 1)

    /// Finds the plugin, checks that it can be hosted and makes a running instance at
    /// `sampleRate` for blocks of at most `maximumBlockSize`. Not on the audio thread.
    /// With `values`, its controls are that object's cells after its switch, in port order (a
    /// plugin pedal's kind made them from the same plugin).
    public init(uri: String, sampleRate: Double, maximumBlockSize: Int, world: LV2World = .shared,
                values external: PedalValues? = nil) throws(LV2Error) {
        precondition(sampleRate > 0 && maximumBlockSize > 0)
        let (info, layout) = try world.withPlugin(uri: uri) { _, info, layout throws(LV2Error) in (info, layout) }
        guard info.canHost else { throw .cannotHost(uri: info.uri, reasons: info.problems) }
        self.info = info
        self.world = world
        self.layout = layout
        self.sampleRate = sampleRate
        self.maximumBlockSize = maximumBlockSize
        controlCount = info.controls.count
        pedalValues = external
        if let external {
            precondition(external.specs.count == controlCount + 1, "values of another plugin")
            values = external.cell(at: 0) + 1
            latencyCell = external.latencyCell
        } else {
            values = .allocate(capacity: max(1, controlCount))
            for (i, control) in info.controls.enumerated() {
                (values + i).initialize(to: Atomic(control.defaultValue(sampleRate: sampleRate)))
            }
            latencyCell = nil
        }
        latencyOutput = layout.latencyOutput
        glides = .allocate(capacity: max(1, controlCount))
        glideTarget = .allocate(capacity: max(1, controlCount))
        glideStep = .allocate(capacity: max(1, controlCount))
        byRatio = .allocate(capacity: max(1, controlCount))
        for (i, control) in info.controls.enumerated() {
            (glides + i).initialize(to: !(control.isToggle || control.isInteger || control.isEnumeration))
            (byRatio + i).initialize(to: control.isLogarithmic && control.minimum > 0)
        }
        glideTarget.initialize(repeating: 0, count: max(1, controlCount))
        glideStep.initialize(repeating: 0, count: max(1, controlCount))
        symbols = Dictionary(info.controls.enumerated().map { ($1.symbol, $0) }) { first, _ in first }
        clampRate = Atomic(sampleRate.bitPattern)
        // On failure deinit frees what was made (every stored property is set by now).
        try build(sampleRate: sampleRate, maximumBlockSize: maximumBlockSize)
    }

    deinit {
        tearDown()
        freeBuffers()
        if pedalValues == nil {
            values.deinitialize(count: controlCount)
            values.deallocate()
        }
        glides.deallocate()
        byRatio.deallocate()
        glideTarget.deallocate()
        glideStep.deallocate()
    }

    // MARK: AudioEffect

    /// Makes a new instance when the rate changes or blocks grow beyond the instance's limit
    /// (its state and control values carried over); otherwise keeps the running one.
    /// Not on the audio thread, and not while `process` may run.
    public func prepare(sampleRate: Double, maximumBlockSize: Int) {
        precondition(sampleRate > 0 && maximumBlockSize > 0)
        if host != nil, sampleRate == self.sampleRate, maximumBlockSize <= blockLimit {
            self.maximumBlockSize = maximumBlockSize
            return
        }
        let saved = host != nil ? try? saveState() : nil
        tearDown()
        self.sampleRate = sampleRate
        self.maximumBlockSize = maximumBlockSize
        clampRate.store(sampleRate.bitPattern, ordering: .relaxed)
        for (i, control) in info.controls.enumerated() {
            values[i].store(control.clamp(values[i].load(ordering: .relaxed), sampleRate: sampleRate), ordering: .relaxed)
        }
        do {
            try build(sampleRate: sampleRate, maximumBlockSize: maximumBlockSize)
            lastError = nil
            if let saved { try? restoreState(saved) }
        } catch {
            lastError = error
        }
    }

    /// Audio-thread safe: pauses the plugin and has the host thread deactivate and activate it
    /// (see the type's notes). Does nothing if it has not run since it was last activated.
    public func reset() {
        if let host { clv2_host_request_reset(host) }
    }

    /// Runs the plugin over `block` in place, in pieces of at most the instance's block limit.
    /// Audio thread: reads the controls once, copies, runs; nothing is allocated or locked.
    ///
    /// A continuous control that changes (not a toggle, whole number or enumeration) glides to
    /// its new value over 50 ms, in steps of 32 frames, the plugin run once per step: most
    /// plugins take a control as it comes, and a knob jumped end to end would click. The first
    /// block after the instance is made takes the values as they are (as a reference host does).
    public func process(_ block: UnsafeMutableBufferPointer<Float>) {
        guard let base = block.baseAddress else { return }
        run(base, nil, block.count)
    }

    /// Two audio inputs or outputs: the plugin has sides of its own.
    public var playsInStereo: Bool { layout.audioInputs.count >= 2 || layout.audioOutputs.count >= 2 }

    /// A stereo board's block (see the type's notes). Audio thread.
    public func process(left: UnsafeMutableBufferPointer<Float>, right: UnsafeMutableBufferPointer<Float>) {
        guard let l = left.baseAddress, let r = right.baseAddress else { return }
        run(l, r, left.count)
    }

    private func run(_ base: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>?, _ count: Int) {
        guard let host else { return }
        var ramping = false
        for i in 0..<controlCount {
            let target = values[i].load(ordering: .relaxed)
            if snapControls || !glides[i] {
                portValues[i] = target
                glideTarget[i] = target
                continue
            }
            if target != glideTarget[i] {
                glideTarget[i] = target
                // A logarithmic control glides by equal ratios (its step is a ratio), others by equal steps.
                glideStep[i] = byRatio[i] && portValues[i] > 0 && target > 0
                    ? pow(target / portValues[i], 1 / Float(glideSteps))
                    : (target - portValues[i]) / Float(glideSteps)
            }
            ramping = ramping || portValues[i] != target
        }
        snapControls = false
        let stride = blockLimit
        var offset = 0
        while offset < count {
            if ramping { ramping = advanceGlides() }
            let frames = min(ramping ? min(stride, LV2Pedal.glideFrames) : stride, count - offset)
            for input in 0..<inputCount {
                let into = inputs + input * stride
                if let right {
                    if inputCount == 1 {
                        for k in 0..<frames { into[k] = 0.5 * (base[offset + k] + right[offset + k]) }
                    } else {
                        into.update(from: (input & 1 == 0 ? base : right) + offset, count: frames)
                    }
                } else {
                    into.update(from: base + offset, count: frames)
                }
            }
            // Paused (a reset or restore under way): the rest of the block stays dry.
            if clv2_host_run(host, UInt32(frames)) == 0 { return }
            (base + offset).update(from: outputs, count: frames)
            if let right { (right + offset).update(from: outputs + (outputCount >= 2 ? stride : 0), count: frames) }
            offset += frames
        }
        if let latencyCell, let latencyOutput { latencyCell.pointee.store(scratch[latencyOutput], ordering: .relaxed) }
    }

    /// Frames per step of a gliding control.
    private static let glideFrames = 32

    /// Moves each gliding control one step; true while any has not arrived.
    private func advanceGlides() -> Bool {
        var moving = false
        for i in 0..<controlCount where glides[i] && portValues[i] != glideTarget[i] {
            let target = glideTarget[i], current = portValues[i]
            let next = byRatio[i] && current > 0 && target > 0 ? current * glideStep[i] : current + glideStep[i]
            portValues[i] = (current < target && next < target) || (current > target && next > target) ? next : target
            moving = moving || portValues[i] != target
        }
        return moving
    }

    // MARK: Controls

    /// Sets a control input port by symbol, clamped to its range. Any thread.
    public func setControl(symbol: String, value: Float) throws(LV2Error) {
        guard let i = symbols[symbol] else { throw .unknownControl(uri: info.uri, symbol: symbol) }
        setControl(at: i, value: value)
    }

    /// The current value of a control input port, or nil for an unknown symbol. Any thread.
    public func control(symbol: String) -> Float? {
        symbols[symbol].map { values[$0].load(ordering: .relaxed) }
    }

    /// Every control input's value by symbol.
    public var controlValues: [String: Float] {
        Dictionary(uniqueKeysWithValues: info.controls.enumerated().map { ($1.symbol, values[$0].load(ordering: .relaxed)) })
    }

    private func setControl(at i: Int, value: Float) {
        let rate = Double(bitPattern: clampRate.load(ordering: .relaxed))
        values[i].store(info.controls[i].clamp(value, sampleRate: rate), ordering: .relaxed)
    }

    // MARK: State

    /// The plugin's state: every control value and, through the LV2 state interface when the
    /// plugin has one, its other properties. Not on the audio thread (it may run alongside
    /// `process`, which LV2 allows for save).
    public func saveState() throws(LV2Error) -> LV2PedalState {
        var state = LV2PedalState(uri: info.uri, controls: controlValues, properties: [:])
        guard let host, clv2_host_has_state(host) != 0, let properties = clv2_state_new() else { return state }
        defer { clv2_state_free(properties) }
        let status = clv2_host_save(host, properties)
        guard status == 0 else { throw .stateFailed(uri: info.uri, operation: "save", status: Int(status)) }
        for i in 0..<clv2_state_count(properties) {
            guard let key = clv2_urid_unmap(clv2_state_key(properties, i)),
                  let type = clv2_urid_unmap(clv2_state_type(properties, i)) else { continue }
            let size = clv2_state_size(properties, i)
            let bytes = size > 0 ? Data(bytes: clv2_state_value(properties, i)!, count: size) : Data()
            state.properties[String(cString: key)] = LV2StateProperty(
                type: String(cString: type), flags: clv2_state_flags(properties, i), value: bytes)
        }
        return state
    }

    /// Sets the controls of `state` (symbols this plugin no longer has are ignored) and restores
    /// its properties through the plugin's state interface. Not on the audio thread; the plugin
    /// is paused (dry) while it restores, as LV2 requires.
    public func restoreState(_ state: LV2PedalState) throws(LV2Error) {
        guard state.uri == info.uri else { throw .stateOfAnotherPlugin(uri: info.uri, stateURI: state.uri) }
        for (symbol, value) in state.controls {
            if let i = symbols[symbol] { setControl(at: i, value: value) }
        }
        guard !state.properties.isEmpty, let host, clv2_host_has_state(host) != 0,
              let properties = clv2_state_new() else { return }
        defer { clv2_state_free(properties) }
        for (key, property) in state.properties {
            let stored = property.value.withUnsafeBytes { bytes in
                clv2_state_set(properties, clv2_urid_map(key), clv2_urid_map(property.type), property.flags,
                               bytes.baseAddress, bytes.count)
            }
            guard stored == 0 else { throw .stateFailed(uri: info.uri, operation: "restore", status: -1) }
        }
        let status = clv2_host_restore(host, properties)
        guard status == 0 else { throw .stateFailed(uri: info.uri, operation: "restore", status: Int(status)) }
    }

    /// `saveState()` as JSON text (its property values in base64), for a preset. Not on the audio thread.
    public func stateJSON() -> String? {
        guard let state = try? saveState(), let data = try? JSONEncoder().encode(state) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Restores the plugin's own properties from a state `stateJSON()` wrote; its controls stay
    /// as they are (a pedal's control values live in its parameters). Not on the audio thread.
    public func restoreProperties(json: String) throws(LV2Error) {
        guard var state = try? JSONDecoder().decode(LV2PedalState.self, from: Data(json.utf8)) else {
            throw .stateFailed(uri: info.uri, operation: "restore (the saved state is not readable)", status: -1)
        }
        state.controls = [:]
        try restoreState(state)
    }

    // MARK: Diagnostics (tests)

    /// True while the plugin is paused by a reset or restore that is not finished yet.
    public var isPaused: Bool { host.map { clv2_host_is_paused($0) != 0 } ?? false }
    /// Waits (off the audio thread) until a pending reset is done; false on timeout.
    public func waitUntilRunning(timeout: Double = 2) -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while isPaused {
            if Date() > end { return false }
            usleep(200)
        }
        return true
    }
    /// How many times the plugin's work ran, its responses were delivered, and resets were done.
    public var workCount: UInt64 { host.map { clv2_host_work_count($0) } ?? 0 }
    public var responseCount: UInt64 { host.map { clv2_host_response_count($0) } ?? 0 }
    public var resetCount: UInt64 { host.map { clv2_host_reset_count($0) } ?? 0 }

    // MARK: Building and tearing down

    private func build(sampleRate: Double, maximumBlockSize: Int) throws(LV2Error) {
        let uri = info.uri
        let limit = maximumBlockSize
        let layout = self.layout
        let (instance, host) = try world.withPlugin(uri: uri) { plugin, _, _ throws(LV2Error) in
            guard let host = clv2_host_new(sampleRate, UInt32(limit)) else { throw LV2Error.instantiationFailed(uri: uri) }
            let features = UnsafeRawPointer(clv2_host_features(host)!)
                .assumingMemoryBound(to: Optional<UnsafePointer<LV2_Feature>>.self)
            guard let instance = lilv_plugin_instantiate(plugin, sampleRate, features) else {
                clv2_host_free(host)
                throw LV2Error.instantiationFailed(uri: uri)
            }
            return (instance, host)
        }
        clv2_host_attach(host, UnsafeRawPointer(instance.pointee.lv2_descriptor), instance.pointee.lv2_handle)

        freeBuffers()
        blockLimit = limit
        glideSteps = max(1, Int((0.05 * sampleRate / Double(LV2Pedal.glideFrames)).rounded()))
        snapControls = true
        inputCount = layout.audioInputs.count
        outputCount = layout.audioOutputs.count
        inputs = .allocate(capacity: max(1, inputCount * limit))
        inputs.initialize(repeating: 0, count: max(1, inputCount * limit))
        outputs = .allocate(capacity: max(1, layout.audioOutputs.count * limit))
        outputs.initialize(repeating: 0, count: max(1, layout.audioOutputs.count * limit))
        portValues = .allocate(capacity: max(1, controlCount))
        portValues.initialize(repeating: 0, count: max(1, controlCount))
        // Control outputs (one value each), then CV inputs and outputs (a block each).
        let cvCount = layout.cvInputs.count + layout.cvOutputs.count
        let scratchCount = max(1, layout.controlOutputs.count + cvCount * limit)
        scratch = .allocate(capacity: scratchCount)
        scratch.initialize(repeating: 0, count: scratchCount)

        for (k, port) in layout.audioInputs.enumerated() { clv2_host_connect(host, port, inputs + k * limit) }
        for (k, port) in layout.audioOutputs.enumerated() { clv2_host_connect(host, port, outputs + k * limit) }
        for (k, port) in layout.controlInputs.enumerated() {
            portValues[k] = values[k].load(ordering: .relaxed)
            clv2_host_connect(host, port, portValues + k)
        }
        for (k, port) in layout.controlOutputs.enumerated() { clv2_host_connect(host, port, scratch + k) }
        var cv = scratch + layout.controlOutputs.count
        for (port, value) in layout.cvInputs {
            cv.update(repeating: value, count: limit)
            clv2_host_connect(host, port, cv)
            cv += limit
        }
        for port in layout.cvOutputs {
            clv2_host_connect(host, port, cv)
            cv += limit
        }
        var atomsConnected = true
        for port in layout.atomInputs { atomsConnected = atomsConnected && clv2_host_connect_atom(host, port, 1) == 0 }
        for port in layout.atomOutputs { atomsConnected = atomsConnected && clv2_host_connect_atom(host, port, 0) == 0 }
        for port in layout.unconnected { clv2_host_connect(host, port, nil) }
        self.instance = instance
        self.host = host
        guard atomsConnected else {
            tearDown()
            throw .cannotHost(uri: uri, reasons: ["it has more atom ports than Stompbox connects (16)"])
        }
        clv2_host_activate(host)
    }

    private func tearDown() {
        if let host { clv2_host_free(host) } // stops the host thread, deactivates
        if let instance { world.free(instance) }
        host = nil
        instance = nil
    }

    private func freeBuffers() {
        inputs.deallocate()
        outputs.deallocate()
        portValues.deallocate()
        scratch.deallocate()
        inputs = .allocate(capacity: 1)
        outputs = .allocate(capacity: 1)
        portValues = .allocate(capacity: 1)
        scratch = .allocate(capacity: 1)
    }
}

/// A pedal's saved state: its control values and the plugin's own state properties. Codable,
/// so a preset can store it as JSON (property values are base64 there).
public struct LV2PedalState: Codable, Equatable, Sendable {
    public var uri: String
    /// Control input values by port symbol.
    public var controls: [String: Float]
    /// The plugin's state properties by key URI (empty for a plugin without a state interface).
    public var properties: [String: LV2StateProperty]

    public init(uri: String, controls: [String: Float], properties: [String: LV2StateProperty] = [:]) {
        self.uri = uri
        self.controls = controls
        self.properties = properties
    }
}

/// One state property: its value's bytes as the plugin stored them, with its type's URI
/// (atom:Float, atom:String, atom:Path …) and LV2 state flags (1 = POD, 2 = portable).
public struct LV2StateProperty: Codable, Equatable, Sendable {
    public var type: String
    public var flags: UInt32
    public var value: Data

    public init(type: String, flags: UInt32, value: Data) {
        self.type = type
        self.flags = flags
        self.value = value
    }
}
