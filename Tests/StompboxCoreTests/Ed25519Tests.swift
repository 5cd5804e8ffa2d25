import Foundation
import Testing
@testable import StompboxCore

/// The licence keys' signatures are plain Ed25519, so keys issued by any correct implementation
/// (those issued before Stompbox moved to libsodium included) keep verifying.
@Suite struct Ed25519Tests {
    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            out.append(UInt8(hex[i..<j], radix: 16)!)
            i = j
        }
        return out
    }

    /// RFC 8032, section 7.1, tests 1 and 2.
    static let vectors: [(seed: String, publicKey: String, message: String, signature: String)] = [
        ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
         "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
         "",
         "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
        ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
         "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
         "72",
         "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
    ]

    @Test func signsAndVerifiesTheRFCVectors() {
        for v in Self.vectors {
            let seed = Data(Self.bytes(v.seed)), message = Self.bytes(v.message)
            #expect(Ed25519.publicKey(seed: seed) == Data(Self.bytes(v.publicKey)))
            #expect(Ed25519.sign(message, seed: seed) == Data(Self.bytes(v.signature)))
            #expect(Ed25519.isValidSignature(Self.bytes(v.signature), for: message, publicKey: Data(Self.bytes(v.publicKey))))
            var altered = Self.bytes(v.signature)
            altered[10] ^= 1
            #expect(!Ed25519.isValidSignature(altered, for: message, publicKey: Data(Self.bytes(v.publicKey))))
        }
    }

    @Test func aPublicKeyOffTheCurveIsRefused() throws {
        // y = 2 has no x on the curve.
        var raw = [UInt8](repeating: 0, count: 32)
        raw[0] = 2
        #expect(!Ed25519.isValidPublicKey(Data(raw)))
        #expect(throws: LicenceError.self) {
            try LicencePublicKey(text: "ed25519-public \(Data(raw).base64EncodedString())", source: "pub")
        }
        #expect(Ed25519.isValidPublicKey(Data(Self.bytes(Self.vectors[0].publicKey))))
    }
}
