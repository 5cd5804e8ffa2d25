import CGtk
import Foundation

/// Small modal dialogs in the window's style: a message with an icon (GtkMessageDialog's
/// layout; its constructor is variadic, so it is built from a plain GtkDialog), a one-line
/// entry, and the file chooser. Each runs its own loop (`gtk_dialog_run`) and is destroyed
/// before returning, which releases every signal closure connected to it.
enum Dialogs {
    enum Kind {
        case info, warning, error, question, key
        var iconName: String {
            switch self {
            case .key: "dialog-password"
            case .info: "dialog-information"
            case .warning: "dialog-warning"
            case .error: "dialog-error"
            case .question: "dialog-question"
            }
        }
    }

    /// Titles of the dialogs that exist now (made and not yet destroyed), innermost last; the
    /// state file shows them to tests.
    private(set) static var open: [String] = []

    /// A new modal dialog on `parent`, with the Stompbox look.
    static func make(title: String, parent: UnsafeMutablePointer<GtkWidget>?) -> UnsafeMutablePointer<GtkWidget> {
        let dialog = gtk_dialog_new()!
        gtk_window_set_title(cast(raw(dialog)), title)
        if let parent { gtk_window_set_transient_for(cast(raw(dialog)), cast(raw(parent))) }
        gtk_window_set_modal(cast(raw(dialog)), 1)
        gtk_window_set_destroy_with_parent(cast(raw(dialog)), 1)
        gtk_window_set_position(cast(raw(dialog)), GTK_WIN_POS_CENTER_ON_PARENT)
        gtk_window_set_resizable(cast(raw(dialog)), 0)
        addClass(dialog, "stompbox-dialog")
        open.append(title)
        onSignal(raw(dialog), "destroy") {
            if let i = Dialogs.open.lastIndex(of: title) { Dialogs.open.remove(at: i) }
        }
        return dialog
    }

    static func content(_ dialog: UnsafeMutablePointer<GtkWidget>) -> UnsafeMutablePointer<GtkWidget> {
        gtk_dialog_get_content_area(cast(raw(dialog)))
    }

    @discardableResult
    static func addButton(_ dialog: UnsafeMutablePointer<GtkWidget>, _ label: String, _ response: GtkResponseType,
                          style: String? = nil) -> UnsafeMutablePointer<GtkWidget> {
        let button = gtk_dialog_add_button(cast(raw(dialog)), label, response.rawValue)!
        if let style { addClass(button, style) }
        return button
    }

    /// Shows the dialog and waits for its answer.
    static func run(_ dialog: UnsafeMutablePointer<GtkWidget>) -> GtkResponseType {
        gtk_widget_show_all(dialog)
        return GtkResponseType(rawValue: gtk_dialog_run(cast(raw(dialog))))
    }

    /// The icon-and-text body of a message: a bold first line and an optional explanation.
    static func messageBody(kind: Kind, text: String, detail: String?) -> (box: UnsafeMutablePointer<GtkWidget>, detail: UnsafeMutablePointer<GtkWidget>) {
        let row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 16)!
        gtk_container_set_border_width(cast(raw(row)), 18)
        let icon = gtk_image_new_from_icon_name(kind.iconName, GTK_ICON_SIZE_DIALOG)!
        gtk_widget_set_valign(icon, GTK_ALIGN_START)
        gtk_box_pack_start(cast(raw(row)), icon, 0, 0, 0)
        let texts = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8)!
        let primary = gtk_label_new(text)!
        addClass(primary, "dialog-primary")
        wrap(primary, chars: 46)
        gtk_box_pack_start(cast(raw(texts)), primary, 0, 0, 0)
        let secondary = gtk_label_new(detail ?? "")!
        addClass(secondary, "dialog-secondary")
        wrap(secondary, chars: 56)
        gtk_label_set_selectable(cast(raw(secondary)), 1)
        gtk_widget_set_can_focus(secondary, 0)
        gtk_box_pack_start(cast(raw(texts)), secondary, 0, 0, 0)
        gtk_box_pack_start(cast(raw(row)), texts, 1, 1, 0)
        if detail == nil { gtk_widget_set_no_show_all(secondary, 1) }
        return (row, secondary)
    }

    static func wrap(_ label: UnsafeMutablePointer<GtkWidget>, chars: Int32) {
        gtk_label_set_line_wrap(cast(raw(label)), 1)
        gtk_label_set_max_width_chars(cast(raw(label)), chars)
        gtk_label_set_xalign(cast(raw(label)), 0)
    }

    /// A message with buttons; returns the response. `buttons` are (label, response, style class),
    /// the last one is the default (Return).
    @discardableResult
    static func message(parent: UnsafeMutablePointer<GtkWidget>?, kind: Kind, title: String, text: String,
                        detail: String? = nil, buttons: [(String, GtkResponseType, String?)] = [("OK", GTK_RESPONSE_OK, nil)])
        -> GtkResponseType {
        let dialog = make(title: title, parent: parent)
        let body = messageBody(kind: kind, text: text, detail: detail)
        gtk_box_pack_start(cast(raw(content(dialog))), body.box, 1, 1, 0)
        for (label, response, style) in buttons { addButton(dialog, label, response, style: style) }
        if let last = buttons.last { gtk_dialog_set_default_response(cast(raw(dialog)), last.1.rawValue) }
        setAccessible(dialog, name: title, description: [text, detail].compactMap { $0 }.joined(separator: " "),
                      role: kind == .error || kind == .warning ? ATK_ROLE_ALERT : ATK_ROLE_DIALOG)
        let answer = run(dialog)
        gtk_widget_destroy(dialog)
        return answer
    }

    /// Asks for one line of text. `validate` returns an error message to show under the entry
    /// (the dialog stays open with the text kept) or nil to accept; nil result = cancelled.
    static func entry(parent: UnsafeMutablePointer<GtkWidget>?, title: String, text: String, detail: String? = nil,
                      initial: String = "", placeholder: String = "", accept: String, width: Int32 = 40,
                      kind: Kind = .question, validate: (String) -> String?) -> String? {
        let dialog = make(title: title, parent: parent)
        let body = messageBody(kind: kind, text: text, detail: detail)
        let column = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8)!
        gtk_box_pack_start(cast(raw(column)), body.box, 0, 0, 0)
        let field = gtk_entry_new()!
        gtk_entry_set_text(cast(raw(field)), initial)
        gtk_entry_set_placeholder_text(cast(raw(field)), placeholder)
        gtk_entry_set_width_chars(cast(raw(field)), width)
        gtk_entry_set_activates_default(cast(raw(field)), 1)
        setAccessible(field, name: title)
        gtk_widget_set_margin_start(field, 18)
        gtk_widget_set_margin_end(field, 18)
        gtk_box_pack_start(cast(raw(column)), field, 0, 0, 0)
        let problem = gtk_label_new("")!
        addClass(problem, "dialog-error-text")
        wrap(problem, chars: 56)
        gtk_widget_set_margin_start(problem, 18)
        gtk_widget_set_margin_end(problem, 18)
        gtk_widget_set_no_show_all(problem, 1)
        gtk_box_pack_start(cast(raw(column)), problem, 0, 0, 4)
        gtk_box_pack_start(cast(raw(content(dialog))), column, 1, 1, 0)
        addButton(dialog, "Cancel", GTK_RESPONSE_CANCEL)
        addButton(dialog, accept, GTK_RESPONSE_OK, style: "suggested-action")
        gtk_dialog_set_default_response(cast(raw(dialog)), GTK_RESPONSE_OK.rawValue)
        gtk_widget_grab_focus(field)
        defer { gtk_widget_destroy(dialog) }
        while run(dialog) == GTK_RESPONSE_OK {
            let value = String(cString: gtk_entry_get_text(cast(raw(field))))
            guard let message = validate(value) else { return value }
            gtk_label_set_text(cast(raw(problem)), message)
            gtk_widget_show(problem)
            if let accessible = gtk_widget_get_accessible(problem) { atk_object_set_name(accessible, message) }
            gtk_widget_grab_focus(field)
        }
        return nil
    }

    /// The file chooser for one `.json` file: `save` asks for a new name (GTK confirms replacing
    /// an existing file), otherwise an existing file is picked. Returns the path or nil.
    static func chooseFile(parent: UnsafeMutablePointer<GtkWidget>?, title: String, save: Bool, suggestedName: String? = nil,
                           filter: (name: String, patterns: [String]) = ("Stompbox presets (*.json)", ["*.json"]),
                           accept: String? = nil, folder: String? = nil) -> String? {
        let parentWindow: UnsafeMutablePointer<GtkWindow>? = parent.map { cast(raw($0)) }
        let chooser = gtk_file_chooser_native_new(title, parentWindow,
                                                  save ? GTK_FILE_CHOOSER_ACTION_SAVE : GTK_FILE_CHOOSER_ACTION_OPEN,
                                                  accept ?? (save ? "_Export" : "_Import"), "_Cancel")!
        defer { g_object_unref(raw(chooser)) }
        let asChooser = chooser
        if save {
            gtk_file_chooser_set_do_overwrite_confirmation(asChooser, 1)
            if let suggestedName { gtk_file_chooser_set_current_name(asChooser, suggestedName) }
        }
        if let folder, FileManager.default.fileExists(atPath: folder) { gtk_file_chooser_set_current_folder(asChooser, folder) }
        let wanted = gtk_file_filter_new()!
        gtk_file_filter_set_name(wanted, filter.name)
        for pattern in filter.patterns { gtk_file_filter_add_pattern(wanted, pattern) }
        gtk_file_chooser_add_filter(asChooser, wanted)
        let all = gtk_file_filter_new()!
        gtk_file_filter_set_name(all, "All files")
        gtk_file_filter_add_pattern(all, "*")
        gtk_file_chooser_add_filter(asChooser, all)
        open.append(title)
        defer { open.removeLast() }
        guard gtk_native_dialog_run(cast(raw(chooser))) == GTK_RESPONSE_ACCEPT.rawValue,
              let name = gtk_file_chooser_get_filename(asChooser) else { return nil }
        defer { g_free(name) }
        return String(cString: name)
    }
}
