import ArgumentParser
import Foundation
import StompboxAudio

/// `stompbox plugins [--json] [--uri URI] [--verbose]`: the installed LV2 plugins and their controls.
struct PluginsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugins",
        abstract: "Lists the installed LV2 plugins and their control ports.",
        discussion: """
            Plugins are found where LV2 hosts look: the folders of $LV2_PATH, else ~/.lv2, \
            /usr/local/lib/lv2 and /usr/lib/lv2. Each is listed with its URI, name, audio inputs and \
            outputs, whether Stompbox can use it as a pedal (and why not), and its control ports: \
            symbol, name, range, default, unit, and whether it is a toggle, whole numbers, \
            logarithmic, or an enumeration (with its labelled values).
            """)

    @Flag(help: "Print JSON: a list of plugins with the same fields as the text.")
    var json = false

    @Option(help: ArgumentHelp("Only this plugin (an error if it is not installed).", valueName: "uri"))
    var uri: String?

    @Flag(help: "Also print what lilv reported while reading the plugins' data (to stderr).")
    var verbose = false

    func run() throws {
        let world = LV2World(capturingMessages: true)
        var plugins: [LV2PluginInfo]
        if let uri {
            do { plugins = [try world.plugin(uri: uri)] } catch { fail("\(error)") }
        } else {
            plugins = world.plugins()
        }
        if verbose {
            for line in world.messages { FileHandle.standardError.write(Data("lilv: \(line)\n".utf8)) }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(plugins), as: UTF8.self))
            return
        }
        if plugins.isEmpty {
            let path = ProcessInfo.processInfo.environment["LV2_PATH"].map { "LV2_PATH=\($0)" }
                ?? "~/.lv2, /usr/local/lib/lv2, /usr/lib/lv2"
            print("No LV2 plugins are installed (looked in \(path)).")
            return
        }
        print(PluginsCommand.text(plugins), terminator: "")
    }

    /// One paragraph per plugin: its name and URI, what it has, then a table of its controls.
    static func text(_ plugins: [LV2PluginInfo]) -> String {
        var out = ""
        for (n, p) in plugins.enumerated() {
            if n > 0 { out += "\n" }
            out += "\(p.name)  <\(p.uri)>\n"
            var facts = ["audio \(p.audioInputs) in, \(p.audioOutputs) out", "\(p.controls.count) control\(p.controls.count == 1 ? "" : "s")"]
            if p.hasStateInterface { facts.append("state") }
            if p.usesWorker { facts.append("worker") }
            out += "  " + facts.joined(separator: ", ") + "\n"
            if !p.canHost { out += "  cannot be a pedal: " + p.problems.joined(separator: "; ") + "\n" }
            guard !p.controls.isEmpty else { continue }
            let header = ["SYMBOL", "NAME", "MIN", "MAX", "DEFAULT", "UNIT", "KIND"]
            let rows = p.controls.map { c -> [String] in
                [c.symbol, c.name, number(c.minimum), number(c.maximum), number(c.defaultValue), c.unit ?? "", kind(c)]
            }
            let all = [header] + rows
            let widths = header.indices.map { col in all.map { $0[col].count }.max() ?? 0 }
            for row in all {
                let cells = row.indices.map { col in
                    col == row.count - 1 ? row[col] : row[col].padding(toLength: widths[col], withPad: " ", startingAt: 0)
                }
                out += "    " + cells.joined(separator: "  ").trimmingCharacters(in: .whitespaces) + "\n"
            }
        }
        return out
    }

    /// "toggle", "integer", "log", "enum (0=Off, 1=On)", "points (…)" or "linear".
    private static func kind(_ c: LV2ControlPort) -> String {
        var parts: [String] = []
        if c.isToggle { parts.append("toggle") }
        if c.isInteger && !c.isEnumeration && !c.isToggle { parts.append("integer") }
        if c.isLogarithmic { parts.append("log") }
        if c.isSampleRateRelative { parts.append("×rate") }
        let points = c.scalePoints.map { "\(number($0.value))=\($0.label)" }.joined(separator: ", ")
        if c.isEnumeration {
            parts.append("enum (\(points))")
        } else if !c.scalePoints.isEmpty {
            parts.append("points (\(points))")
        }
        return parts.isEmpty ? "linear" : parts.joined(separator: " ")
    }

    /// The Float's shortest decimal form, without a trailing ".0".
    private static func number(_ v: Float) -> String {
        let text = "\(v)"
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }
}
