import Foundation
import Testing
@testable import StompboxCore

@Suite struct LicenceTests {
    static let vendor = LicenceSigningKey()
    static let otherVendor = LicenceSigningKey()

    static func key(_ product: String = "looper", _ licensee: String = "Ada Lovelace") -> String {
        try! Licence.issue(product: product, licensee: licensee, signingKey: vendor).key
    }

    func failure(_ text: String, _ publicKey: LicencePublicKey = vendor.publicKey) -> LicenceError? {
        do { _ = try Licence.verify(text, publicKey: publicKey); return nil } catch { return error }
    }

    @Test func validKeyVerifies() throws {
        let text = Self.key()
        #expect(text.hasPrefix("STOMPBOX-"))
        #expect(text.count < 160, "short enough to type: \(text.count) characters")
        let licence = try Licence.verify(text, publicKey: Self.vendor.publicKey)
        #expect(licence.product == "looper")
        #expect(licence.licensee == "Ada Lovelace")
        #expect(licence.key == text)
        let unicode = try Licence.verify(Self.key("looper", "Jürgen Müller 🎸"), publicKey: Self.vendor.publicKey)
        #expect(unicode.licensee == "Jürgen Müller 🎸")
    }

    @Test func copyAndPasteDamageIsForgiven() throws {
        let text = Self.key()
        let body = text.dropFirst(Licence.prefix.count)
        var grouped = ""
        for (i, c) in body.enumerated() { if i > 0 && i % 8 == 0 { grouped += i % 32 == 0 ? "\n" : "-" }; grouped.append(c) }
        for variant in [text.lowercased(), "  \(text)\n", "STOMPBOX-" + grouped] {
            #expect(try Licence.verify(variant, publicKey: Self.vendor.publicKey).key == text, "\(variant)")
        }
    }

    @Test func everyTamperedByteIsRejected() throws {
        let bytes = try Licence.decode(Self.key())
        var rejected = 0
        for i in bytes.indices {
            for mask: UInt8 in [0x01, 0x02, 0x10, 0x80, 0xFF] {
                var tampered = bytes
                tampered[i] ^= mask
                let text = Licence.prefix + Base32.encode(tampered)
                if let error = failure(text) {
                    rejected += 1
                    #expect(!error.description.isEmpty)
                } else {
                    Issue.record("byte \(i) ^ \(mask) still verifies")
                }
            }
        }
        #expect(rejected == bytes.count * 5)
        #expect(bytes.count > 64 + 8)
    }

    @Test func everyTamperedCharacterIsRejected() {
        let text = Self.key()
        let chars = Array(text)
        for i in Licence.prefix.count..<chars.count {
            var t = chars
            t[i] = t[i] == "A" ? "B" : "A"
            #expect(failure(String(t)) != nil, "character \(i) changed still verifies")
        }
    }

    @Test func truncatedKeysAreRejected() {
        let text = Self.key()
        for length in 0..<text.count {
            let error = failure(String(text.prefix(length)))
            #expect(error != nil, "a key cut to \(length) characters verifies")
            if length > Licence.prefix.count {
                #expect(error?.description.contains("incomplete") == true, "\(String(describing: error))")
                #expect(error?.description.contains("copied whole") == true)
            }
        }
        #expect(failure(String(text.prefix(25))) == .tooShort)
    }

    @Test func wrongPublicKeyIsRejected() {
        #expect(failure(Self.key(), Self.otherVendor.publicKey) == .badSignature)
        #expect(LicenceError.badSignature.description.contains("not valid"))
    }

    @Test func garbageAndEmptyKeysAreRejectedWithAReason() {
        #expect(failure("") == .empty)
        #expect(failure("   \n") == .empty)
        #expect(failure("hello") == .notAKey)
        #expect(failure("STOMPBOX-") == .tooShort)
        #expect(failure("STOMPBOX-!!!!") == .badCharacter("!"))
        #expect(failure("STOMPBOX-" + String(repeating: "A", count: 200))?.description.isEmpty == false)
        #expect(failure("STOMPBOX-0189") == .badCharacter("0"))
        #expect(failure(Self.key() + "AA") != nil)
        #expect(failure(Self.key() + "A") != nil)
        for message in [LicenceError.empty, .notAKey, .tooShort, .badCharacter("!"), .damaged("x"), .badSignature] {
            #expect(!message.description.contains("\n"))
        }
    }

    @Test func issueRefusesBadInput() {
        #expect(throws: LicenceError.badProductID("Looper!")) {
            try Licence.issue(product: "Looper!", licensee: "x", signingKey: Self.vendor)
        }
        #expect(throws: LicenceError.self) { try Licence.issue(product: "looper", licensee: "", signingKey: Self.vendor) }
        #expect(throws: LicenceError.self) {
            try Licence.issue(product: "looper", licensee: String(repeating: "x", count: 65), signingKey: Self.vendor)
        }
    }

    @Test func keyFilesRoundTripAndAreNotMixedUp() throws {
        let pub = try LicencePublicKey(text: Self.vendor.publicKey.fileText, source: "pub")
        #expect(pub.rawRepresentation == Self.vendor.publicKey.rawRepresentation)
        let priv = try LicenceSigningKey(text: Self.vendor.fileText, source: "priv")
        #expect(priv.publicKey.rawRepresentation == Self.vendor.publicKey.rawRepresentation)
        do {
            _ = try LicencePublicKey(text: Self.vendor.fileText, source: "secret.txt")
            Issue.record("a private key file was taken as a public key")
        } catch {
            #expect(error.description.contains("ed25519-private key where an ed25519-public key is needed"))
        }
        #expect(throws: LicenceError.self) { try LicencePublicKey(text: "ed25519-public AAAA", source: "x") }
        #expect(throws: LicenceError.self) { try LicencePublicKey(text: "", source: "x") }
    }

    @Test func shippedPublicKeyIsReadable() throws {
        let key = try LicencePublicKey(file: repositoryData.data(LicencePublicKey.shippedFileName))
        #expect(key.rawRepresentation.count == 32)
        // A key signed by anyone else's private key does not verify against it.
        #expect(failure(Self.key(), key) == .badSignature)
    }

    @Test func base32RoundTripsAndIsCanonical() throws {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(try Base32.decode(Base32.encode(bytes)) == bytes)
        }
        #expect(Base32.encode(Array("foobar".utf8)) == "MZXW6YTBOI")
        // "MZXW6YTBOJ" differs from "MZXW6YTBOI" only in unused trailing bits.
        #expect(throws: Base32.DecodeError.self) { try Base32.decode("MZXW6YTBOJ") }
    }
}
