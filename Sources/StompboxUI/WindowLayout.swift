import CGtk
import Foundation
import StompboxDSP

/// Where the controls are on screen (root window pixels), for tests that aim clicks: the state
/// file's `layout` (see `TestHooks`). Asked only while the state file is written.
extension PedalboardWindow {
    func layout() -> [String: Any] {
        guard gtk_widget_get_mapped(window) != 0 else { return [:] }
        var result = board.layout()
        result["more"] = rootCentre(moreButton)
        result["about"] = rootCentre(statusBar.aboutButton)
        result["add_pedal"] = rootCentre(addMenu.button)
        result["audio"] = statusBar.devicePicker.layout
        result["addable"] = addMenu.addablePedals.map(\.id)
        result["output_meter"] = ["clip": outputMeter.clipped, "limiter_db": outputMeter.reduction] as [String: Any]
        result["board"] = board.shownBoard.map(\.id)
        result["zoom"] = zoom
        // Until false, the pedals may still be rebuilt at another zoom (and move).
        result["zoom_pending"] = board.isZoomPending
        result["tracks_button"] = rootCentre(tracksButton)
        if gtk_widget_get_visible(tracks.widget) != 0 { result["tracks"] = tracks.layout }
        result["tuner_button"] = rootCentre(tunerButton)
        result["tuner_play_through"] = rootCentre(tuner.playThrough)
        result["tempo"] = ["bpm": rootCentre(tempo.bpmEntry), "tap": rootCentre(tempo.tapButton),
                           "metronome": rootCentre(tempo.clickButton), "beats": rootCentre(tempo.beatsSpin)]
        // The smallest knob's control (logical pixels): what a finger has to hit.
        let knobSizes = board.pedals.flatMap(\.knobs).map { [Int(gtk_widget_get_allocated_width($0.widget)), Int(gtk_widget_get_allocated_height($0.widget))] }
        result["smallest_knob"] = knobSizes.min { min($0[0], $0[1]) < min($1[0], $1[1]) } ?? []
        // The window's rectangle and the visible part of the pedals, in screen pixels.
        let scale = Int(gtk_widget_get_scale_factor(window))
        let topLeft = rootPoint(window, 0, 0)
        result["window"] = topLeft + [Int(gtk_widget_get_allocated_width(window)) * scale, Int(gtk_widget_get_allocated_height(window)) * scale]
        result["strip_view"] = rootPoint(board.selectorScroller, 0, 0)
            + [Int(gtk_widget_get_allocated_width(board.selectorScroller)) * scale, Int(gtk_widget_get_allocated_height(board.selectorScroller)) * scale]
        result["board_view"] = rootPoint(board.scroller, 0, 0)
            + [Int(gtk_widget_get_allocated_width(board.scroller)) * scale, Int(gtk_widget_get_allocated_height(board.scroller)) * scale]
        return result
    }
}

extension BoardView {
    /// Each pedal's place, size, LED, footswitch, controls and buttons (by its id), and the
    /// selectors' centres (`strip`).
    func layout() -> [String: Any] {
        var result: [String: Any] = [:]
        for pedal in pedals {
            var entry: [String: Any] = [
                "origin": rootPoint(pedal.widget, 0, 0),
                "size": [Int(zoomed(pedal.layout.width, zoom)), Int(zoomed(PedalLayout.height, zoom))],
                "led": { let p = pedal.point(pedal.layout.ledX, pedal.layout.ledY); return rootPoint(pedal.widget, p.x, p.y) }(),
                "footswitch": rootCentre(pedal.footswitch),
            ]
            var knobs: [String: [Int]] = [:]
            for knob in pedal.knobs { knobs[knob.parameter.id] = rootPoint(knob.widget, knob.centreInWidget.x, knob.centreInWidget.y) }
            if let eq = pedal.equalizer {
                for (band, slider) in zip(Parameter.eqBands, eq.sliders) { knobs[band.id] = rootCentre(slider) }
            }
            var rects: [String: [Int]] = [:]
            for (parameter, control, role) in pedal.choiceControls {
                let name: String
                if case .choice(let choice) = role, let names = parameter.spec.choices { name = "\(parameter.id)=\(names[choice])" } else { name = parameter.id }
                knobs[name] = rootCentre(control)
                rects[name] = rootRect(control)
            }
            entry["controls"] = knobs
            // Every control's rectangle on screen (x, y, width, height), for the layout tests.
            for knob in pedal.knobs { rects[knob.parameter.id] = rootRect(knob.widget) }
            if let eq = pedal.equalizer {
                for (band, slider) in zip(Parameter.eqBands, eq.sliders) { rects[band.id] = rootRect(slider) }
            }
            rects["footswitch"] = rootRect(pedal.footswitch)
            rects["remove"] = rootRect(pedal.removeButton)
            if let looper = pedal.looper { rects["undo"] = rootRect(looper.undoButton) }
            if let button = pedal.fileButton { rects["load_file"] = rootRect(button) }
            entry["rects"] = rects
            if let looper = pedal.looper { entry["undo"] = rootCentre(looper.undoButton) }
            entry["remove"] = rootCentre(pedal.removeButton)
            if let button = pedal.fileButton {
                entry["load_file"] = rootCentre(button)
                entry["file"] = pedal.shownFile ?? NSNull()
                entry["file_label"] = pedal.shownFileLabel ?? NSNull()
                entry["file_problem"] = pedal.shownProblem ?? NSNull()
            }
            result[pedal.kind.id] = entry
        }
        var strip: [String: [Int]] = [:]
        for (kind, button) in selectors { strip[kind.id] = rootCentre(button) }
        result["strip"] = strip
        return result
    }
}
