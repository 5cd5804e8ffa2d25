#ifndef STOMPBOX_LAUNCHER_H
#define STOMPBOX_LAUNCHER_H

/// The packaged program is built three times, for the x86-64 baseline, x86-64-v3 (AVX2, FMA)
/// and x86-64-v4 (AVX-512); `<prefix>/bin/stompbox` is the baseline build, and before `main`
/// it executes the build in `<prefix>/lib/stompbox/<level>/` that this processor runs best
/// (see launcher.c). These say what happened, for `stompbox cpu`.

/// The level this executable was compiled for: "baseline", "v3", "v4", or "native" (a build
/// for the building machine's processor: `make run`, the tests, the bench; it never dispatches).
const char *stompbox_build_level(void);

/// The best level this processor runs: "baseline", "v3" or "v4" (v4 only where 512-bit vectors
/// run at full clock: AVX-512 FP16 on Intel, any AVX-512 on AMD; other AVX-512 processors run v3).
const char *stompbox_cpu_level(void);

/// The level asked for with $STOMPBOX_CPU when this process started (NULL when not set).
const char *stompbox_requested_level(void);

/// The launcher that executed this build (`<prefix>/bin/stompbox`), or NULL when this process
/// was started directly.
const char *stompbox_launcher_path(void);

#endif
