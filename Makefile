# Stompbox — `make run` plays, `make test` tests. Each installs the Debian packages it needs.
SWIFT      ?= swift
BUILD_DEPS := libsndfile1-dev libsodium-dev libpulse-dev libdbus-1-dev libjack-jackd2-dev libasound2-dev libsamplerate0-dev libfftw3-dev libgtk-3-dev librsvg2-common liblilv-dev lv2-dev pkg-config
RUN_DEPS   := $(BUILD_DEPS) pulseaudio-utils
# lv2file is the reference host the LV2 tests compare against; the plugin packages are what they host.
TEST_DEPS  := $(BUILD_DEPS) desktop-file-utils appstream rtkit polkitd jackd2 lv2file x42-plugins guitarix-lv2 calf-plugins pulseaudio pulseaudio-utils xvfb xdotool imagemagick sox at-spi2-core dbus-x11 fonts-dejavu-core dbus python3-gi gir1.2-atspi-2.0 pipewire pipewire-pulse pipewire-bin pipewire-jack wireplumber
# The window bench runs under a window manager, as on a desktop.
BENCH_DEPS := $(TEST_DEPS) matchbox-window-manager
SUDO       := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PREFIX     ?= /usr/local
DESTDIR    ?=

.PHONY: run check test soak bench build artwork install uninstall deb deb-check deps-run deps-test deps-bench check-swift clean

run: deps-run check-swift
	$(SWIFT) build -c release --product stompbox-window
	$(SWIFT) build -c release --product stompbox
	.build/release/stompbox

# The tiers come from the tests' own tags (scripts/test-tier): suites tagged `.live` play through
# private PulseAudio, PipeWire and JACK servers and measure real time; suites tagged `.window`
# drive a real window under Xvfb. Each kind runs one test at a time, after the rest, and the two
# kinds on CPUs of their own: beside the DSP tests, or beside a window being drawn, a take would
# measure the load, and a click could land before a starved window had handled the one before. In the unit pass a test that starts a server fails
# (StompboxTestSupport's TestTier), so an untagged real-server suite cannot slip in there.
LIVE_SUITES   = $$(scripts/test-tier live)
WINDOW_SUITES = $$(scripts/test-tier window)

# The fast tier, for every commit: every unit, DSP, CLI and core test (no server, no window).
check: deps-test check-swift
	$(SWIFT) build --build-tests
	@# The install test generates the man page with it.
	$(SWIFT) build --product generate-manual
	STOMPBOX_TEST_TIER=unit $(SWIFT) test --skip-build --skip "$(LIVE_SUITES)|$(WINDOW_SUITES)"

# The whole suite (and CI's command): the fast tier, then the window tests and the live tests,
# side by side on CPUs of their own (scripts/test-apart).
test: check
	SWIFT=$(SWIFT) scripts/test-apart

# The live tests' long measurements in full (LiveScale): every block and margin on both servers,
# each drift direction for a minute, twenty unplugs of each device. About 20 minutes.
soak: deps-test check-swift
	$(SWIFT) build --build-tests
	STOMPBOX_SOAK=1 STOMPBOX_TEST_TIER=live $(SWIFT) test --skip-build --no-parallel --filter "$(LIVE_SUITES)"

# The package's build is compared with the native one when `make deb` has staged it (PackageBench).
bench: deps-bench check-swift
	$(SWIFT) build -c release --product StompboxBench
	$(SWIFT) build -c release --product stompbox
	$(SWIFT) build -c release --product stompbox-window
	@# NAM_BENCHMODEL=/path/to/nam-bench (NeuralAmpModelerCore's, see Tests/neural-models/README.md) times it beside the neural models.
	@# Counts allocations through malloc-interposer; the bench preloads it itself when needed
	@# (LD_PRELOAD of .build/release/libMallocInterposerSwift.so) and exits 1 if chain.process allocates.
	.build/release/StompboxBench

build: check-swift
	$(SWIFT) build

# Installs the release build under $(DESTDIR)$(PREFIX): the programs, data/ and Resources/ in
# share/stompbox, the desktop entry, icon, AppStream metainfo, man page and shell completions
# (generated from the program's own help). `make uninstall` removes exactly those files.
install: check-swift
	$(SWIFT) build -c release --product stompbox-window
	$(SWIFT) build -c release --product stompbox
	$(SWIFT) build -c release --product generate-manual
	scripts/install generate
	PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) scripts/install install

uninstall:
	PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) scripts/install uninstall

# .build/deb/stompbox_<version>-1_amd64.deb: the same install with the Swift runtime linked in
# (scripts/make-deb), then checked by lintian. The program is built whole for three x86-64
# levels (STOMPBOX_LEVEL in Package.swift): the baseline, on PATH, starts the v3 (AVX2, FMA) or
# v4 (AVX-512) build this processor runs. Each level has its own scratch folder, so a level is
# rebuilt only when its sources change; they build one after the other (each is a full release
# build of the program).
DEB_BUILD := $(SWIFT) build -c release --static-swift-stdlib --disable-local-rpath
DEB_LEVELS := baseline v3 v4
deb: check-swift
	@./scripts/install-deps $(BUILD_DEPS) dpkg-dev fakeroot lintian
	@for level in $(DEB_LEVELS); do \
	  scratch=.build/deb$$([ $$level = baseline ] || echo -$$level); \
	  for product in stompbox-window stompbox; do \
	    echo "STOMPBOX_LEVEL=$$level $(DEB_BUILD) --scratch-path $$scratch --product $$product"; \
	    STOMPBOX_LEVEL=$$level $(DEB_BUILD) --scratch-path $$scratch --product $$product || exit 1; \
	  done; \
	done
	STOMPBOX_LEVEL=baseline $(DEB_BUILD) --scratch-path .build/deb --product generate-manual
	scripts/make-deb
	lintian --fail-on error $$(ls .build/deb/stompbox_*_amd64.deb)

# The package installed with apt on a clean Debian 12 root (mmdebstrap; needs root and Debian's
# mirror), played there as a user who is not root, then purged (scripts/deb-check). First the
# dispatch test (Tests/stompboxTests/DispatchTests.swift) on the staged package: each level
# this processor runs renders the demo riff as the baseline does; here it may not be skipped.
deb-check: deb
	@./scripts/install-deps mmdebstrap
	$(SWIFT) build --build-tests
	STOMPBOX_DISPATCH_REQUIRED=1 $(SWIFT) test --skip-build --filter stompboxTests.DispatchTests
	scripts/deb-check

# The pedals' SVGs in Resources/, generated from their faces (a test checks they are current).
artwork: check-swift
	$(SWIFT) build --product stompbox
	.build/debug/stompbox artwork Resources

check-swift:
	@command -v $(SWIFT) >/dev/null || { echo "Swift 6 is needed (swift.org toolchain for Debian 12); 'swift' is not on PATH." >&2; exit 1; }

# Installs only what is missing, so a machine that has everything runs no apt at all.
deps-run:
	@./scripts/install-deps $(RUN_DEPS)
deps-test:
	@./scripts/install-deps $(TEST_DEPS)
deps-bench:
	@./scripts/install-deps $(BENCH_DEPS)

clean:
	rm -rf .build
