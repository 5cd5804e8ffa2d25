import Foundation

/// A licence key: a short text that unlocks one product for one licensee, verified offline.
///
/// Text form: `STOMPBOX-` followed by the base32 (RFC 4648, upper case, no padding) of
///
///     [1: format version = 1] [1: n] [n: product id, ASCII] [1: m] [m: licensee, UTF-8] [64: signature]
///
/// The signature is Ed25519 (`Ed25519`, libsodium) over `"stompbox-licence\0"` followed by every byte
/// before it, so changing any byte of the key (version, lengths, product, licensee or the
/// signature itself) makes it invalid. Reading is forgiving about what copy and paste does
/// (lower case, spaces, line breaks, dashes between groups) and strict about everything else.
public struct Licence: Equatable, Sendable {
    public static let prefix = "STOMPBOX-"
    public static let formatVersion: UInt8 = 1
    static let signatureContext = Array("stompbox-licence\u{0}".utf8)
    static let signatureLength = 64

    public let product: String
    public let licensee: String
    /// The key in its canonical text form.
    public let key: String

    /// Product ids: 1…32 of a-z, 0-9, '-', '_', '.'.
    public static func isValidProductID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 32
            && id.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0) }
    }

    /// The licensee's name: 1…64 bytes of UTF-8 without control characters.
    public static func isValidLicensee(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name == name.trimmingCharacters(in: .whitespacesAndNewlines)
            && !name.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// Makes a key (the vendor side: `stompbox licence issue`).
    public static func issue(product: String, licensee: String, signingKey: LicenceSigningKey) throws(LicenceError) -> Licence {
        guard isValidProductID(product) else { throw .badProductID(product) }
        guard isValidLicensee(licensee) else { throw .badLicensee(licensee) }
        var bytes: [UInt8] = [formatVersion, UInt8(product.utf8.count)]
        bytes += Array(product.utf8)
        bytes.append(UInt8(licensee.utf8.count))
        bytes += Array(licensee.utf8)
        bytes += Array(Ed25519.sign(signatureContext + bytes, seed: signingKey.seed))
        return Licence(product: product, licensee: licensee, key: prefix + Base32.encode(bytes))
    }

    /// Reads and verifies a key against `publicKey`. Any failure is an error saying what is wrong.
    public static func verify(_ text: String, publicKey: LicencePublicKey) throws(LicenceError) -> Licence {
        let bytes = try decode(text)
        let (product, licensee, signedLength) = try parse(bytes)
        let signature = bytes[signedLength...]
        guard Ed25519.isValidSignature(signature, for: signatureContext + bytes[..<signedLength], publicKey: publicKey.rawRepresentation) else {
            throw .badSignature
        }
        return Licence(product: product, licensee: licensee, key: prefix + Base32.encode(bytes))
    }

    /// The product a key claims, without verifying it (to replace an older key for the same product).
    public static func claimedProduct(_ text: String) -> String? {
        guard let bytes = try? decode(text), let parsed = try? parse(bytes) else { return nil }
        return parsed.0
    }

    /// The key's bytes from its text.
    public static func decode(_ text: String) throws(LicenceError) -> [UInt8] {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw .empty }
        guard trimmed.uppercased().hasPrefix(prefix) else { throw .notAKey }
        let body = trimmed.dropFirst(prefix.count).filter { !$0.isWhitespace && $0 != "-" }
        guard !body.isEmpty else { throw .tooShort }
        let bytes: [UInt8]
        do { bytes = try Base32.decode(String(body)) } catch {
            switch error {
            case .badCharacter(let c): throw .badCharacter(c)
            case .badLength: throw .damaged("its length is not that of a key")
            case .nonCanonical: throw .damaged("its last character is not one a key ends with")
            }
        }
        return bytes
    }

    /// (product, licensee, length of the signed part)
    static func parse(_ bytes: [UInt8]) throws(LicenceError) -> (String, String, Int) {
        // The smallest key: version, 1-byte product, 1-byte licensee, signature.
        guard bytes.count >= 5 + signatureLength else { throw .tooShort }
        guard bytes[0] == formatVersion else {
            throw bytes[0] > formatVersion ? .newerFormat(Int(bytes[0])) : .damaged("it starts with an unknown format number")
        }
        let n = Int(bytes[1])
        guard n >= 1, 2 + n < bytes.count else { throw .damaged("its product part is cut short") }
        let m = Int(bytes[2 + n])
        let signedLength = 3 + n + m
        guard m >= 1 else { throw .damaged("its licensee part is empty") }
        if signedLength + signatureLength > bytes.count { throw .tooShort }
        if signedLength + signatureLength < bytes.count { throw .damaged("it is longer than its contents") }
        guard let product = String(validating: bytes[2..<(2 + n)], as: UTF8.self), isValidProductID(product) else {
            throw .damaged("its product name is not readable")
        }
        guard let licensee = String(validating: bytes[(3 + n)..<signedLength], as: UTF8.self) else {
            throw .damaged("its licensee name is not readable")
        }
        return (product, licensee, signedLength)
    }
}

/// The store's public key (verifies keys). File form: `ed25519-public <base64 of 32 bytes>`,
/// with `#` comment lines allowed.
public struct LicencePublicKey: Sendable {
    public static let label = "ed25519-public"
    public static let shippedFileName = "store-public-key.txt"
    /// The 32 raw bytes (checked at init).
    public let rawRepresentation: Data

    init(checked raw: Data) { rawRepresentation = raw }

    public init(text: String, source: String) throws(LicenceError) {
        let raw = try KeyFileText.read(text, label: LicencePublicKey.label, source: source)
        guard Ed25519.isValidPublicKey(raw) else {
            throw .badKeyFile(path: source, "it does not hold an Ed25519 public key")
        }
        rawRepresentation = raw
    }

    public init(file url: URL) throws(LicenceError) {
        try self.init(text: KeyFileText.load(url), source: url.path)
    }

    public var fileText: String {
        "# Stompbox store public key: verifies licence keys.\n\(LicencePublicKey.label) \(rawRepresentation.base64EncodedString())\n"
    }
}

/// The vendor's private key (signs keys). File form: `ed25519-private <base64 of the 32-byte seed>`.
public struct LicenceSigningKey: Sendable {
    public static let label = "ed25519-private"
    public static let fileName = "store-private-key.txt"
    /// The 32-byte seed (checked at init).
    let seed: Data

    /// A new random key pair.
    public init() { seed = Ed25519.randomSeed() }

    public init(text: String, source: String) throws(LicenceError) {
        let raw = try KeyFileText.read(text, label: LicenceSigningKey.label, source: source)
        // Every 32-byte seed is a private key (KeyFileText.read checked the length).
        seed = raw
    }

    public init(file url: URL) throws(LicenceError) {
        try self.init(text: KeyFileText.load(url), source: url.path)
    }

    public var publicKey: LicencePublicKey { LicencePublicKey(checked: Ed25519.publicKey(seed: seed)) }
    public var fileText: String {
        "# Stompbox store PRIVATE key: signs licence keys. Keep it secret; never commit it.\n\(LicenceSigningKey.label) \(seed.base64EncodedString())\n"
    }
}

enum KeyFileText {
    static func load(_ url: URL) throws(LicenceError) -> String {
        let data: Data?
        do { data = try SafeFile.read(url) } catch { throw .badKeyFile(path: url.path, error.detail) }
        guard let data else { throw .badKeyFile(path: url.path, "no such file") }
        return String(decoding: data, as: UTF8.self)
    }

    static func read(_ text: String, label: String, source: String) throws(LicenceError) -> Data {
        let lines = text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        let other = label == LicencePublicKey.label ? LicenceSigningKey.label : LicencePublicKey.label
        guard lines.count == 1 else { throw .badKeyFile(path: source, "expected one line '\(label) <base64>'") }
        let parts = lines[0].split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0] == label else {
            if parts.first.map(String.init) == other {
                throw .badKeyFile(path: source, "it holds an \(other) key where an \(label) key is needed")
            }
            throw .badKeyFile(path: source, "expected one line '\(label) <base64>'")
        }
        guard let raw = Data(base64Encoded: String(parts[1])), raw.count == 32 else {
            throw .badKeyFile(path: source, "the key is not 32 bytes of base64")
        }
        return raw
    }
}

public enum LicenceError: Error, Equatable, CustomStringConvertible {
    case empty
    case notAKey
    case badCharacter(Character)
    case tooShort
    case damaged(String)
    case newerFormat(Int)
    case badSignature
    case badProductID(String)
    case badLicensee(String)
    case badKeyFile(path: String, String)

    public var description: String {
        switch self {
        case .empty:
            "no licence key was given"
        case .notAKey:
            "this is not a Stompbox licence key (a key starts with \(Licence.prefix))"
        case .badCharacter(let c):
            "the licence key holds a character a key never has ('\(c.unicodeScalars.first.map { $0.isASCII && $0.value >= 0x21 ? String(c) : "U+" + String($0.value, radix: 16, uppercase: true) } ?? "?")'); check that it was copied whole"
        case .tooShort:
            "the licence key is incomplete (it is shorter than a key); check that it was copied whole"
        case .damaged(let why):
            "the licence key is incomplete or damaged (\(why)); check that it was copied whole"
        case .newerFormat(let v):
            "this licence key was made for a newer Stompbox (key format \(v))"
        case .badSignature:
            "the licence key is not valid: its signature does not match (a mistyped or altered key, or a key for another build of Stompbox)"
        case .badProductID(let id):
            "bad product id '\(id)' (use 1 to 32 of a-z, 0-9, '-', '_', '.')"
        case .badLicensee(let name):
            "bad licensee '\(name)' (use 1 to 64 bytes of text, no control characters or surrounding spaces)"
        case .badKeyFile(let path, let why):
            "cannot use the key file \(path): \(why)"
        }
    }
}

/// RFC 4648 base32 without padding; decoding rejects non-canonical trailing bits, so one key
/// has exactly one text.
enum Base32 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    enum DecodeError: Error { case badCharacter(Character), badLength, nonCanonical }

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for b in bytes {
            buffer = buffer << 8 | UInt32(b)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[Int((buffer >> UInt32(bits - 5)) & 31)])
                bits -= 5
            }
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ text: String) throws(DecodeError) -> [UInt8] {
        var trimmed = Substring(text)
        while trimmed.last == "=" { trimmed = trimmed.dropLast() }
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for ch in trimmed {
            guard let a = ch.asciiValue, let v = value(of: a) else { throw .badCharacter(ch) }
            buffer = (buffer << 5 | UInt32(v)) & 0xFFFF
            bits += 5
            if bits >= 8 {
                out.append(UInt8((buffer >> UInt32(bits - 8)) & 0xFF))
                bits -= 8
            }
        }
        // Leftover bits: 0, 2, 4, 1 or 3 are possible endings; 5 or more means a character too many.
        guard bits < 5 else { throw .badLength }
        guard buffer & ((1 << UInt32(bits)) - 1) == 0 else { throw .nonCanonical }
        return out
    }

    static func value(of a: UInt8) -> UInt8? {
        switch a {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): a - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): a - UInt8(ascii: "a")
        case UInt8(ascii: "2")...UInt8(ascii: "7"): a - UInt8(ascii: "2") + 26
        default: nil
        }
    }
}
