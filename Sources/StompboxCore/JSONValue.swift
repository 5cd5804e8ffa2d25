import Foundation

/// A JSON value that keeps true/false apart from numbers, so a preset can say "expected on/off".
public enum JSONValue: Codable, Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let n):
            // Whole numbers print without ".0"; others in their shortest exact form.
            if n == n.rounded(), abs(n) < 1e15 { try c.encode(Int64(n)) } else { try c.encode(n) }
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    /// A number as a file should show it: a Float's shortest decimal form ("0.7", not
    /// "0.699999988079071"), as long as it reads back as the same Float.
    public static func shortest(_ value: Float) -> JSONValue {
        if let d = Double("\(value)"), Float(d) == value { return .number(d) }
        return .number(Double(value))
    }

    /// What a person would call this kind of value, for error messages.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "true/false"
        case .number: "a number"
        case .string: "a string"
        case .array: "a list"
        case .object: "an object"
        }
    }

    /// Parses strict JSON (RFC 8259). Errors say what was wrong and at which byte, because
    /// Foundation's decoder only says "not valid JSON".
    public static func parse(_ data: Data) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: [UInt8](data))
        return try parser.parseDocument()
    }

    /// Pretty-printed with sorted keys, ending in a newline.
    public func serialized() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = (try? encoder.encode(self)) ?? Data("null".utf8)
        data.append(0x0A)
        return data
    }
}

/// Where and why a text is not JSON. `offset` counts bytes from 0.
public struct JSONSyntaxError: Error, Equatable, Sendable, CustomStringConvertible {
    public let problem: String
    public let offset: Int
    public let line: Int
    public let column: Int
    /// More about where, e.g. "inside the text that starts at byte 1777".
    public var context: String? = nil

    public var description: String {
        "\(problem) at byte \(offset) (line \(line), column \(column)\(context.map { ", \($0)" } ?? ""))"
    }
}

private struct JSONParser {
    let bytes: [UInt8]
    var i = 0
    var depth = 0
    static let maximumDepth = 256

    init(bytes: [UInt8]) {
        self.bytes = bytes
        // A UTF-8 byte-order mark some editors add is not an error.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
    }

    mutating func parseDocument() throws(JSONSyntaxError) -> JSONValue {
        skipSpace()
        if i >= bytes.count {
            throw error(bytes.isEmpty ? "the file is empty" : "no value (only blank space)")
        }
        let value = try parseValue()
        skipSpace()
        if i < bytes.count { throw error("unexpected \(describeByte()) after the end of the data") }
        return value
    }

    func error(_ problem: String, at offset: Int? = nil, context: String? = nil) -> JSONSyntaxError {
        let at = min(offset ?? i, bytes.count)
        var line = 1, column = 1
        for b in bytes[0..<at] {
            if b == 0x0A { line += 1; column = 1 } else if b & 0xC0 != 0x80 { column += 1 }
        }
        return JSONSyntaxError(problem: problem, offset: at, line: line, column: column, context: context)
    }

    func describeByte() -> String {
        guard i < bytes.count else { return "end of file" }
        let b = bytes[i]
        if b >= 0x21 && b < 0x7F { return "character '\(Character(Unicode.Scalar(b)))'" }
        return "byte 0x\(String(b, radix: 16, uppercase: true))"
    }

    func unexpected() -> JSONSyntaxError {
        i >= bytes.count ? error("unexpected end of file") : error("unexpected \(describeByte())")
    }

    mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D { i += 1 }
    }

    mutating func expect(_ literal: String, _ value: JSONValue) throws(JSONSyntaxError) -> JSONValue {
        for b in literal.utf8 {
            guard i < bytes.count, bytes[i] == b else { throw unexpected() }
            i += 1
        }
        return value
    }

    mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        guard i < bytes.count else { throw unexpected() }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw unexpected()
        }
    }

    mutating func nest() throws(JSONSyntaxError) {
        depth += 1
        if depth > JSONParser.maximumDepth { throw error("nested more than \(JSONParser.maximumDepth) levels deep") }
    }

    mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
        try nest()
        i += 1
        var object: [String: JSONValue] = [:]
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; depth -= 1; return .object(object) }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw unexpected() }
            let keyOffset = i
            let key = try parseString()
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw unexpected() }
            i += 1
            skipSpace()
            let value = try parseValue()
            if object[key] != nil { throw error("the key '\(key)' appears twice", at: keyOffset) }
            object[key] = value
            skipSpace()
            guard i < bytes.count else { throw unexpected() }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; depth -= 1; return .object(object) }
            throw unexpected()
        }
    }

    mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
        try nest()
        i += 1
        var array: [JSONValue] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; depth -= 1; return .array(array) }
        while true {
            skipSpace()
            array.append(try parseValue())
            skipSpace()
            guard i < bytes.count else { throw unexpected() }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; depth -= 1; return .array(array) }
            throw unexpected()
        }
    }

    mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard i < bytes.count else { throw unexpected() }
            let b = bytes[i]
            let d: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - UInt8(ascii: "A") + 10
            default: throw error("bad \\u escape")
            }
            v = v << 4 | UInt32(d)
            i += 1
        }
        return v
    }

    mutating func parseString() throws(JSONSyntaxError) -> String {
        let start = i
        i += 1
        var raw: [UInt8] = []
        while true {
            guard i < bytes.count else {
                throw error("unexpected end of file", at: bytes.count, context: "inside the text that starts at byte \(start)")
            }
            let b = bytes[i]
            if b == UInt8(ascii: "\"") { i += 1; break }
            if b < 0x20 { throw error("control character (byte 0x\(String(b, radix: 16, uppercase: true))) inside a string") }
            if b != UInt8(ascii: "\\") { raw.append(b); i += 1; continue }
            i += 1
            guard i < bytes.count else { throw unexpected() }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): raw.append(e)
            case UInt8(ascii: "b"): raw.append(0x08)
            case UInt8(ascii: "f"): raw.append(0x0C)
            case UInt8(ascii: "n"): raw.append(0x0A)
            case UInt8(ascii: "r"): raw.append(0x0D)
            case UInt8(ascii: "t"): raw.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                        throw error("unpaired surrogate in a \\u escape")
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate in a \\u escape") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(scalar) {
                    throw error("unpaired surrogate in a \\u escape")
                }
                guard let u = Unicode.Scalar(scalar) else { throw error("bad \\u escape") }
                raw.append(contentsOf: Array(String(Character(u)).utf8))
            default:
                i -= 1
                throw error("unknown escape '\\\(Character(Unicode.Scalar(e)))'")
            }
        }
        guard let s = String(validating: raw, as: UTF8.self) else {
            throw error("text that is not valid UTF-8", at: start)
        }
        return s
    }

    mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = i
        func digits(_ p: inout JSONParser) -> Int {
            var n = 0
            while p.i < p.bytes.count, p.bytes[p.i] >= 0x30, p.bytes[p.i] <= 0x39 { p.i += 1; n += 1 }
            return n
        }
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count else { throw unexpected() }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
            if i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { throw error("a number with a leading zero") }
        } else if digits(&self) == 0 { throw unexpected() }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            if digits(&self) == 0 { throw unexpected() }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            if digits(&self) == 0 { throw unexpected() }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        guard let v = Double(text), v.isFinite else { throw error("the number \(text) is too large", at: start) }
        return .number(v)
    }
}
