import Foundation
import StompboxDSP
import Testing

@Suite struct ParamsCommandTests {
    @Test func printsOneRowPerParameterWithItsRangeAndDefault() throws {
        let result = try expectSuccess(["params"])
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == Parameter.allCases.count + 1, "a header and one row each")
        #expect(lines.first?.hasPrefix("ID") == true)
        for p in Parameter.allCases {
            let s = p.spec
            let row = try #require(lines.first { $0.split(separator: " ").first.map(String.init) == s.id }, "row for \(s.id)")
            #expect(row.contains(s.name), "\(row)")
            if let choices = s.choices {
                for c in choices { #expect(row.contains(c), "\(row)") }
            }
            if s.isToggle { #expect(row.contains("on") && row.contains("off"), "\(row)") }
        }
        let delay = try #require(lines.first { $0.hasPrefix("delay.time_ms ") })
        let cells = delay.split(separator: " ").map(String.init)
        #expect(cells.contains("ms") && cells.contains("20") && cells.contains("2000") && cells.contains("350") && cells.contains("log"))
    }

    @Test func jsonIsValidAndListsEveryIdWithItsRange() throws {
        let result = try expectSuccess(["params", "--json"])
        let parsed = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        let entries = try #require(parsed as? [[String: Any]])
        #expect(entries.map { $0["id"] as? String } == Parameter.table.map(\.id), "every id, in table order")
        for (entry, s) in zip(entries, Parameter.table) {
            let min = try #require(entry["min"] as? Double), max = try #require(entry["max"] as? Double)
            #expect(Float(min) == s.minimum && Float(max) == s.maximum, "\(s.id)")
            #expect(entry["name"] as? String == s.name)
            #expect(entry["unit"] as? String == s.unit.rawValue)
            switch s.scale {
            case .toggle:
                #expect(entry["scale"] as? String == "toggle")
                #expect(entry["default"] as? Bool == (s.defaultValue >= 0.5), "\(s.id)")
            case .choice(let names):
                #expect(entry["scale"] as? String == "choice")
                #expect(entry["choices"] as? [String] == names)
                #expect(entry["default"] as? String == names[Int(s.defaultValue)])
            case .linear, .logarithmic:
                #expect(entry["scale"] as? String == (s.scale == .linear ? "linear" : "log"))
                let def = try #require(entry["default"] as? Double, "\(s.id)")
                #expect(Float(def) == s.defaultValue, "\(s.id)")
            }
        }
    }
}
