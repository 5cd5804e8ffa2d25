import Foundation
import StompboxDSP

/// The three preset slots and which one is selected: the content of `presets.json` and of
/// `data/factory-presets.json`.
///
/// `{"format":"stompbox-presets","version":1,"selected":0,"slots":[{preset},{preset},{preset}]}`,
/// each slot in the single-preset form of `Preset`. Reading is strict, like `Preset`: a wrong
/// slot count, a bad `selected`, or any slot that is not a valid preset is an error naming it.
public struct PresetBank: Equatable, Sendable {
    public static let format = "stompbox-presets"
    public static let version = 1
    public static let slotCount = 3

    /// Always `slotCount` presets.
    public private(set) var slots: [Preset]
    /// 0-based index of the selected slot.
    public private(set) var selected: Int

    public init(slots: [Preset], selected: Int = 0) {
        precondition(slots.count == PresetBank.slotCount, "a bank holds \(PresetBank.slotCount) presets")
        precondition(slots.indices.contains(selected), "selected slot out of range")
        self.slots = slots
        self.selected = selected
    }

    public subscript(_ slot: Int) -> Preset {
        get { slots[slot] }
        set { slots[slot] = newValue }
    }

    public mutating func select(_ slot: Int) {
        precondition(slots.indices.contains(slot), "slot out of range")
        selected = slot
    }

    // MARK: JSON

    public var json: JSONValue {
        .object([
            "format": .string(PresetBank.format),
            "version": .number(Double(PresetBank.version)),
            "selected": .number(Double(selected)),
            "slots": .array(slots.map(\.json)),
        ])
    }

    public func jsonData() -> Data { json.serialized() }

    public init(jsonData data: Data) throws(PresetBankError) {
        let value: JSONValue
        do { value = try JSONValue.parse(data) } catch { throw .notJSON(error) }
        try self.init(json: value)
    }

    public init(json: JSONValue) throws(PresetBankError) {
        guard case .object(let top) = json else { throw .notAnObject }
        guard case .string(let format)? = top["format"] else { throw .missingField("format") }
        guard format == PresetBank.format else { throw .wrongFormat(found: format) }
        guard case .number(let version)? = top["version"] else { throw .missingField("version") }
        guard version == version.rounded(), version >= 1 else { throw .wrongType(field: "version", expected: "a whole number ≥ 1") }
        guard version <= Double(PresetBank.version) else {
            throw .newerVersion(Int(exactly: version) ?? Int.max)
        }
        guard case .array(let list)? = top["slots"] else {
            throw top["slots"] == nil ? .missingField("slots") : .wrongType(field: "slots", expected: "a list of presets")
        }
        guard list.count == PresetBank.slotCount else { throw .slotCount(list.count) }
        var slots: [Preset] = []
        for (i, item) in list.enumerated() {
            do { slots.append(try Preset(json: item)) } catch { throw .slot(i, error) }
        }
        guard case .number(let selected)? = top["selected"] else {
            throw top["selected"] == nil ? .missingField("selected") : .wrongType(field: "selected", expected: "a slot number 0…2")
        }
        guard selected == selected.rounded(), selected >= 0, selected < Double(PresetBank.slotCount) else {
            throw .selectedOutOfRange(selected)
        }
        self.init(slots: slots, selected: Int(selected))
    }
}

/// What is wrong with a presets file. `description` reads after the file's name:
/// "presets.json was damaged (unexpected end of file at byte 312 …)".
public enum PresetBankError: Error, Equatable, CustomStringConvertible {
    case notJSON(JSONSyntaxError)
    case notAnObject
    case wrongFormat(found: String)
    case newerVersion(Int)
    case missingField(String)
    case wrongType(field: String, expected: String)
    case slotCount(Int)
    case selectedOutOfRange(Double)
    /// Slot index (0-based) and what is wrong with its preset.
    case slot(Int, PresetError)

    public var description: String {
        switch self {
        case .notJSON(let e):
            e.offset == 0 && e.problem == "the file is empty" ? "was empty" : "was damaged (\(e))"
        case .notAnObject:
            "is not a Stompbox presets file (it holds no JSON object)"
        case .wrongFormat(let found):
            "is not a Stompbox presets file (its format is '\(found)', expected '\(PresetBank.format)')"
        case .newerVersion(let v):
            "was written by a newer Stompbox (version \(v); this one reads up to version \(PresetBank.version))"
        case .missingField(let field):
            "is incomplete (the field '\(field)' is missing)"
        case .wrongType(let field, let expected):
            "holds a bad value (\(field): expected \(expected))"
        case .slotCount(let n):
            "holds \(n) preset slot\(n == 1 ? "" : "s") instead of \(PresetBank.slotCount)"
        case .selectedOutOfRange(let v):
            "holds a bad selected slot (\(JSONValue.number(v).numberText); expected 0, 1 or 2)"
        case .slot(let i, let e):
            switch e {
            case .parameter(.outOfRange):
                "holds a value out of range in slot \(i + 1) (\(e))"
            default:
                "holds a bad preset in slot \(i + 1) (\(e))"
            }
        }
    }
}

extension JSONValue {
    /// A number as JSON writes it (for messages).
    var numberText: String {
        guard case .number(let n) = self else { return kindName }
        return n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
    }
}
