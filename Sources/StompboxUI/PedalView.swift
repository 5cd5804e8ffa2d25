import CGtk
import Foundation
import StompboxDSP

/// One stomp box on the board: its SVG enclosure, its controls, LED and footswitch (plus the
/// EQ's faders and curve, or the looper's bar and buttons, when its face has that panel).
/// Each control comes from its parameter's scale: a knob for a range, a switch for two to
/// four choices or an on/off setting, a menu for more choices.
///
/// `zoom` scales the whole pedal (the board fits it to the window, `BoardZoom`): the layout stays
/// in the pedal's own coordinates, the widgets are placed and sized at `zoom` times those, and
/// the face, knobs and looper footswitch draw in the pedal's coordinates under a cairo scale.
final class PedalView {
    let kind: PedalKind
    let layout: PedalLayout
    let zoom: Double
    let store: ParameterStore
    /// The pedal's root widget (a GtkFixed the size of the enclosure).
    let widget: UnsafeMutablePointer<GtkWidget>
    let face: UnsafeMutablePointer<GtkWidget>
    private(set) var knobs: [Knob] = []
    private(set) var footswitch: UnsafeMutablePointer<GtkWidget>!
    var equalizer: EqualizerSection?
    var looper: LooperSection?
    /// What a control for a discrete parameter is: one button of a selector switch (the choice
    /// it stands for), a toggle, or a mini-menu.
    enum ChoiceRole { case choice(Int), toggle, menu }
    /// Switches, toggles and menus for discrete parameters.
    private(set) var choiceControls: [(parameter: Parameter, widget: UnsafeMutablePointer<GtkWidget>, role: ChoiceRole)] = []
    /// What each mini-menu shows for each choice, by parameter id (a loaded file's name last).
    private var menuLabels: [String: [String]] = [:]
    private var updating = false
    private let svgPath: String?
    private let ink: PedalInk
    private var artwork: (scale: Int32, pixbuf: OpaquePointer)?
    /// Whether the store keeps this pedal locked (a padlock shows; the footswitch calls `onLocked`).
    var isLocked: () -> Bool = { false } { didSet { looper?.isLocked = isLocked } }
    var onLocked: (() -> Void)? { didSet { looper?.onLocked = onLocked } }
    /// The pedal was dragged on the board by (`dx`, `dy`) logical pixels (mouse or finger on its face).
    var onMoved: ((Double, Double) -> Void)?
    /// The pedal's remove button was pressed.
    var onRemove: (() -> Void)?
    /// A press anywhere on the pedal (a knob, a switch, the enclosure) selects it: B and the
    /// `pedal:selected` footswitch switch the selected pedal. Its outline shows it.
    var onSelected: (() -> Void)?
    var isSelected = false { didSet { if isSelected != oldValue { gtk_widget_queue_draw(face) } } }
    private var selectGesture: OpaquePointer?
    /// Set for a pedal that loads a file of one's own: a "Load file…" button under its menu
    /// calls it (`addFileButton`).
    private(set) var fileButton: UnsafeMutablePointer<GtkWidget>?
    /// The file the pedal has loaded now (asked at each `sync`), and the one the menu shows.
    var currentFile: (() -> String?)?
    /// What the menu shows for a file (its name; a model's own name), and why the file shown
    /// cannot play (a preset's model gone: the pedal says so and passes its input through).
    var fileLabel: ((String) -> String)?
    var fileProblem: (() -> String?)?
    var fileDetail: (() -> String?)?
    /// Files loaded before, offered again under the menu's choices, and what picking one does.
    var recentFiles: (() -> [String])?
    var onRecentFile: ((String) -> Void)?
    private(set) var shownFile: String?
    private(set) var shownProblem: String?
    /// What the menu shows for the file shown.
    var shownFileLabel: String? { shownFile.map { fileLabel?($0) ?? URL(fileURLWithPath: $0).lastPathComponent } }
    private(set) var removeButton: UnsafeMutablePointer<GtkWidget>!
    /// GTK 3 widgets do not own their gestures: kept here, freed on destroy.
    private var dragGesture: OpaquePointer?

    /// Choices drawn as glyphs on a switch, by the choice's name.
    static let glyphs = ["sine": "∿", "triangle": "⋀", "square": "⊓"]

    init(kind: PedalKind, store: ParameterStore, looperControl: LooperControl, zoom: Double = 1,
         onReadout: @escaping (String?) -> Void) {
        self.kind = kind
        self.store = store
        self.zoom = zoom
        layout = PedalLayout.of(kind)
        svgPath = ResourceLocator.path("pedal-\(kind.id).svg")
        let ink = PedalInk(kind)
        self.ink = ink
        widget = gtk_fixed_new()
        addClass(widget, "pedal")
        face = gtk_drawing_area_new()
        size(widget, layout.width, PedalLayout.height)
        size(face, layout.width, PedalLayout.height)
        put(face, 0, 0)

        for place in layout.places {
            switch (place.kind, place.parameter.spec.scale) {
            case (.selector, .choice(let names)): addSwitch(place, names)
            case (.menu, .choice(let names)): addMenu(place, names)
            case (.toggle, _): addToggle(place)
            case (.knob, _):
                let knob = Knob(parameter: place.parameter, store: store, diameter: place.diameter, width: place.width, ink: ink, zoom: zoom)
                knob.onReadout = onReadout
                knobs.append(knob)
                put(knob.widget, place.x, place.y)
            default: break
            }
        }
        switch kind.face.panel {
        case .equalizer:
            let eq = EqualizerSection(store: store, width: layout.width, zoom: zoom)
            eq.onReadout = onReadout
            equalizer = eq
            let screen = kind.face.artwork?.screen ?? PedalFace.Rect(12, 12, layout.width - 24, 74)
            put(eq.curve, screen.x, screen.y)
            for (band, slider) in zip(kind.controls, eq.sliders) {
                guard let frame = layout.frame(band.id) else { continue }
                size(slider, frame.width, frame.height)
                put(slider, frame.x, frame.y)
            }
            // Each band's name under its fader, as wide as the fader's pitch.
            for (band, label) in zip(kind.controls, eq.labels) {
                guard let frame = layout.frame(band.id) else { continue }
                put(label, frame.x - 1, frame.y + frame.height + 2)
            }
        case .looper:
            let section = LooperSection(control: looperControl, store: store, face: face, width: layout.width, zoom: zoom,
                                        bar: kind.face.artwork?.bar ?? PedalFace.Rect(18, 96, layout.width - 36, 16))
            looper = section
            put(section.undoButton, PedalFace.undo.x, PedalFace.undo.y)
        case .controls:
            break
        }
        addFootswitch()
        addMoveAndRemove()
        syncChoices()
        // Seen before the control under the finger handles the press, and never claimed.
        let select = gtk_gesture_multi_press_new(widget)!
        gtk_gesture_single_set_button(select, 0)
        gtk_event_controller_set_propagation_phase(select, GTK_PHASE_CAPTURE)
        selectGesture = select
        onPress(raw(select), "pressed") { [unowned self] _, _, _ in onSelected?() }
        onEvent(raw(face), "draw") { [unowned self] cr in drawFace(OpaquePointer(cr!)); return true }
        onSignal(raw(widget), "destroy") { [unowned self] in
            if let artwork { g_object_unref(raw(artwork.pixbuf)) }
            artwork = nil
            if let dragGesture { g_object_unref(raw(dragGesture)) }
            dragGesture = nil
            if let selectGesture { g_object_unref(raw(selectGesture)) }
            selectGesture = nil
        }
    }

    /// Puts a control at (x, y) in the pedal's coordinates.
    private func put(_ child: UnsafeMutablePointer<GtkWidget>, _ x: Int, _ y: Int) {
        gtk_fixed_put(cast(raw(widget)), child, zoomed(x, zoom), zoomed(y, zoom))
    }

    /// Sizes a widget in the pedal's coordinates.
    private func size(_ child: UnsafeMutablePointer<GtkWidget>, _ width: Int, _ height: Int) {
        gtk_widget_set_size_request(child, zoomed(width, zoom), zoomed(height, zoom))
    }

    /// A point in the pedal's coordinates, in the pedal widget's (logical pixels).
    func point(_ x: Int, _ y: Int) -> (x: Int, y: Int) { (Int(zoomed(x, zoom)), Int(zoomed(y, zoom))) }

    private func addFootswitch() {
        if let looper {
            footswitch = looper.footswitch
        } else {
            footswitch = gtk_toggle_button_new()
            addClass(footswitch, "footswitch")
            self.size(footswitch, PedalFace.footswitchSize, PedalFace.footswitchSize)
            setAccessible(footswitch, name: kind.enabledParameter.spec.name)
            gtk_widget_set_tooltip_text(footswitch, kind.plugin.map { "\(kind.name) <\($0.uri)>\($0.saved == nil ? "" : ": not installed, bypassed")" }
                                            ?? "\(kind.name): click or tap to switch on/off")
            gtk_toggle_button_set_active(cast(raw(footswitch)), store.isOn(kind.enabledParameter) ? 1 : 0)
            onSignal(raw(footswitch), "toggled") { [unowned self] in
                guard !updating else { return }
                let on = gtk_toggle_button_get_active(cast(raw(footswitch))) != 0
                if on && isLocked() {
                    sync()
                    onLocked?()
                    return
                }
                store.set(kind.enabledParameter, on ? 1 : 0)
                gtk_widget_queue_draw(face)
            }
        }
        let frame = layout.frame("footswitch")!
        put(footswitch, frame.x, frame.y)
    }

    /// Dragging the enclosure (anywhere no control is) moves the pedal along the board; the
    /// small × in its corner takes it off the board.
    private func addMoveAndRemove() {
        gtk_widget_add_events(face, Int32(bitPattern: GDK_BUTTON_PRESS_MASK.rawValue | GDK_BUTTON_RELEASE_MASK.rawValue
            | GDK_POINTER_MOTION_MASK.rawValue | GDK_TOUCH_MASK.rawValue))
        let drag = gtk_gesture_drag_new(face)!
        dragGesture = drag
        onPoint(raw(drag), "drag-end") { [unowned self] dx, dy in
            if max(abs(dx), abs(dy)) >= 24 { onMoved?(dx, dy) }
        }
        removeButton = gtk_button_new_with_label("×")
        addClass(removeButton, "pedal-remove")
        // A mouse target (not for a finger on stage): never smaller than at zoom 1.
        gtk_widget_set_size_request(removeButton, max(22, zoomed(22, zoom)), max(22, zoomed(22, zoom)))
        setAccessible(removeButton, name: "Remove \(kind.name)")
        gtk_widget_set_tooltip_text(removeButton, "Take the \(kind.name) off the board (Add pedal… puts it back)")
        onSignal(raw(removeButton), "clicked") { [unowned self] in onRemove?() }
        let frame = layout.frame("remove")!
        put(removeButton, frame.x, frame.y)
    }

    /// A vertical selector switch with one position per choice.
    private func addSwitch(_ place: PedalLayout.Place, _ names: [String]) {
        let parameter = place.parameter
        let spec = parameter.spec
        var group: UnsafeMutablePointer<GtkRadioButton>?
        for (i, name) in names.enumerated() {
            let label = place.labels?[i] ?? PedalView.glyphs[name] ?? name
            let button = gtk_radio_button_new_with_label_from_widget(group, label)!
            if group == nil { group = cast(raw(button)) }
            gtk_toggle_button_set_mode(cast(raw(button)), 0)
            addClass(button, "shape-switch")
            size(button, place.width, PedalFace.switchButtonHeight)
            setAccessible(button, name: "\(spec.name) \(name)")
            gtk_widget_set_tooltip_text(button, "\(spec.name): \(name)")
            onSignal(raw(button), "toggled") { [unowned self] in
                guard !updating, gtk_toggle_button_get_active(cast(raw(button))) != 0 else { return }
                store.set(parameter, Float(i))
            }
            choiceControls.append((parameter, button, .choice(i)))
            put(button, place.x, place.y + i * PedalFace.switchPitch)
        }
    }

    /// A toggle: its lever and LED show its state, its printed name what it is ("TRAILS").
    private func addToggle(_ place: PedalLayout.Place) {
        let parameter = place.parameter
        let spec = parameter.spec
        let name = spec.shortName.uppercased()
        let ink = ink
        let toggle = FaceControl.button(toggle: true, width: place.width, height: place.height, zoom: zoom) { cr, widget in
            FaceControl.drawToggle(cr, width: place.width, on: gtk_toggle_button_get_active(cast(raw(widget))) != 0, name: name,
                                   ink: ink, focused: FaceControl.isFocused(widget))
        }
        setAccessible(toggle, name: spec.name)
        gtk_widget_set_tooltip_text(toggle, "\(spec.name): click or tap to switch on/off")
        onSignal(raw(toggle), "toggled") { [unowned self] in
            guard !updating else { return }
            store.set(parameter, gtk_toggle_button_get_active(cast(raw(toggle))) != 0 ? 1 : 0)
        }
        choiceControls.append((parameter, toggle, .toggle))
        put(toggle, place.x, place.y)
    }

    /// A labelled mini-menu: shows its name and the choice it stands at; a press drops down
    /// the choices.
    private func addMenu(_ place: PedalLayout.Place, _ names: [String]) {
        let parameter = place.parameter
        menuLabels[parameter.id] = names.indices.map { place.labels?[$0] ?? names[$0] }
        let ink = ink
        let menu = FaceControl.button(toggle: false, width: place.width, height: place.height, zoom: zoom) { [unowned self] cr, widget in
            let labels = menuLabels[parameter.id] ?? names
            let index = min(max(Int(store.load(parameter)), 0), labels.count - 1)
            FaceControl.drawMenu(cr, width: place.width, caption: place.caption, value: labels[index], ink: ink, focused: FaceControl.isFocused(widget))
        }
        setAccessible(menu, name: parameter.spec.name)
        gtk_widget_set_tooltip_text(menu, parameter.spec.name)
        onSignal(raw(menu), "clicked") { [unowned self] in dropDown(parameter, from: menu) }
        choiceControls.append((parameter, menu, .menu))
        put(menu, place.x, place.y)
    }

    /// The menu of a mini-menu's choices under it, the current one marked.
    private func dropDown(_ parameter: Parameter, from button: UnsafeMutablePointer<GtkWidget>) {
        guard let labels = menuLabels[parameter.id] else { return }
        let menu = gtk_menu_new()!
        addClass(menu, "face-menu")
        let current = Int(store.load(parameter))
        for (i, label) in labels.enumerated() {
            let item = gtk_check_menu_item_new_with_label(label)!
            gtk_check_menu_item_set_draw_as_radio(cast(raw(item)), 1)
            gtk_check_menu_item_set_active(cast(raw(item)), i == current ? 1 : 0)
            onSignal(raw(item), "activate") { [unowned self] in
                store.set(parameter, Float(i))
                gtk_widget_queue_draw(button)
            }
            gtk_menu_shell_append(cast(raw(menu)), item)
        }
        let recent = (recentFiles?() ?? []).filter { $0 != shownFile }
        if !recent.isEmpty, let onRecentFile {
            gtk_menu_shell_append(cast(raw(menu)), gtk_separator_menu_item_new())
            for path in recent {
                let item = gtk_menu_item_new_with_label(fileLabel?(path) ?? URL(fileURLWithPath: path).lastPathComponent)!
                gtk_widget_set_tooltip_text(item, path)
                onSignal(raw(item), "activate") { onRecentFile(path) }
                gtk_menu_shell_append(cast(raw(menu)), item)
            }
        }
        gtk_widget_show_all(menu)
        // Destroyed with the pedal, or replaced by the next drop-down.
        onSignal(raw(menu), "deactivate") {
            _ = addTimeout(milliseconds: 0) { gtk_widget_destroy(menu); return false }
        }
        gtk_menu_attach_to_widget(cast(raw(menu)), button, nil)
        gtk_menu_popup_at_widget(cast(raw(menu)), button, GDK_GRAVITY_SOUTH_WEST, GDK_GRAVITY_NORTH_WEST, nil)
    }

    /// A printed button under the pedal's menu that asks for a file (`onPress` opens the chooser).
    func addFileButton(title: String, onPress: @escaping () -> Void) {
        guard let frame = layout.frame("load_file") else { return }
        let ink = ink
        let words = title.uppercased()
        let button = FaceControl.button(toggle: false, width: frame.width, height: frame.height, zoom: zoom) { cr, widget in
            FaceControl.drawButton(cr, width: frame.width, height: frame.height, title: words, pressed: FaceControl.isPressed(widget),
                                   ink: ink, focused: FaceControl.isFocused(widget))
        }
        setAccessible(button, name: "\(kind.name) \(title)")
        gtk_widget_set_tooltip_text(button, title)
        onSignal(raw(button), "clicked") { onPress() }
        put(button, frame.x, frame.y)
        fileButton = button
    }

    /// The menu's last entry (the file choice) shows the file loaded by its name, its tooltip the path.
    func showFile(_ path: String?) {
        shownFile = path
        shownProblem = fileProblem?()
        for (parameter, control, role) in choiceControls {
            guard case .menu = role else { continue }
            let detail = fileDetail?().map { "\n\($0)" } ?? ""
            let tip = path.map { "\(parameter.spec.name): \($0)" + (shownProblem.map { "\n\($0)" } ?? detail) } ?? parameter.spec.name
            gtk_widget_set_tooltip_text(control, tip)
            guard let path, var labels = menuLabels[parameter.id], !labels.isEmpty else { continue }
            labels[labels.count - 1] = fileLabel?(path) ?? URL(fileURLWithPath: path).lastPathComponent
            menuLabels[parameter.id] = labels
            gtk_widget_queue_draw(control)
        }
    }

    private func syncChoices() {
        let wasUpdating = updating
        updating = true
        defer { updating = wasUpdating }
        for (parameter, control, role) in choiceControls {
            let index = Int(store.load(parameter))
            switch role {
            case .menu:
                gtk_widget_queue_draw(control)
            case .toggle:
                if (gtk_toggle_button_get_active(cast(raw(control))) != 0) != (index != 0) {
                    gtk_toggle_button_set_active(cast(raw(control)), index != 0 ? 1 : 0)
                }
            case .choice(let choice):
                if choice == index, gtk_toggle_button_get_active(cast(raw(control))) == 0 {
                    gtk_toggle_button_set_active(cast(raw(control)), 1)
                }
            }
        }
    }

    /// Brings every control in line with the parameter store (after a change made elsewhere).
    func sync() {
        updating = true
        defer { updating = false }
        for knob in knobs { knob.sync() }
        if looper == nil {
            let on = store.isOn(kind.enabledParameter)
            if (gtk_toggle_button_get_active(cast(raw(footswitch))) != 0) != on {
                gtk_toggle_button_set_active(cast(raw(footswitch)), on ? 1 : 0)
            }
        }
        syncChoices()
        if let currentFile, currentFile() != shownFile || fileProblem?() != shownProblem { showFile(currentFile()) }
        equalizer?.sync()
        gtk_widget_queue_draw(face)
    }

    /// LED colour: red when on (the looper: red while recording, green while playing), nil when dark.
    var ledColour: (Double, Double, Double)? {
        if let looper { return looper.ledColour }
        return store.isOn(kind.enabledParameter) ? (1.0, 0.16, 0.08) : nil
    }

    private func drawFace(_ cr: OpaquePointer) {
        let scale = gtk_widget_get_scale_factor(face)
        if artwork?.scale != scale, let svgPath {
            if let old = artwork { g_object_unref(raw(old.pixbuf)) }
            artwork = nil
            // Rendered at device pixels (zoom × GDK scale) so a zoomed board and GDK_SCALE=2 stay sharp.
            if let pixbuf = gdk_pixbuf_new_from_file_at_scale(svgPath, zoomed(layout.width, zoom) * scale,
                                                                zoomed(PedalLayout.height, zoom) * scale, 0, nil) {
                artwork = (scale, pixbuf)
            }
        }
        // Everything below draws in the pedal's own coordinates.
        cairo_scale(cr, zoom, zoom)
        if let artwork {
            cairo_save(cr)
            cairo_scale(cr, 1 / (Double(artwork.scale) * zoom), 1 / (Double(artwork.scale) * zoom))
            gdk_cairo_set_source_pixbuf(cr, artwork.pixbuf, 0, 0)
            cairo_paint(cr)
            cairo_restore(cr)
        } else {
            drawGenericFace(cr)
        }
        drawLED(cr)
        looper?.drawBar(cr)
        if isLocked() { drawLockedOverlay(cr, width: Double(layout.width), height: Double(PedalLayout.height)) }
        if isSelected {
            cairo_set_source_rgba(cr, 1, 0.85, 0.3, 0.9)
            cairo_set_line_width(cr, 3)
            cairo_rectangle(cr, 1.5, 1.5, Double(layout.width) - 3, Double(PedalLayout.height) - 3)
            cairo_stroke(cr)
        }
    }

    /// A pedal without artwork (a plugin pedal): a plain enclosure with its name under the LED;
    /// a missing plugin says so in red; controls beyond those shown are counted.
    private func drawGenericFace(_ cr: OpaquePointer) {
        let width = Double(layout.width)
        cairo_set_source_rgb(cr, kind.isMissing ? 0.3 : 0.26, 0.28, kind.isMissing ? 0.28 : 0.34)
        roundedRectangle(cr, 4, 0, width - 8, Double(PedalLayout.height - 8), 14)
        cairo_fill(cr)
        cairo_select_font_face(cr, "Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD)
        func centred(_ text: String, y: Double, size: Double) {
            cairo_set_font_size(cr, size)
            var extents = cairo_text_extents_t()
            cairo_text_extents(cr, text, &extents)
            cairo_move_to(cr, (width - extents.width) / 2 - extents.x_bearing, y)
            cairo_show_text(cr, text)
        }
        // The plugin's name, cut to the face's width.
        var name = kind.name
        while name.count > 4 {
            cairo_set_font_size(cr, 12)
            var extents = cairo_text_extents_t()
            cairo_text_extents(cr, name, &extents)
            if extents.width <= width - 24 { break }
            name = String(name.dropLast(2)) + "…"
        }
        // The footswitch (the artwork prints it on the other pedals; its button is see-through).
        let (x, y) = (width / 2, Double(layout.switchY))
        fillCircle(cr, x: x, y: y, radius: 24, light: (x - 6, y - 6, 2), gradientRadius: 26,
                   stops: [(0, 0.95, 0.95, 0.95, 1), (1, 0.45, 0.46, 0.48, 1)])
        cairo_set_source_rgb(cr, 0.95, 0.95, 0.95)
        centred(name, y: 196, size: 12)
        cairo_set_source_rgb(cr, 0.7, 0.75, 0.8)
        centred("LV2", y: 214, size: 10)
        if kind.isMissing {
            cairo_set_source_rgb(cr, 1, 0.35, 0.3)
            centred("MISSING: NOT INSTALLED", y: 60, size: 11)
            centred("bypassed, kept in the preset", y: 80, size: 10)
        } else if kind.controls.count > layout.places.count {
            cairo_set_source_rgb(cr, 0.8, 0.8, 0.8)
            centred("first \(layout.places.count) of \(kind.controls.count) controls (all: --set, presets)", y: 236, size: 9)
        }
    }

    private func drawLED(_ cr: OpaquePointer) {
        let x = Double(layout.ledX), y = Double(layout.ledY)
        if let (r, g, b) = ledColour {
            fillCircle(cr, x: x, y: y, radius: 16, light: (x, y, 1), gradientRadius: 16,
                       stops: [(0, r, g, b, 0.9), (0.35, r, g, b, 0.45), (1, r, g, b, 0)])
            cairo_set_source_rgb(cr, r, g, b)
            cairo_arc(cr, x, y, 5, 0, 2 * .pi)
            cairo_fill(cr)
            cairo_set_source_rgba(cr, 1, 1, 1, 0.75)
            cairo_arc(cr, x - 1.5, y - 1.8, 1.6, 0, 2 * .pi)
            cairo_fill(cr)
        } else {
            fillCircle(cr, x: x, y: y, radius: 5.3, light: (x - 1.5, y - 1.5, 0.5), gradientRadius: 5.5,
                       stops: [(0, 0.55, 0.22, 0.2, 1), (1, 0.22, 0.04, 0.04, 1)])
        }
    }

    /// Fills a circle with a radial gradient from a small `light` circle out to `gradientRadius`
    /// around its centre (stops: offset, red, green, blue, alpha).
    private func fillCircle(_ cr: OpaquePointer, x: Double, y: Double, radius: Double, light: (x: Double, y: Double, radius: Double),
                            gradientRadius: Double, stops: [(Double, Double, Double, Double, Double)]) {
        let pattern = cairo_pattern_create_radial(light.x, light.y, light.radius, x, y, gradientRadius)
        for (offset, r, g, b, a) in stops { cairo_pattern_add_color_stop_rgba(pattern, offset, r, g, b, a) }
        cairo_set_source(cr, pattern)
        cairo_arc(cr, x, y, radius, 0, 2 * .pi)
        cairo_fill(cr)
        cairo_pattern_destroy(pattern)
    }
}
