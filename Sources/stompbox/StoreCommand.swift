import ArgumentParser
import Foundation
import StompboxCore

/// `stompbox store …`: what the window's "More…" dialog does.
struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Shows and unlocks the locked effects.",
        discussion: """
            Licence keys are verified offline against the public key shipped in data/ \
            (or the one given with --public-key or $\(Store.publicKeyVariable)) and remembered in \
            $XDG_DATA_HOME/stompbox (default ~/.local/share/stompbox).
            """,
        subcommands: [Status.self, Unlock.self],
        defaultSubcommand: Status.self)

    struct KeyOption: ParsableArguments {
        @Option(name: .customLong("public-key"), help: ArgumentHelp(
            "A public key file to use in place of the shipped one (or set $\(Store.publicKeyVariable)).",
            valueName: "file"))
        var publicKey: String?

        func open() throws -> Store {
            let store: Store
            do { store = try Store.open(publicKeyFile: publicKey) } catch { throw CoreCLI.fail(error) }
            for notice in store.notices { CoreCLI.note(notice) }
            return store
        }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "Lists the products and whether each is unlocked.")
        @OptionGroup var key: KeyOption
        func run() throws {
            let store = try key.open()
            for status in store.status {
                let p = status.product
                let state = status.licence.map { "unlocked (licensed to \($0.licensee))" }
                    ?? "locked — unlock with 'stompbox store unlock KEY'"
                print("\(p.name) (\(p.id))  \(p.price)  \(state)")
                print("    \(p.description)")
            }
            print("Licence keys are checked against the public key in \(store.publicKeySource).")
        }
    }

    struct Unlock: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "unlock", abstract: "Unlocks a product with a licence key.")
        @Argument(help: "The licence key (STOMPBOX-…).") var licenceKey: String
        @OptionGroup var key: KeyOption
        func run() throws {
            let store = try key.open()
            let licence: Licence
            do { licence = try store.unlock(key: licenceKey) } catch { throw CoreCLI.fail(error) }
            let name = store.catalogue.product(licence.product)?.name ?? licence.product
            print("The \(name) is unlocked (licensed to \(licence.licensee)).")
        }
    }
}
