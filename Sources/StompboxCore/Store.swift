import Foundation
import StompboxDSP

/// One thing the "More…" store sells, from `data/store-catalogue.json`.
public struct StoreProduct: Equatable, Sendable {
    /// Also the licence key's product id; a product whose id names a pedal ("looper") unlocks it.
    public let id: String
    public let name: String
    public let description: String
    /// As shown, e.g. "€4.99".
    public let price: String

    public init(id: String, name: String, description: String, price: String) {
        self.id = id
        self.name = name
        self.description = description
        self.price = price
    }

    /// The pedal this product unlocks, if any.
    public var effect: PedalKind? { PedalKind(id: id) }
}

/// `{"format":"stompbox-store-catalogue","version":1,"products":[{"id","name","description","price"}…]}`
public struct StoreCatalogue: Equatable, Sendable {
    public static let format = "stompbox-store-catalogue"
    public static let version = 1
    public static let fileName = "store-catalogue.json"

    public let products: [StoreProduct]

    public init(products: [StoreProduct]) { self.products = products }

    public func product(_ id: String) -> StoreProduct? { products.first { $0.id == id } }

    public static func load(from data: DataFiles) throws(StoreError) -> StoreCatalogue {
        let url = data.data(fileName)
        let bytes: Data?
        do { bytes = try SafeFile.read(url) } catch { throw .catalogue(error.description) }
        guard let bytes else { throw .catalogue("\(url.path) is missing") }
        do { return try StoreCatalogue(jsonData: bytes) } catch { throw .catalogue("\(url.path): \(error)") }
    }

    public init(jsonData: Data) throws(StoreError) {
        let json: JSONValue
        do { json = try JSONValue.parse(jsonData) } catch { throw .catalogue("not valid JSON (\(error))") }
        guard case .object(let top) = json, case .string(let format)? = top["format"], format == StoreCatalogue.format else {
            throw .catalogue("not a store catalogue (format '\(StoreCatalogue.format)')")
        }
        guard case .number(let version)? = top["version"], version >= 1, version <= Double(StoreCatalogue.version) else {
            throw .catalogue("unsupported version (this Stompbox reads version \(StoreCatalogue.version))")
        }
        guard case .array(let list)? = top["products"] else { throw .catalogue("the list 'products' is missing") }
        var products: [StoreProduct] = []
        for (i, item) in list.enumerated() {
            guard case .object(let o) = item,
                  case .string(let id)? = o["id"], Licence.isValidProductID(id),
                  case .string(let name)? = o["name"],
                  case .string(let description)? = o["description"],
                  case .string(let price)? = o["price"] else {
                throw .catalogue("product \(i + 1) needs the texts id, name, description and price")
            }
            guard !products.contains(where: { $0.id == id }) else { throw .catalogue("the product '\(id)' is listed twice") }
            products.append(StoreProduct(id: id, name: name, description: description, price: price))
        }
        self.products = products
    }
}

/// The answer to "may this pedal be switched on?", the ONE check every part of the app uses:
/// the window, `run`, `render` and preset recall.
///
/// Policy: a locked pedal cannot be switched on anywhere. A preset that switches a locked pedal
/// on still loads — every other setting is applied, the pedal stays off and the person is told
/// (the preset file itself keeps `looper.enabled: true`, so the preset is whole again once the
/// Looper is unlocked).
public struct FeatureGate: Equatable, Sendable {
    /// The pedals sold in the store, locked until a licence unlocks them.
    public static let lockable: Set<PedalKind> = [.looper]

    public let unlocked: Set<PedalKind>

    public init(unlocked: Set<PedalKind>) { self.unlocked = unlocked }

    /// Nothing unlocked (no store or no licence).
    public static let locked = FeatureGate(unlocked: [])

    public func isLocked(_ effect: PedalKind) -> Bool {
        FeatureGate.lockable.contains(effect) && !unlocked.contains(effect)
    }

    /// Throws `LockedError` when `value` would switch a locked pedal on.
    public func check(_ parameter: Parameter, _ value: Float) throws(LockedError) {
        guard let effect = parameter.spec.pedal.flatMap(PedalKind.init(id:)), parameter == effect.enabledParameter,
              isLocked(effect), parameter.spec.clamp(value) >= 0.5 else { return }
        throw LockedError(effect: effect)
    }

    /// Sets a parameter unless that would switch a locked pedal on (then nothing changes).
    public func set(_ parameter: Parameter, _ value: Float, on store: ParameterStore) throws(LockedError) {
        try check(parameter, value)
        store.set(parameter, value)
    }

    /// The preset as it may be played: locked pedals switched off, with a notice for each.
    public func admit(_ preset: Preset) -> (preset: Preset, notices: [LockedEffectNotice]) {
        var playable = preset
        var notices: [LockedEffectNotice] = []
        for effect in PedalKind.builtIn where isLocked(effect) && preset[effect.enabledParameter] >= 0.5 {
            playable[effect.enabledParameter] = 0
            notices.append(LockedEffectNotice(effect: effect, presetName: preset.name))
        }
        return (playable, notices)
    }

    /// Applies a preset to the live parameters through `admit`.
    @discardableResult
    public func apply(_ preset: Preset, to store: ParameterStore) -> [LockedEffectNotice] {
        let (playable, notices) = admit(preset)
        playable.apply(to: store)
        return notices
    }

    /// Switches off any locked pedal that is on (e.g. after a licence file vanished).
    @discardableResult
    public func enforce(on store: ParameterStore) -> [LockedError] {
        var switchedOff: [LockedError] = []
        for effect in PedalKind.builtIn where isLocked(effect) && store.isOn(effect.enabledParameter) {
            store.set(effect.enabledParameter, 0)
            switchedOff.append(LockedError(effect: effect))
        }
        return switchedOff
    }

    /// How to unlock, for messages.
    public static let howToUnlock = "unlock it with 'stompbox store unlock KEY' or in the window with More… → Enter licence key…"
}

/// Refusal to switch a locked pedal on.
public struct LockedError: Error, Equatable, Sendable, CustomStringConvertible {
    public let effect: PedalKind
    public var description: String {
        "the \(effect.name) is locked; \(FeatureGate.howToUnlock)"
    }
}

/// A preset switched a locked pedal on; it stayed off.
public struct LockedEffectNotice: Equatable, Sendable, CustomStringConvertible {
    public let effect: PedalKind
    public let presetName: String
    public var description: String {
        "the preset '\(presetName)' switches the \(effect.name) on, but the \(effect.name) is locked, so it stays off; \(FeatureGate.howToUnlock)"
    }
}

/// The store: catalogue, licences and what they unlock. For the "More…" dialog and `stompbox store`.
///
/// Licence keys live in `<data>/licences.json` (`$XDG_DATA_HOME/stompbox/`):
/// `{"format":"stompbox-licences","version":1,"keys":["STOMPBOX-…"]}`. Every key in it is
/// verified again each time the store opens, so editing the file unlocks nothing.
public final class Store {
    public static let licenceFileName = "licences.json"
    public static let licenceFormat = "stompbox-licences"
    /// The environment variable naming a public key file that replaces the shipped one.
    public static let publicKeyVariable = "STOMPBOX_STORE_PUBLIC_KEY"

    public let catalogue: StoreCatalogue
    public let publicKey: LicencePublicKey
    /// Where the public key came from (a file path), for status displays.
    public private(set) var publicKeySource: String = "built in"
    public let licenceFile: URL
    /// Verified licences, one per product.
    public private(set) var licences: [Licence] = []
    /// Problems with the stored licences, in words (a stored key that does not verify, a damaged file).
    public private(set) var notices: [String] = []

    public init(catalogue: StoreCatalogue, publicKey: LicencePublicKey, directory: URL) {
        self.catalogue = catalogue
        self.publicKey = publicKey
        licenceFile = directory.appendingPathComponent(Store.licenceFileName)
        reload()
    }

    /// The store as the app opens it. The public key is `publicKeyFile` (`--public-key`), else
    /// `$STOMPBOX_STORE_PUBLIC_KEY`, else `data/store-public-key.txt`.
    public static func open(publicKeyFile: String? = nil,
                            environment: [String: String] = ProcessInfo.processInfo.environment,
                            directories: UserDirectories? = nil,
                            dataFiles: DataFiles? = nil) throws(StoreError) -> Store {
        let dirs = directories ?? UserDirectories(environment: environment)
        let data: DataFiles
        if let dataFiles { data = dataFiles } else {
            do { data = try DataFiles.locate(environment: environment) } catch { throw .data(error) }
        }
        let keyURL: URL
        if let file = publicKeyFile, !file.isEmpty {
            keyURL = URL(fileURLWithPath: file)
        } else if let file = environment[publicKeyVariable], !file.isEmpty {
            keyURL = URL(fileURLWithPath: file)
        } else {
            keyURL = data.data(LicencePublicKey.shippedFileName)
        }
        let key: LicencePublicKey
        do { key = try LicencePublicKey(file: keyURL) } catch { throw .licence(error) }
        let store = Store(catalogue: try StoreCatalogue.load(from: data), publicKey: key, directory: dirs.data)
        store.publicKeySource = keyURL.path
        return store
    }

    /// The gate for `run`, `render` and the window in one call: the store's gate, or everything
    /// locked when the store cannot be opened (with the reason, to show as a note).
    public static func currentGate(publicKeyFile: String? = nil,
                                   environment: [String: String] = ProcessInfo.processInfo.environment)
        -> (gate: FeatureGate, notes: [String]) {
        do {
            let store = try open(publicKeyFile: publicKeyFile, environment: environment)
            return (store.gate, store.notices)
        } catch {
            return (.locked, ["the store cannot be opened (\(error)); the Looper stays locked"])
        }
    }

    public func isUnlocked(_ product: String) -> Bool { licence(for: product) != nil }
    public func isUnlocked(_ effect: PedalKind) -> Bool { gate.unlocked.contains(effect) || !FeatureGate.lockable.contains(effect) }
    public func licence(for product: String) -> Licence? { licences.first { $0.product == product } }

    /// The pedals the licences unlock.
    public var gate: FeatureGate {
        FeatureGate(unlocked: Set(licences.compactMap { PedalKind(id: $0.product) }))
    }

    /// Re-reads and re-verifies the stored keys.
    public func reload() {
        notices = []
        licences = []
        let stored: [String]
        switch readStoredKeys() {
        case .success(let keys): stored = keys
        case .failure(let problem):
            notices.append("\(licenceFile.path) \(problem); the stored licences are ignored")
            return
        }
        for text in stored {
            do {
                let verified = try Licence.verify(text, publicKey: publicKey)
                guard catalogue.product(verified.product) != nil else { continue }
                if licence(for: verified.product) == nil { licences.append(verified) }
            } catch {
                let product = Licence.claimedProduct(text).map { "'\($0)'" } ?? "a product"
                notices.append("the stored licence key for \(product) in \(licenceFile.path) does not verify (\(error)); it unlocks nothing")
            }
        }
    }

    /// Verifies `key` and, when it is valid for a product of the catalogue, remembers it and
    /// unlocks at once. Any failure throws a message and changes nothing (the licence file is
    /// not touched).
    @discardableResult
    public func unlock(key text: String) throws(StoreError) -> Licence {
        let licence: Licence
        do { licence = try Licence.verify(text, publicKey: publicKey) } catch { throw .licence(error) }
        guard catalogue.product(licence.product) != nil else {
            throw .otherProduct(licence.product, sold: catalogue.products.map(\.id))
        }
        let lock: FileLock
        do { lock = try FileLock(URL(fileURLWithPath: licenceFile.path + ".lock")) } catch { throw .file(error) }
        defer { lock.release() }
        var keys: [String]
        switch readStoredKeys() {
        case .success(let stored): keys = stored
        case .failure(let problem):
            // Never overwrite what we cannot read: move it aside first.
            do {
                let movedTo = try SafeFile.moveAside(licenceFile, tag: "corrupt")
                notices.append("\(licenceFile.path) \(problem); it was moved to \(movedTo.path)")
            } catch { throw .file(error) }
            keys = []
        }
        // One key per product: the new key replaces an older one for the same product.
        keys.removeAll { $0 == licence.key || Licence.claimedProduct($0) == licence.product }
        keys.append(licence.key)
        let json = JSONValue.object([
            "format": .string(Store.licenceFormat),
            "version": .number(1),
            "keys": .array(keys.map(JSONValue.string)),
        ])
        do { try SafeFile.write(json.serialized(), to: licenceFile, backup: true, mode: 0o600) } catch { throw .file(error) }
        reload()
        return licence
    }

    /// One line per product for status displays.
    public struct ProductStatus: Equatable, Sendable {
        public let product: StoreProduct
        public let licence: Licence?
        public var isUnlocked: Bool { licence != nil }
    }

    public var status: [ProductStatus] {
        catalogue.products.map { ProductStatus(product: $0, licence: licence(for: $0.id)) }
    }

    private func readStoredKeys() -> Result<[String], StoredKeysProblem> {
        let data: Data?
        do { data = try SafeFile.read(licenceFile) } catch { return .failure(StoredKeysProblem(text: "cannot be read (\(error.detail))")) }
        guard let data else { return .success([]) }
        let json: JSONValue
        do { json = try JSONValue.parse(data) } catch { return .failure(StoredKeysProblem(text: "is damaged (\(error))")) }
        guard case .object(let top) = json, case .string(Store.licenceFormat)? = top["format"] else {
            return .failure(StoredKeysProblem(text: "is not a Stompbox licence file"))
        }
        guard case .number(1)? = top["version"] else {
            return .failure(StoredKeysProblem(text: "was written by another version of Stompbox"))
        }
        guard case .array(let list)? = top["keys"] else { return .failure(StoredKeysProblem(text: "holds no list of keys")) }
        var keys: [String] = []
        for item in list {
            guard case .string(let key) = item else { return .failure(StoredKeysProblem(text: "holds a key that is not text")) }
            keys.append(key)
        }
        return .success(keys)
    }
}

struct StoredKeysProblem: Error, CustomStringConvertible {
    let text: String
    var description: String { text }
}

public enum StoreError: Error, Equatable, CustomStringConvertible {
    case licence(LicenceError)
    case otherProduct(String, sold: [String])
    case catalogue(String)
    case data(DataFilesError)
    case file(FileError)

    public var description: String {
        switch self {
        case .licence(let e): e.description
        case .otherProduct(let id, let sold):
            "this licence key is for '\(id)', which this Stompbox does not sell (the store sells: \(sold.joined(separator: ", ")))"
        case .catalogue(let why): "the store catalogue cannot be read: \(why)"
        case .data(let e): e.description
        case .file(let e): e.description
        }
    }
}
