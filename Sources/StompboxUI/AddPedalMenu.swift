import CGtk
import Foundation
import StompboxAudio
import StompboxCore
import StompboxDSP

/// "Add pedal…" at the end of the selectors: a menu of the built-in pedals not on the board,
/// then "LV2 plugins": the installed plugins that can be pedals, in submenus by the first letter
/// of their names (so hundreds stay usable). The one chosen goes on at the end, a plugin
/// switched on.
final class AddPedalMenu {
    let button = gtk_button_new_with_label("Add pedal…")!
    private let engine: LiveEngine
    private unowned let board: BoardView
    private let onReadout: (String?) -> Void
    /// The menu while open.
    private var menu: UnsafeMutablePointer<GtkWidget>?
    /// The installed plugins that can be pedals (read once, when the menu first opens).
    private lazy var installedPlugins: [LV2PluginInfo] = LV2World.shared.plugins().filter(\.canHost)

    init(engine: LiveEngine, board: BoardView, onReadout: @escaping (String?) -> Void) {
        self.engine = engine
        self.board = board
        self.onReadout = onReadout
        addClass(button, "add-pedal")
        setAccessible(button, name: "Add pedal")
        gtk_widget_set_tooltip_text(button, "Put a pedal on the board (drag a pedal to move it, × takes it off)")
        onSignal(raw(button), "clicked") { [unowned self] in show() }
    }

    /// The built-in pedals not on the board, in the registry's order: what the menu offers first.
    var addablePedals: [PedalKind] { PedalKind.builtIn.filter { !engine.chain.board.contains($0) } }

    private func show() {
        let menu = gtk_menu_new()!
        let missing = addablePedals
        for kind in missing {
            let item = gtk_menu_item_new_with_label(kind.name)!
            onSignal(raw(item), "activate") { [unowned self] in board.rearrange { $0.append(kind) } }
            gtk_menu_shell_append(cast(raw(menu)), item)
        }
        if missing.isEmpty {
            let item = gtk_menu_item_new_with_label("Every pedal is on the board")!
            gtk_widget_set_sensitive(item, 0)
            gtk_menu_shell_append(cast(raw(menu)), item)
        }
        gtk_menu_shell_append(cast(raw(menu)), gtk_separator_menu_item_new())
        let plugins = gtk_menu_item_new_with_label("LV2 plugins")!
        gtk_menu_item_set_submenu(cast(raw(plugins)), pluginMenu())
        gtk_menu_shell_append(cast(raw(menu)), plugins)
        gtk_widget_show_all(menu)
        gtk_menu_attach_to_widget(cast(raw(menu)), button, nil)
        gtk_menu_popup_at_widget(cast(raw(menu)), button, GDK_GRAVITY_SOUTH_WEST, GDK_GRAVITY_NORTH_WEST, nil)
        self.menu.map { gtk_widget_destroy($0) }
        self.menu = menu
    }

    private func pluginMenu() -> UnsafeMutablePointer<GtkWidget> {
        let menu = gtk_menu_new()!
        let groups = Dictionary(grouping: installedPlugins) { info in
            info.name.first.map { $0.isLetter ? String($0).uppercased() : "#" } ?? "#"
        }
        for letter in groups.keys.sorted() {
            let sub = gtk_menu_new()!
            for info in groups[letter]! {
                let item = gtk_menu_item_new_with_label(info.name)!
                gtk_widget_set_tooltip_text(item, info.uri)
                onSignal(raw(item), "activate") { [unowned self] in addPlugin(info) }
                gtk_menu_shell_append(cast(raw(sub)), item)
            }
            let item = gtk_menu_item_new_with_label("\(letter)  (\(groups[letter]!.count))")!
            gtk_menu_item_set_submenu(cast(raw(item)), sub)
            gtk_menu_shell_append(cast(raw(menu)), item)
        }
        if groups.isEmpty {
            let item = gtk_menu_item_new_with_label("No LV2 plugin that can be a pedal is installed")!
            gtk_widget_set_sensitive(item, 0)
            gtk_menu_shell_append(cast(raw(menu)), item)
        }
        return menu
    }

    /// Puts a plugin on the board as a new pedal, switched on; says why if it cannot start.
    private func addPlugin(_ info: LV2PluginInfo) {
        let taken = PedalKind.reservedIDs.union(engine.chain.board.map(\.id))
        // "x42-dpl - Digital Peak Limiter Mono" → "x42-dpl-digital"
        let words = info.name.lowercased().split { !($0.isLetter || $0.isNumber) }
        var base = ""
        for word in words where base.count + word.count < 16 { base += (base.isEmpty ? "" : "-") + word }
        if base.isEmpty { base = "lv2" }
        var id = base, n = 2
        while taken.contains(id) { id = "\(base)\(n)"; n += 1 }
        do {
            let kind = try PedalKind.lv2(id: id, uri: info.uri)
            kind.enabledParameter.setPedalValue(1)
            board.rearrange { $0.append(kind) }
        } catch {
            onReadout("Cannot add \(info.name): \(error.description)")
        }
    }
}
