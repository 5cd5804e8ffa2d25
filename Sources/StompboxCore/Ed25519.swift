import CSodium
import Foundation

/// Ed25519 signatures (RFC 8032) through Debian's libsodium: the licence keys' signing and
/// checking. A key pair is kept as its 32-byte seed; the public key is 32 bytes.
enum Ed25519 {
    static let seedBytes = Int(crypto_sign_SEEDBYTES)
    static let publicKeyBytes = Int(crypto_sign_PUBLICKEYBYTES)
    static let signatureBytes = Int(crypto_sign_BYTES)

    /// libsodium picks its fastest implementations and seeds its random source once.
    private static let ready: Bool = sodium_init() >= 0

    /// A new random seed.
    static func randomSeed() -> Data {
        precondition(ready, "libsodium could not start")
        var seed = [UInt8](repeating: 0, count: seedBytes)
        randombytes_buf(&seed, seedBytes)
        return Data(seed)
    }

    /// The public key and libsodium's 64-byte secret key of `seed` (32 bytes).
    private static func keyPair(_ seed: Data) -> (public: [UInt8], secret: [UInt8]) {
        precondition(ready && seed.count == seedBytes)
        var pk = [UInt8](repeating: 0, count: publicKeyBytes)
        var sk = [UInt8](repeating: 0, count: Int(crypto_sign_SECRETKEYBYTES))
        _ = crypto_sign_seed_keypair(&pk, &sk, [UInt8](seed))
        return (pk, sk)
    }

    static func publicKey(seed: Data) -> Data { Data(keyPair(seed).public) }

    static func sign(_ message: [UInt8], seed: Data) -> Data {
        var (_, sk) = keyPair(seed)
        defer { sodium_memzero(&sk, sk.count) }
        var signature = [UInt8](repeating: 0, count: signatureBytes)
        _ = crypto_sign_detached(&signature, nil, message, UInt64(message.count), sk)
        return Data(signature)
    }

    /// Whether `publicKey` (32 bytes) is a point on the curve that can check signatures.
    static func isValidPublicKey(_ publicKey: Data) -> Bool {
        precondition(ready)
        return publicKey.count == publicKeyBytes && crypto_core_ed25519_is_valid_point([UInt8](publicKey)) == 1
    }

    static func isValidSignature<S: Collection<UInt8>>(_ signature: S, for message: [UInt8], publicKey: Data) -> Bool {
        precondition(ready)
        let signature = [UInt8](signature)
        guard signature.count == signatureBytes, publicKey.count == publicKeyBytes else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), [UInt8](publicKey)) == 0
    }
}
