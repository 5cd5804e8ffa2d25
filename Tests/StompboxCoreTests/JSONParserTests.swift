import Foundation
import Testing
@testable import StompboxCore

@Suite struct JSONParserTests {
    func error(_ text: String) -> JSONSyntaxError? {
        do { _ = try JSONValue.parse(Data(text.utf8)); return nil } catch { return error }
    }

    @Test func parsesEveryKindOfValue() throws {
        let v = try JSONValue.parse(Data(#" {"a": [1, -2.5e3, 0.125, true, false, null], "b": "x\"\\\/\n\u00e9\ud83c\udfb8", "c": {}} "#.utf8))
        #expect(v == .object([
            "a": .array([.number(1), .number(-2500), .number(0.125), .bool(true), .bool(false), .null]),
            "b": .string("x\"\\/\né🎸"),
            "c": .object([:]),
        ]))
    }

    @Test func serializedValuesParseBack() throws {
        let v = JSONValue.object(["name": .string("Ünïcode \"quoted\" / 🎸\t"), "n": .number(0.1), "list": .array([.number(-3), .null])])
        #expect(try JSONValue.parse(v.serialized()) == v)
    }

    @Test func errorsSayWhatAndWhere() {
        let truncated = error(#"{"a": [1, 2"#)
        #expect(truncated?.problem == "unexpected end of file")
        #expect(truncated?.offset == 11)
        #expect(truncated?.description == "unexpected end of file at byte 11 (line 1, column 12)")
        #expect(error("")?.problem == "the file is empty")
        #expect(error("{\"a\":\n tru}")?.line == 2)
        #expect(error(#"{"a": 1} x"#)?.problem == "unexpected character 'x' after the end of the data")
        #expect(error(#"{"a": 1, "a": 2}"#)?.problem == "the key 'a' appears twice")
        #expect(error(#"{"a": 01}"#)?.problem == "a number with a leading zero")
        #expect(error(#"{"a": "\ud800"}"#)?.problem == "unpaired surrogate in a \\u escape")
        #expect(error("{\"a\": \"x\u{01}\"}")?.problem.hasPrefix("control character") == true)
        #expect(error(#"{"a": "abc"#)?.description == "unexpected end of file at byte 10 (line 1, column 11, inside the text that starts at byte 6)")
        #expect(error(#"[1e999]"#)?.problem == "the number 1e999 is too large")
        #expect(error(String(repeating: "[", count: 100_000))?.problem == "nested more than 256 levels deep")
        #expect(error("\u{FEFF}{}") == nil, "a byte-order mark is accepted")
    }

    @Test func invalidUTF8IsAnError() {
        var bytes = Array(#"{"a": "x"}"#.utf8)
        bytes[7] = 0xFF
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(Data(bytes)) }
    }

    @Test func floatsArePrintedInTheirShortestForm() throws {
        #expect(String(decoding: JSONValue.shortest(0.7).serialized(), as: UTF8.self) == "0.7\n")
        #expect(String(decoding: JSONValue.shortest(-6).serialized(), as: UTF8.self) == "-6\n")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let f = Float.random(in: -2000...2000, using: &generator)
            guard case .number(let d) = try JSONValue.parse(JSONValue.shortest(f).serialized()) else {
                Issue.record("not a number"); return
            }
            #expect(Float(d) == f)
        }
    }
}
