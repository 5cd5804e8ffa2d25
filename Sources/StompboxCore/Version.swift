/// Stompbox's version: what `stompbox --version`, the window's About dialog and the package
/// (`make deb`) say. Raised with each release.
public enum StompboxVersion {
    public static let current = "0.9.0"
    public static let website = "https://github.com/stompbox/stompbox"
}
