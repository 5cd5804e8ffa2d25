import ArgumentParser
import Foundation
import StompboxCore
import StompboxDSP

/// `stompbox params [--json]`: the parameter table, generated from `Parameter.table` only.
struct ParamsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "params",
        abstract: "Prints the parameter table (ids for --set, --at and preset files).")

    @Flag(help: "Print the table as JSON (a list of objects, one per parameter).")
    var json = false

    func run() throws {
        if json {
            FileHandle.standardOutput.write(ParamsCommand.json().serialized())
        } else {
            print(ParamsCommand.text(), terminator: "")
        }
    }

    /// A column-aligned table: id, name, unit, min, max, default, scale/choices.
    static func text() -> String {
        let header = ["ID", "NAME", "UNIT", "MIN", "MAX", "DEFAULT", "SCALE"]
        let rows = Parameter.table.map { s -> [String] in
            [s.id, s.name, s.unit.rawValue, value(s.minimum, s), value(s.maximum, s), value(s.defaultValue, s), scaleText(s)]
        }
        let all = [header] + rows
        let widths = header.indices.map { c in all.map { $0[c].count }.max() ?? 0 }
        var out = ""
        for row in all {
            let cells = row.indices.map { c in
                c == row.count - 1 ? row[c] : row[c].padding(toLength: widths[c], withPad: " ", startingAt: 0)
            }
            out += cells.joined(separator: "  ") + "\n"
        }
        return out
    }

    /// The table as JSON. `default` is written the way a preset file writes the value
    /// (true/false for switches, a name for choices, a number otherwise).
    static func json() -> JSONValue {
        .array(Parameter.table.map { s in
            var o: [String: JSONValue] = [
                "id": .string(s.id),
                "name": .string(s.name),
                "short_name": .string(s.shortName),
                "effect": s.pedal.map { .string($0) } ?? .null,
                "unit": .string(s.unit.rawValue),
                "min": number(s.minimum),
                "max": number(s.maximum),
                "scale": .string(scaleName(s)),
            ]
            switch s.scale {
            case .toggle: o["default"] = .bool(s.defaultValue >= 0.5)
            case .choice(let names):
                o["default"] = .string(names[Int(s.defaultValue)])
                o["choices"] = .array(names.map { .string($0) })
            case .linear, .logarithmic: o["default"] = number(s.defaultValue)
            }
            return .object(o)
        })
    }

    private static func scaleName(_ s: ParameterSpec) -> String {
        switch s.scale {
        case .linear: "linear"
        case .logarithmic: "log"
        case .toggle: "toggle"
        case .choice: "choice"
        }
    }

    private static func scaleText(_ s: ParameterSpec) -> String {
        switch s.scale {
        case .toggle: "toggle (on/off)"
        case .choice(let names): "choice (\(names.joined(separator: ", ")))"
        default: scaleName(s)
        }
    }

    /// Table cells: on/off and choice names where they apply, else the shortest exact number.
    private static func value(_ v: Float, _ s: ParameterSpec) -> String {
        switch s.scale {
        case .toggle, .choice: s.format(v)
        case .linear, .logarithmic: shortest(v)
        }
    }

    /// "0.05" rather than 0.05000000074505806: the Float's shortest decimal form.
    private static func number(_ v: Float) -> JSONValue { .number(Double(shortest(v))!) }

    private static func shortest(_ v: Float) -> String {
        let text = "\(v)"
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }
}
