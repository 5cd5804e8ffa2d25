import ArgumentParser
import Foundation
import StompboxCore

/// `stompbox licence …`: the vendor side of the store. Never commit a private key.
struct LicenceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "licence",
        abstract: "Vendor tools: key pairs and licence keys.",
        discussion: """
            Someone building their own Stompbox makes a key pair with 'keygen', ships the public key \
            (data/\(LicencePublicKey.shippedFileName), or --public-key / $\(Store.publicKeyVariable)) \
            and issues keys with 'issue'.
            """,
        subcommands: [Keygen.self, Issue.self])

    struct Keygen: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "keygen",
            abstract: "Makes a new Ed25519 key pair: \(LicenceSigningKey.fileName) (mode 0600) and \(LicencePublicKey.shippedFileName).")
        @Option(name: .long, help: ArgumentHelp("The folder to write the two files into (created if missing).", valueName: "dir"))
        var out: String

        func run() throws {
            let dir = URL(fileURLWithPath: out)
            let privateURL = dir.appendingPathComponent(LicenceSigningKey.fileName)
            let publicURL = dir.appendingPathComponent(LicencePublicKey.shippedFileName)
            for url in [privateURL, publicURL] where SafeFile.exists(url) {
                throw CoreCLI.fail("\(url.path) exists already; keygen never replaces a key (choose another --out folder)")
            }
            let key = LicenceSigningKey()
            do {
                try SafeFile.makeDirectory(dir, mode: 0o700)
                try SafeFile.create(Data(key.fileText.utf8), at: privateURL, mode: 0o600)
            } catch { throw CoreCLI.fail(error) }
            do { try SafeFile.create(Data(key.publicKey.fileText.utf8), at: publicURL, mode: 0o644) } catch {
                unlink(privateURL.path)  // we made it a moment ago; a pair is written whole or not at all
                throw CoreCLI.fail(error)
            }
            print("Wrote the private key to \(privateURL.path) (keep it secret, never commit it)")
            print("and the public key to \(publicURL.path).")
        }
    }

    struct Issue: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "issue", abstract: "Prints a licence key for a product and a licensee.")
        @Option(name: .customLong("private-key"), help: ArgumentHelp("The private key file from 'keygen'.", valueName: "file"))
        var privateKey: String
        @Option(name: .long, help: "The product id, e.g. looper.") var product: String
        @Option(name: .long, help: "Who the key is for (shown in the store).") var licensee: String

        func run() throws {
            var st = stat()
            if stat(privateKey, &st) == 0, st.st_mode & 0o077 != 0 {
                CoreCLI.note("\(privateKey) can be read by other users; 'chmod 600 \(privateKey)' keeps the private key private")
            }
            do {
                let key = try LicenceSigningKey(file: URL(fileURLWithPath: privateKey))
                print(try Licence.issue(product: product, licensee: licensee, signingKey: key).key)
            } catch { throw CoreCLI.fail(error) }
        }
    }
}
