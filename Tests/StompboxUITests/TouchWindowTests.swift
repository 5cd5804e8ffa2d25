import Foundation
import StompboxTestSupport
import StompboxTestTags
import Testing

/// Touch, for real: Xvfb has no touchscreen, so the window is started with a test touchscreen
/// (`STOMPBOX_TEST_TOUCH`, `TestTouchFeed`) whose events go through GTK's own event handling
/// to the widgets' gesture objects. Checked through the engine's state and the layout.
@Suite("Touch in the window", .serialized, .tags(.window))
struct TouchWindowTests {
    /// Delay Time's knob travel (0…1) from its value: the knob is logarithmic over 20…2000 ms.
    static func travel(_ ms: Double) -> Double { log(ms / 20) / log(100) }

    @Test("a two-finger rotate turns a knob by the gesture's angle (45° of a 270° sweep is a sixth)")
    func twoFingerRotate() throws {
        let session = try PedalboardSession(startFromDefaults: true, touch: true)
        defer { session.stop() }
        let c = try session.point("delay", "controls", "delay.time_ms")
        let before = try #require(session.parameter("delay.time_ms"))
        let r = 18.0
        func finger(_ n: Int, _ degrees: Double) -> String {
            let a = degrees * .pi / 180, sign = n == 1 ? -1.0 : 1.0
            return "\(n) \(Int((Double(c.x) + sign * r * cos(a)).rounded())) \(Int((Double(c.y) + sign * r * sin(a)).rounded()))"
        }
        try session.touch("down \(finger(1, 0))")
        Thread.sleep(forTimeInterval: 0.03)
        try session.touch("down \(finger(2, 0))")
        // Clockwise on screen (y grows downwards), 5° a step.
        for step in 1...9 {
            Thread.sleep(forTimeInterval: 0.03)
            try session.touch("move \(finger(1, Double(step) * 5))", "move \(finger(2, Double(step) * 5))")
        }
        Thread.sleep(forTimeInterval: 0.03)
        try session.touch("up \(finger(2, 45))", "up \(finger(1, 45))")
        // The value once the engine's state has stopped changing (the last moves may still be
        // on their way when the first change shows).
        var after = before, same = 0
        _ = waitUntil(seconds: 5) {
            Thread.sleep(forTimeInterval: 0.2)
            let now = session.parameter("delay.time_ms") ?? before
            same = now == after && now != before ? same + 1 : 0
            after = now
            return same >= 3
        }
        let turned = Self.travel(after) - Self.travel(before)
        print("two-finger rotate of 45°: Delay Time \(before) → \(after) ms, \(turned) of the sweep (a sixth is 0.1667)")
        #expect(abs(turned - 1.0 / 6) < 0.01, "Delay Time \(before) → \(after) ms: turned \(turned) of the sweep, not 1/6")
    }

    @Test("a tap on a footswitch toggles the pedal, a second tap toggles it back")
    func tapFootswitch() throws {
        let session = try PedalboardSession(startFromDefaults: true, touch: true)
        defer { session.stop() }
        let f = try session.point("overdrive", "footswitch")
        #expect(session.parameter("overdrive.enabled") == 0)
        try session.touch("down 1 \(f.x) \(f.y)")
        Thread.sleep(forTimeInterval: 0.08)
        try session.touch("up 1 \(f.x) \(f.y)")
        #expect(waitUntil(seconds: 3) { session.parameter("overdrive.enabled") == 1 })
        Thread.sleep(forTimeInterval: 0.5)
        try session.touch("down 1 \(f.x) \(f.y)")
        Thread.sleep(forTimeInterval: 0.08)
        try session.touch("up 1 \(f.x) \(f.y)")
        #expect(waitUntil(seconds: 3) { session.parameter("overdrive.enabled") == 0 })
    }

    @Test("taps on the Looper record and play; a long press clears it")
    func looperLongPress() throws {
        let session = try PedalboardSession(startFromDefaults: true, environment: try unlockedLooperEnvironment(), touch: true)
        defer { session.stop() }
        let f = try session.point("looper", "footswitch")
        func tap() throws {
            try session.touch("down 1 \(f.x) \(f.y)")
            Thread.sleep(forTimeInterval: 0.08)
            try session.touch("up 1 \(f.x) \(f.y)")
        }
        try tap()
        #expect(waitUntil(seconds: 5) { session.looperState == "recording" }, "looper: \(String(describing: session.looperState))")
        Thread.sleep(forTimeInterval: 1.0)
        try tap()
        #expect(waitUntil(seconds: 5) { session.looperState == "playing" && (session.looperLength ?? 0) > 24_000 })
        try session.touch("down 1 \(f.x) \(f.y)")
        Thread.sleep(forTimeInterval: 1.2)
        try session.touch("up 1 \(f.x) \(f.y)")
        #expect(waitUntil(seconds: 5) { session.looperState == "stopped" && session.looperLength == 0 },
                "after a 1.2 s press: \(String(describing: session.looperState)), length \(String(describing: session.looperLength))")
    }

    @Test("a finger held still on a knob, then on a preset, for a second opens Learn MIDI…; the knob does not move, the preset is not played")
    func longPressLearns() throws {
        let session = try PedalboardSession(startFromDefaults: true, touch: true)
        defer { session.stop() }
        func foot() -> [String: Any] { session.state()?["footControls"] as? [String: Any] ?? [:] }
        let k = try session.point("delay", "controls", "delay.time_ms")
        let before = session.parameter("delay.time_ms")
        try session.touch("down 1 \(k.x) \(k.y)")
        Thread.sleep(forTimeInterval: 1.6)
        // The menu opens when the finger lifts.
        try session.openingPopup { try session.touch("up 1 \(k.x) \(k.y)") }
        try session.xdotool("key", "--delay", "100", "Home", "Return")
        #expect(waitUntil(seconds: 3) { foot()["learning"] as? String == "param:delay.time_ms" }, "\(foot())")
        #expect(session.parameter("delay.time_ms") == before)
        // Escape cancels the learn.
        try session.xdotool("key", "Escape")
        #expect(waitUntil(seconds: 3) { foot()["learning"] is NSNull })

        // A preset held the same way: its Learn MIDI…, and the preset is not played.
        let slot = try session.point("presets", "slot2")
        let selected = session.selectedSlot
        try session.touch("down 1 \(slot.x) \(slot.y)")
        Thread.sleep(forTimeInterval: 1.6)
        // The menu opens when the finger lifts.
        try session.openingPopup { try session.touch("up 1 \(slot.x) \(slot.y)") }
        try session.xdotool("key", "--delay", "100", "Home", "Return")
        #expect(waitUntil(seconds: 3) { foot()["learning"] as? String == "preset:2" }, "\(foot())")
        #expect(session.selectedSlot == selected)
    }

    /// A board too wide for a 1280×720 screen even on two rows, so it scrolls: the eleven built-in
    /// pedals and two plugin pedals (a plugin that is not installed still stands on the board).
    static let wideBoard: String = {
        let plugins = zip(["ts9", "phaser"], ["http://guitarix.sourceforge.net/plugins/gxts9#ts9sim", "http://calf.sourceforge.net/plugins/Phaser"]).map { #"{"id":"\#($0)","lv2":"\#($1)"}"# }
        let chain = "[" + (WindowFitTests.everyPedal.map { "\"\($0)\"" } + plugins).joined(separator: ",") + "]"
        let slot = { (name: String) in #"{"format":"stompbox-preset","version":3,"name":"\#(name)","chain":\#(chain),"parameters":{}}"# }
        return #"{"format":"stompbox-presets","version":1,"selected":0,"slots":[\#(slot("Wide")),\#(slot("Wide 2")),\#(slot("Wide 3"))]}"#
    }()

    @Test("a sideways scroll over a knob moves the board and leaves the knob; the vertical wheel turns it")
    func sidewaysScrollOverAKnobMovesTheBoard() throws {
        let session = try PedalboardSession(screen: (1280, 720), presets: Self.wideBoard)
        defer { session.stop() }
        _ = try session.settledPoint(["more"])
        let start = try session.settledPoint(["overdrive", "origin"])
        let drive = try session.point("overdrive", "controls", "overdrive.drive")
        let first = try #require(session.parameter("overdrive.drive"))
        // The vertical wheel turns it.
        try session.xdotool("mousemove", "\(drive.x)", "\(drive.y)", "click", "4")
        #expect(waitUntil(seconds: 3) { (session.parameter("overdrive.drive") ?? first) > first })
        let before = try #require(session.parameter("overdrive.drive"))
        // Wheel buttons 7 (right): a tilted wheel or a touchpad's sideways swipe.
        try session.xdotool("click", "--repeat", "6", "--delay", "30", "7")
        var now = start
        #expect(waitUntil(seconds: 3) {
            now = (try? session.point("overdrive", "origin")).map { [$0.x, $0.y] } ?? start
            return now[0] < start[0]
        }, "the Overdrive stayed at \(start) after scrolling right over its Drive knob")
        Thread.sleep(forTimeInterval: 0.3)
        #expect(session.parameter("overdrive.drive") == before, "the knob turned: \(session.parameter("overdrive.drive") ?? .nan), was \(before)")
        print("sideways scroll over the Drive knob: the Overdrive moved from x=\(start[0]) to x=\(now[0]); drive stayed \(before)")
    }

    @Test("a one-finger swipe to the left scrolls the board on a 1280×720 screen")
    func swipeScrollsTheBoard() throws {
        let session = try PedalboardSession(screen: (1280, 720), presets: Self.wideBoard, touch: true)
        defer { session.stop() }
        _ = try session.settledPoint(["more"])
        let view = try #require((session.state()?["layout"] as? [String: Any])?["board_view"] as? [Int])
        let start = try session.settledPoint(["overdrive", "origin"])
        // On the board below the pedals (the tolex, not a pedal: a pedal's body drags the pedal).
        let y = start[1] + 340 + 24
        #expect(y < view[1] + view[3] - 20, "no board below the pedals: \(view)")
        /// One finger across 480 px in 12 steps of 16 ms, then where the Overdrive is once it moved
        /// 300 px that way (or after 3 s).
        func swipe(from x: Int, _ y: Int, by dx: Int) throws -> [Int] {
            let before = try session.settledPoint(["overdrive", "origin"])
            try session.touch("down 1 \(x) \(y)")
            for step in 1...12 {
                Thread.sleep(forTimeInterval: 0.016)
                try session.touch("move 1 \(x + step * dx / 12) \(y)")
            }
            try session.touch("up 1 \(x + dx) \(y)")
            var now = before
            _ = waitUntil(seconds: 3) {
                now = (try? session.point("overdrive", "origin")).map { [$0.x, $0.y] } ?? before
                return dx < 0 ? now[0] <= before[0] - 300 : now[0] >= before[0] + 300
            }
            return now
        }
        let now = try swipe(from: view[0] + view[2] - 60, y, by: -480)
        #expect(now[0] <= start[0] - 300, "the Overdrive moved from \(start) to \(now) after a 480 px swipe")
        #expect(now[1] == start[1])
        print("swipe of 480 px: the Overdrive moved from x=\(start[0]) to x=\(now[0])")

        // Back to the right, starting on a pedal's body (under its name): the board scrolls, and
        // the pedal stays where it is in the chain (moving a pedal is the mouse's drag).
        // Once the kinetic scrolling has stopped.
        _ = try session.settledPoint(["overdrive", "origin"])
        let board = BoardWindowTests.shownPedals(session)
        let tremolo = try session.settledPoint(["tremolo", "origin"])
        let from = (x: max(tremolo[0] + 92, view[0] + 20), y: tremolo[1] + 222)
        let scrolled = try session.settledPoint(["overdrive", "origin"])
        let back = try swipe(from: from.x, from.y, by: 480)
        #expect(back[0] >= scrolled[0] + 300, "the Overdrive moved from \(scrolled) to \(back) after a 480 px swipe on the Tremolo")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(BoardWindowTests.shownPedals(session) == board, "a swipe rearranged the board: \(BoardWindowTests.shownPedals(session))")
    }
}
