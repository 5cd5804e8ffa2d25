import StompboxAudio
import StompboxDSP

/// A few installed LV2 plugins as pedal kinds, for the tests that run over every kind of pedal
/// (Debian's x42-plugins, guitarix-lv2 and calf-plugins; `make deps-test` installs them).
public enum TestPlugins {
    /// x42's parametric EQ (mono), Guitarix's tube screamer (mono) and Calf's phaser (stereo).
    public static let uris = [
        "http://gareus.org/oss/lv2/fil4#mono",
        "http://guitarix.sourceforge.net/plugins/gxts9#ts9sim",
        "http://calf.sourceforge.net/plugins/Phaser",
    ]
    static let ids = ["fil4", "ts9", "phaser"]

    /// Fresh pedal kinds (each with values of its own) for the installed ones, switched off.
    public static var pedals: [PedalKind] {
        zip(ids, uris).compactMap { id, uri in try? PedalKind.lv2(id: id, uri: uri) }
    }

    /// Why some are left out of the tests (empty when all are installed).
    public static var missing: String {
        let gone = uris.filter { (try? LV2World.shared.plugin(uri: $0))?.canHost != true }
        return gone.isEmpty ? "" : "not installed, so left out of the property tests: \(gone.joined(separator: ", ")) (make deps-test)"
    }
}
