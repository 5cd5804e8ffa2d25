import Foundation
import Testing

@Suite struct StoreCommandTests {
    /// A sandbox with a fresh vendor key pair in <root>/keys.
    func vendor() throws -> (CoreCLISandbox, privateKey: URL, publicKey: URL) {
        let box = CoreCLISandbox()
        let keys = box.file("keys")
        let r = try box.run("licence", "keygen", "--out", keys.path)
        #expect(r.ok, "\(r.stderr)")
        return (box, keys.appendingPathComponent("store-private-key.txt"), keys.appendingPathComponent("store-public-key.txt"))
    }

    func issue(_ box: CoreCLISandbox, _ privateKey: URL, product: String = "looper", licensee: String = "Ada") throws -> String {
        let r = try box.run("licence", "issue", "--private-key", privateKey.path, "--product", product, "--licensee", licensee)
        #expect(r.ok, "\(r.stderr)")
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func keygenWritesAPairAndNeverReplacesIt() throws {
        let (box, priv, pub) = try vendor()
        var st = stat()
        #expect(stat(priv.path, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o600, "the private key is readable by its owner only")
        let privText = String(decoding: box.read(priv)!, as: UTF8.self)
        let pubText = String(decoding: box.read(pub)!, as: UTF8.self)
        #expect(privText.contains("ed25519-private "))
        #expect(pubText.contains("ed25519-public "))

        let again = try box.run("licence", "keygen", "--out", priv.deletingLastPathComponent().path)
        #expect(!again.ok)
        #expect(again.stderr.contains("exists already"))
        #expect(box.read(priv) == Data(privText.utf8) && box.read(pub) == Data(pubText.utf8))

        let keyMixUp = try box.run("store", "status", "--public-key", priv.path)
        #expect(!keyMixUp.ok)
        #expect(keyMixUp.stderr.contains("ed25519-private key where an ed25519-public key is needed"))
    }

    @Test func unlockWithTheVendorsPublicKey() throws {
        let (box, priv, pub) = try vendor()
        let key = try issue(box, priv, licensee: "Ada Lovelace")
        #expect(key.hasPrefix("STOMPBOX-"))

        let locked = try box.run("store", "status", "--public-key", pub.path)
        #expect(locked.ok)
        #expect(locked.stdout.contains("Looper (looper)  €4.99  locked"))
        #expect(locked.stdout.contains("stompbox store unlock KEY"))
        #expect(locked.stdout.contains("checked against the public key in \(pub.path)"))

        let unlock = try box.run("store", "unlock", key, "--public-key", pub.path)
        #expect(unlock.ok, "\(unlock.stderr)")
        #expect(unlock.stdout.contains("The Looper is unlocked (licensed to Ada Lovelace)"))
        #expect(CoreCLISandbox.exists(box.licenceFile))

        let status = try box.run(["store", "status"], env: ["STOMPBOX_STORE_PUBLIC_KEY": pub.path])
        #expect(status.stdout.contains("unlocked (licensed to Ada Lovelace)"), "re-verified at start: \(status.stdout)")

        // The shipped public key does not accept this vendor's key: still locked, and said so.
        let shipped = try box.run("store", "status")
        #expect(shipped.stdout.contains("locked — unlock"))
        #expect(shipped.stdout.contains("data/store-public-key.txt"))
        #expect(shipped.stderr.contains("does not verify"))
    }

    @Test func badKeysFailClearlyAndChangeNothing() throws {
        let (box, priv, pub) = try vendor()
        let good = try issue(box, priv)
        #expect(try box.run("store", "unlock", good, "--public-key", pub.path).ok)
        let stored = try #require(box.read(box.licenceFile))

        let other = CoreCLISandbox()
        let otherKeys = other.file("k")
        #expect(try other.run("licence", "keygen", "--out", otherKeys.path).ok)
        let foreign = try issue(other, otherKeys.appendingPathComponent("store-private-key.txt"))

        var tampered = Array(good)
        let i = tampered.count - 30
        tampered[i] = tampered[i] == "A" ? "B" : "A"

        let cases: [(String, String)] = [
            ("", "no licence key was given"),
            ("hello world", "not a Stompbox licence key"),
            (String(good.prefix(good.count - 10)), "incomplete"),
            (String(tampered), "not valid"),
            (foreign, "not valid"),
            (try issue(box, priv, product: "chorus"), "'chorus', which this Stompbox does not sell"),
        ]
        for (key, words) in cases {
            let r = try box.run("store", "unlock", key, "--public-key", pub.path)
            #expect(r.status != 0)
            #expect(r.stderr.contains(words), "\(key): \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1)
            #expect(box.read(box.licenceFile) == stored, "the licence file is untouched")
        }
        // Shipped key (no --public-key): this vendor's key is someone else's.
        let shipped = try box.run("store", "unlock", good)
        #expect(shipped.status != 0 && shipped.stderr.contains("not valid"))
        #expect(box.read(box.licenceFile) == stored)
    }

    @Test func editingTheStoredKeyUnlocksNothing() throws {
        let (box, priv, pub) = try vendor()
        let good = try issue(box, priv, licensee: "Ada")
        #expect(try box.run("store", "unlock", good, "--public-key", pub.path).ok)
        var text = String(decoding: box.read(box.licenceFile)!, as: UTF8.self)
        let chars = Array(good)
        var edited = chars
        edited[20] = chars[20] == "Q" ? "R" : "Q"
        text = text.replacingOccurrences(of: good, with: String(edited))
        try Data(text.utf8).write(to: box.licenceFile)
        let status = try box.run("store", "status", "--public-key", pub.path)
        #expect(status.stdout.contains("locked — unlock"))
        #expect(status.stderr.contains("does not verify"))
    }

    @Test func issueErrors() throws {
        let (box, priv, _) = try vendor()
        let missing = try box.run("licence", "issue", "--private-key", box.file("nope").path, "--product", "looper", "--licensee", "A")
        #expect(!missing.ok && missing.stderr.contains("no such file"))
        let badProduct = try box.run("licence", "issue", "--private-key", priv.path, "--product", "Looper Pro", "--licensee", "A")
        #expect(!badProduct.ok && badProduct.stderr.contains("bad product id"))
    }
}
