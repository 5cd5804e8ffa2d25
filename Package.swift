// swift-tools-version: 6.0
import PackageDescription
import Foundation

// The pedals' code is compiled for the processor that builds it (`make run` builds on the machine
// that plays): its loops then use that processor's widest vectors (AVX2 and FMA where present,
// about a quarter less CPU for the whole board than the x86-64 baseline's SSE2).
// - Where the processor has fused multiply-adds, `STOMPBOX_FMA` lets a few loops use them
//   (`mulAdd` in StompboxDSP); nothing else is fused or reordered (no fast-math).
// - On processors whose 512-bit vectors run at full clock (Intel's with AVX-512 FP16, Sapphire
//   Rapids on; AMD's with AVX-512, Zen 4 on), the loops take 512-bit vectors. LLVM's default
//   for AVX-512 processors is 256 bits, for the older ones that lower their clock for them.
//
// A package must run on any x86-64, and Swift has no function multiversioning (no
// `target_clones`), so the package carries the whole program three times, chosen with
// STOMPBOX_LEVEL (each in its own --scratch-path, see `make deb`):
// - `baseline` (also STOMPBOX_PORTABLE=1): the x86-64 baseline, SSE2, no FMA. Its CStompboxLauncher
//   executes the best build below before `main` (see Sources/CStompboxLauncher/launcher.c).
// - `v3`: x86-64-v3 (AVX2, FMA, BMI; Haswell and Zen 1 on), with STOMPBOX_FMA.
// - `v4`: x86-64-v4 (AVX-512 F/BW/CD/DQ/VL) preferring 512-bit vectors, with STOMPBOX_FMA; the
//   launcher picks it only on the processors the native build gives 512 bits (above).
// Only whole builds keep the pedals' code as fast as the native build's: each pedal's `process`
// is one Swift function that inlines its helpers, and a kernel layer in C would cut it in pieces.
// The alternatives weighed are in ARCHITECTURE.md ("One package for every x86-64").
// The levels go through clang's -march (the Swift compiler takes its target from it):
// `-target-cpu` knows no `x86-64-v3`. Without -mprefer-vector-width=512, x86-64-v4 code keeps to
// 256-bit vectors (checked in the assembly: no zmm register).
let processor = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
let processorFlags = Set((processor.split(separator: "\n").first { $0.hasPrefix("flags") } ?? "").split(separator: " ").map(String.init))
#if arch(arm64)
let processorHasFMA = true
#else
let processorHasFMA = processorFlags.contains("fma")
#endif
let wide512 = processorFlags.contains("avx512_fp16") || (processor.contains("AuthenticAMD") && processorFlags.contains("avx512f"))
let buildLevel = Context.environment["STOMPBOX_LEVEL"] ?? (Context.environment["STOMPBOX_PORTABLE"] == "1" ? "baseline" : "native")
let dspCodegen: [SwiftSetting]
let launcherLevel: [CSetting]
switch buildLevel {
case "native":
    dspCodegen = [.unsafeFlags(["-target-cpu", "native"] + (wide512 ? ["-Xcc", "-mprefer-vector-width=512"] : []))]
        + (processorHasFMA ? [.define("STOMPBOX_FMA")] : [])
    launcherLevel = []
case "baseline":
    dspCodegen = []
    launcherLevel = [.define("STOMPBOX_LEVEL_BASELINE")]
case "v3":
    dspCodegen = [.unsafeFlags(["-Xcc", "-march=x86-64-v3"]), .define("STOMPBOX_FMA")]
    launcherLevel = [.define("STOMPBOX_LEVEL_V3")]
case "v4":
    dspCodegen = [.unsafeFlags(["-Xcc", "-march=x86-64-v4", "-Xcc", "-mprefer-vector-width=512"]), .define("STOMPBOX_FMA")]
    launcherLevel = [.define("STOMPBOX_LEVEL_V4")]
default:
    fatalError("STOMPBOX_LEVEL=\(buildLevel): use baseline, v3 or v4 (or leave it unset for this processor)")
}

// Release builds of the pedals leave out Swift's run-time exclusivity checks: each access to a
// pedal's stored state inside `process` otherwise records itself in a thread-local access set
// (about 3 % of the board's CPU in `make bench`). Debug builds, which the tests run, keep them,
// so an overlapping access is still caught there.
let dspReleaseFlags: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

// Layers, bottom to top: StompboxDSP (pure Swift) → StompboxAudio / StompboxCore → StompboxSession
// → StompboxUI and the executables.
// Nothing imports a layer above it.
let package = Package(
    name: "Stompbox",
    products: [
        .executable(name: "stompbox", targets: ["stompbox"]),
        .executable(name: "stompbox-window", targets: ["stompbox-window"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Reads and writes a session file (a ZIP archive).
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
        // Counts heap allocations inside the audio call for `make bench` (LD_PRELOADed on Linux).
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.1"),
    ],
    targets: [
        // System libraries through pkg-config.
        .systemLibrary(name: "CSndfile", pkgConfig: "sndfile",
                       providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CPulse", pkgConfig: "libpulse",
                       providers: [.apt(["libpulse-dev"])]),
        // The system bus, to ask RealtimeKit for real-time priority where the user may not take it.
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1",
                       providers: [.apt(["libdbus-1-dev"])]),
        // The variable-ratio resampler that follows the input's clock.
        .systemLibrary(name: "CSamplerate", pkgConfig: "samplerate",
                       providers: [.apt(["libsamplerate0-dev"])]),
        // LV2 plugins: lilv finds them and reads their data; CLV2Host is the host side in C.
        // FFTW (single precision): the cabinet's partitioned convolution.
        .systemLibrary(name: "CFFTW", pkgConfig: "fftw3f",
                       providers: [.apt(["libfftw3-dev"])]),
        // Ed25519 for the licence keys (and SHA-256): Debian's libsodium, which builds in no time
        // where swift-crypto's BoringSSL took minutes of every fresh build.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium",
                       providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CLilv", pkgConfig: "lilv-0",
                       providers: [.apt(["liblilv-dev"])]),
        .systemLibrary(name: "CGtk", pkgConfig: "gtk+-3.0",
                       providers: [.apt(["libgtk-3-dev"])]),
        // What Swift cannot call directly: GTK signal macros, casts and variadic calls…
        .target(name: "CStompboxShim", dependencies: ["CGtk"]),
        // …and the FPU's flush-to-zero flags for the audio thread.
        .target(name: "CAudioShim"),
        // Picks the package's build for this processor before `main` (see dspCodegen above).
        // Compiled for the baseline in every build: it must run on any x86-64.
        .target(name: "CStompboxLauncher", cSettings: launcherLevel),
        // The LV2 host features (URID map, options, worker ring and thread, state callbacks).
        .target(name: "CLV2Host"),
        // JACK (libjack-jackd2-dev; the same library API as PipeWire's JACK): the chain inside
        // the graph's cycle. A C target only for jack_client_open, which is variadic.
        .target(name: "CJack", linkerSettings: [.linkedLibrary("jack")]),
        // MIDI from the ALSA sequencer (libasound2-dev): a C target, as its event macros are C.
        .target(name: "CALSAMIDI", linkerSettings: [.linkedLibrary("asound")]),

        // The pedals' DSP is optimised in debug builds too, so the tests' live and JACK takes
        // run the chain at the cost it has in the program (unoptimised, every pedal on costs
        // several times more per period than the product does, and the dropout comparisons
        // would measure the debug build).
        // Pure Swift but for FFTW's transforms, which the cabinet's convolution runs on.
        .target(name: "StompboxDSP", dependencies: ["CFFTW"], swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))] + dspReleaseFlags + dspCodegen),
        .target(name: "StompboxAudio", dependencies: [
            "StompboxDSP", "CSndfile", "CPulse", "CJack", "CSamplerate", "CAudioShim", "CLilv", "CLV2Host", "CALSAMIDI", "CDBus",
        ]),
        .target(name: "StompboxCore", dependencies: [
            "StompboxDSP", "CSodium",
        ]),
        // The session file (a ZIP of a manifest and the tracks' audio), mixdown and re-amping.
        .target(name: "StompboxSession", dependencies: [
            "StompboxDSP", "StompboxAudio", "StompboxCore",
            "CSodium", .product(name: "ZIPFoundation", package: "ZIPFoundation"),
        ]),
        .target(name: "StompboxUI", dependencies: [
            "StompboxDSP", "StompboxAudio", "StompboxCore", "StompboxSession", "CGtk", "CStompboxShim",
        ]),
        // The command line; it loads no GTK. With no subcommand it hands over to stompbox-window.
        // Release builds carry the Swift runtime and Foundation inside (-static-stdlib, as
        // `swift build --static-swift-stdlib` does, for this program only): a `render` then
        // skips resolving thousands of their symbols at start (see `make bench`).
        .executableTarget(name: "stompbox", dependencies: [
            "CStompboxLauncher", "StompboxDSP", "StompboxAudio", "StompboxCore", "StompboxSession",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], swiftSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))],
           linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]),
        .executableTarget(name: "stompbox-window", dependencies: [
            "CStompboxLauncher", "StompboxDSP", "StompboxAudio", "StompboxCore", "StompboxUI",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        // Signals and measurements shared by the tests and the benchmark. Optimised in debug
        // builds too: the live tests' scope analysis (correlation searches over seconds of
        // audio) and the signal helpers otherwise cost more time than the takes they judge.
        .target(name: "StompboxTestSupport", dependencies: ["StompboxDSP", "StompboxAudio", "CAudioShim", "CJack", "CALSAMIDI"],
                swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        // Plays into a JACK port and records another (the PipeWire-JACK tests run it under pw-jack).
        .executableTarget(name: "StompboxJackProbe", dependencies: ["StompboxTestSupport"]),
        .executableTarget(name: "StompboxBench", dependencies: [
            "StompboxDSP", "StompboxAudio", "StompboxSession", "StompboxTestSupport",
            .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
        ]),

        // The tags that sort the tests into tiers (`make check`, `make test`); for test targets only.
        .target(name: "StompboxTestTags", path: "Tests/StompboxTestTags"),
        .testTarget(name: "StompboxDSPTests", dependencies: ["StompboxDSP", "StompboxTestSupport"]),
        .testTarget(name: "StompboxAudioTests", dependencies: ["StompboxTestTags", "StompboxAudio", "StompboxTestSupport"]),
        .testTarget(name: "StompboxCoreTests", dependencies: ["StompboxCore", "StompboxTestSupport"]),
        .testTarget(name: "StompboxSessionTests", dependencies: [
            "StompboxSession", "StompboxTestSupport",
            // The hostile-file tests build crafted archives.
            .product(name: "ZIPFoundation", package: "ZIPFoundation"),
        ]),
        .testTarget(name: "StompboxUITests", dependencies: ["StompboxTestTags", "StompboxUI", "StompboxTestSupport"]),
        .testTarget(name: "stompboxTests", dependencies: ["StompboxTestTags", "StompboxTestSupport", "StompboxAudio", "StompboxCore", "StompboxSession"]),
    ],
    swiftLanguageModes: [.v5]
)
