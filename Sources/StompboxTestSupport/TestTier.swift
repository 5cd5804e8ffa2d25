import Foundation

/// Which pass of the suite is running (`STOMPBOX_TEST_TIER`, set by the Makefile).
///
/// Tests that start a real audio server or a window are tagged `.live` or `.window` and run on
/// their own, one at a time, after the rest (`make test`); `make check` leaves them out. In the
/// pass without them (`unit`), starting a server is an error, so a new real-server suite that
/// was not tagged fails at once instead of measuring real time beside the DSP tests.
public enum TestTier {
    public static let variable = "STOMPBOX_TEST_TIER"

    /// Throws when the running pass must not start `what` (a private audio server, Xvfb).
    public static func requireApart(_ what: String) throws {
        guard ProcessInfo.processInfo.environment[variable] == "unit" else { return }
        throw TestTierError(description: "\(what) started in the unit pass: tag the suite .live (a real audio server) or .window (a window under Xvfb) so that it runs on its own")
    }
}

public struct TestTierError: Error, CustomStringConvertible {
    public let description: String
}

/// How much the live tests play of their longest real-time measurements. `make test` (the
/// whole suite, and CI's command) plays each of them at a few settings for a few seconds;
/// `make soak` (`STOMPBOX_SOAK=1`) plays the full grids: every block and margin on both
/// servers, each drift direction for a minute, twenty unplugs of each device. The checks and
/// their bars are the same at both scales; only how much is played differs.
public enum LiveScale {
    public static let variable = "STOMPBOX_SOAK"
    public static let soak = ProcessInfo.processInfo.environment[variable] == "1"

    /// `short` in `make test`, `soak` in `make soak`.
    public static func pick<T>(_ short: T, soak: T) -> T { Self.soak ? soak : short }

    /// Said once per measurement, so a log tells which scale it holds.
    public static var name: String { soak ? "soak (\(variable)=1)" : "short (make soak plays the full grid)" }
}
