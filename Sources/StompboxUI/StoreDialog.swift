import CGtk
import Foundation
import StompboxCore
import StompboxDSP

/// The window's side of the "More…" store: owns the `Store` (catalogue, verified licences),
/// answers "is this pedal locked?" for the strip, the footswitches and preset recall, and shows
/// the store dialog (from "More…", or when a locked pedal is tapped).
///
/// Loading the catalogue and verifying the stored keys is instant (local files), so the dialog
/// opens with its list at once — there is no spinner to show.
final class StoreFront {
    private(set) var store: Store?
    /// Why the store could not be opened (the Looper then stays locked), in words.
    let openProblem: String?
    private unowned let window: PedalboardWindow
    private let parameters: ParameterStore
    /// Called after a licence unlocked something (the preset panel refreshes its marks).
    var onChange: [() -> Void] = []
    /// The last key the dialog refused, and why (for the state file).
    private(set) var lastRefusal: String?
    private var pending: UInt32 = 0
    /// Shows a message in the window's info bar (set by the preset panel, which owns it).
    var inform: ((Dialogs.Kind, String) -> Void)?

    init(window: PedalboardWindow, publicKeyFile: String?) {
        self.window = window
        parameters = window.controls.parameters
        do {
            store = try Store.open(publicKeyFile: publicKeyFile)
            openProblem = nil
        } catch {
            store = nil
            openProblem = "the store cannot be opened (\(error)); the Looper stays locked"
        }
        window.isLocked = { [unowned self] kind in gate.isLocked(kind) }
        window.onLocked = { [unowned self] _ in present() }
        onSignal(raw(window.moreButton), "clicked") { [unowned self] in present() }
        gtk_widget_set_tooltip_text(window.moreButton, "The store: unlock the Looper with a licence key")
        // A pedal left on by whatever ran before stays off while it is locked.
        gate.enforce(on: parameters)
        window.locksChanged()
        onSignal(raw(window.window), "destroy") { [unowned self] in
            if pending != 0 { g_source_remove(pending); pending = 0 }
        }
    }

    /// Notices to show when the window opens (stored keys that no longer verify, no store).
    var startupNotices: [String] {
        (openProblem.map { [$0] } ?? []) + (store?.notices ?? [])
    }

    var gate: FeatureGate { store?.gate ?? .locked }

    /// For the state file.
    var state: [String: Any] {
        var products: [String: Any] = [:]
        for status in store?.status ?? [] {
            products[status.product.id] = ["unlocked": status.isUnlocked, "licensee": status.licence?.licensee ?? ""]
        }
        var result: [String: Any] = [
            "looper_locked": gate.isLocked(.looper),
            "products": products,
            "public_key": store?.publicKeySource ?? "",
        ]
        if let lastRefusal { result["last_refusal"] = lastRefusal }
        if let openProblem { result["problem"] = openProblem }
        return result
    }

    /// Opens the store dialog once the current event is handled (a footswitch press or a
    /// button click must finish before a modal loop starts).
    func present() {
        guard pending == 0, !Dialogs.open.contains(StoreFront.title) else { return }
        pending = addTimeout(milliseconds: 0) { [weak self] in
            guard let self else { return false }
            pending = 0
            showDialog()
            return false
        }
    }

    static let title = "Stompbox Store"

    private func showDialog() {
        let dialog = Dialogs.make(title: StoreFront.title, parent: window.window)
        addClass(dialog, "store-dialog")
        gtk_window_set_default_size(cast(raw(dialog)), 520, -1)
        let column = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12)!
        gtk_container_set_border_width(cast(raw(column)), 20)
        let heading = gtk_label_new("MORE EFFECTS")!
        addClass(heading, "store-heading")
        gtk_label_set_xalign(cast(raw(heading)), 0)
        gtk_box_pack_start(cast(raw(column)), heading, 0, 0, 0)
        let intro = gtk_label_new("The other pedals come free. The Looper is unlocked with a licence key, checked on this computer — nothing is sent anywhere.")!
        addClass(intro, "store-intro")
        Dialogs.wrap(intro, chars: 60)
        gtk_box_pack_start(cast(raw(column)), intro, 0, 0, 0)
        let list = gtk_box_new(GTK_ORIENTATION_VERTICAL, 10)!
        gtk_box_pack_start(cast(raw(column)), list, 0, 0, 0)
        let footnote = gtk_label_new("")!
        addClass(footnote, "store-footnote")
        Dialogs.wrap(footnote, chars: 70)
        gtk_label_set_selectable(cast(raw(footnote)), 1)
        gtk_widget_set_can_focus(footnote, 0)
        gtk_box_pack_start(cast(raw(column)), footnote, 0, 0, 0)
        gtk_box_pack_start(cast(raw(Dialogs.content(dialog))), column, 1, 1, 0)

        let enter = Dialogs.addButton(dialog, "Enter licence key…", GTK_RESPONSE_APPLY, style: "suggested-action")
        setAccessible(enter, name: "Enter licence key")
        Dialogs.addButton(dialog, "Close", GTK_RESPONSE_CLOSE)

        func fill() {
            let children = gtk_container_get_children(cast(raw(list)))
            var node = children
            while let n = node { gtk_widget_destroy(cast(n.pointee.data)); node = n.pointee.next }
            g_list_free(children)
            if let store {
                for status in store.status { gtk_box_pack_start(cast(raw(list)), productCard(status), 0, 0, 0) }
                footnote.setText("Licence keys are checked against the public key in \(store.publicKeySource).")
            } else {
                let problem = gtk_label_new(Messages.sentence(openProblem ?? "the store cannot be opened"))!
                addClass(problem, "dialog-error-text")
                Dialogs.wrap(problem, chars: 60)
                gtk_box_pack_start(cast(raw(list)), problem, 0, 0, 0)
                gtk_widget_set_sensitive(enter, 0)
                footnote.setText("")
            }
            let anyLocked = store?.status.contains { !$0.isUnlocked } ?? false
            gtk_widget_set_sensitive(enter, anyLocked ? 1 : 0)
            // Return does the one thing left to do: enter a key while locked, close when not.
            gtk_dialog_set_default_response(cast(raw(dialog)), (anyLocked ? GTK_RESPONSE_APPLY : GTK_RESPONSE_CLOSE).rawValue)
            gtk_widget_show_all(list)
        }
        fill()
        while Dialogs.run(dialog) == GTK_RESPONSE_APPLY {
            if enterKey(parent: dialog) { fill() }
        }
        gtk_widget_destroy(dialog)
    }

    private func productCard(_ status: Store.ProductStatus) -> UnsafeMutablePointer<GtkWidget> {
        let card = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 14)!
        addClass(card, "store-card")
        let badge = gtk_drawing_area_new()!
        gtk_widget_set_size_request(badge, 44, 52)
        gtk_widget_set_valign(badge, GTK_ALIGN_START)
        let unlocked = status.isUnlocked
        onEvent(raw(badge), "draw") { cr in
            drawPadlock(OpaquePointer(cr!), centreX: 22, centreY: 28, size: 36, open: unlocked)
            return true
        }
        gtk_box_pack_start(cast(raw(card)), badge, 0, 0, 0)
        let texts = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6)!
        let top = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 10)!
        let name = gtk_label_new(status.product.name)!
        addClass(name, "store-product")
        gtk_box_pack_start(cast(raw(top)), name, 0, 0, 0)
        let price = gtk_label_new(status.product.price)!
        addClass(price, "store-price")
        gtk_box_pack_end(cast(raw(top)), price, 0, 0, 0)
        gtk_box_pack_start(cast(raw(texts)), top, 0, 0, 0)
        let description = gtk_label_new(status.product.description)!
        addClass(description, "store-description")
        Dialogs.wrap(description, chars: 52)
        gtk_box_pack_start(cast(raw(texts)), description, 0, 0, 0)
        let stateText = status.licence.map { "UNLOCKED — licensed to \($0.licensee)" } ?? "LOCKED — enter a licence key to unlock"
        let state = gtk_label_new(stateText)!
        addClass(state, unlocked ? "store-unlocked" : "store-locked")
        Dialogs.wrap(state, chars: 52)
        gtk_box_pack_start(cast(raw(texts)), state, 0, 0, 0)
        gtk_box_pack_start(cast(raw(card)), texts, 1, 1, 0)
        setAccessible(card, name: "\(status.product.name), \(status.product.price)",
                      description: "\(status.product.description) \(stateText)")
        return card
    }

    static let keyTitle = "Enter Licence Key"

    /// The key dialog: a valid key unlocks at once; a bad one shows Store's message under the
    /// entry and changes nothing. Returns true when something was unlocked.
    func enterKey(parent: UnsafeMutablePointer<GtkWidget>?) -> Bool {
        guard let store else { return false }
        var unlocked: Licence?
        _ = Dialogs.entry(parent: parent, title: StoreFront.keyTitle, text: "Enter your licence key",
                          detail: "Paste the key you received; it starts with \(Licence.prefix)",
                          placeholder: "\(Licence.prefix)…", accept: "Unlock", width: 52, kind: .key) { [unowned self] text in
            do {
                unlocked = try store.unlock(key: text.trimmingCharacters(in: .whitespacesAndNewlines))
                lastRefusal = nil
                return nil
            } catch {
                let message = text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
                    ? "Type or paste a licence key first." : Messages.sentence("\(error)")
                lastRefusal = message
                return message
            }
        }
        guard let licence = unlocked else { return false }
        window.locksChanged()
        for change in onChange { change() }
        let name = store.catalogue.product(licence.product)?.name ?? licence.product
        inform?(.info, "The \(name) is unlocked (licensed to \(licence.licensee)). Thank you!")
        return true
    }
}

extension UnsafeMutablePointer where Pointee == GtkWidget {
    /// Sets a GtkLabel's text.
    func setText(_ text: String) { gtk_label_set_text(cast(raw(self)), text) }
}
