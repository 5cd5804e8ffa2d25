// The dispatch of the packaged program (issue 38): Swift has no function multiversioning, so
// the whole program is built once per x86-64 level and the baseline build, the one on PATH,
// replaces itself with the best one before anything else runs. An ELF constructor runs before
// the Swift runtime and `main`, so nothing has been opened, started or printed yet: the exec
// is invisible but for /proc/self/exe.
//
// Rules: only a baseline build dispatches; it executes `<its dir>/../lib/stompbox/<level>/<its
// name>` (the `bin` → `lib/stompbox` layout of make install and the package), the best level
// this processor runs whose file is there, or goes on as itself when there is none (a build
// from source without the levels, a level removed). $STOMPBOX_CPU=baseline|v3|v4 picks the
// level (tests, comparisons), capped at what the processor runs. The launcher marks the
// environment for its child, which removes the mark at once; a baseline build that finds the
// mark does not dispatch again, so a misplaced file cannot make a loop.
#include "StompboxLauncher.h"

#include <cpuid.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LAUNCHER_VARIABLE "STOMPBOX_LAUNCHED_BY"

#if defined(STOMPBOX_LEVEL_BASELINE)
static const char build_level[] = "baseline";
#elif defined(STOMPBOX_LEVEL_V3)
static const char build_level[] = "v3";
#elif defined(STOMPBOX_LEVEL_V4)
static const char build_level[] = "v4";
#else
static const char build_level[] = "native";
#endif

// Kept in the binary for scripts/make-deb, which checks each level's file is that level's build.
#define MARK(level) __attribute__((used)) static const char level_mark[] = "STOMPBOX_LEVEL_IS_" level;
#if defined(STOMPBOX_LEVEL_BASELINE)
MARK("baseline")
#elif defined(STOMPBOX_LEVEL_V3)
MARK("v3")
#elif defined(STOMPBOX_LEVEL_V4)
MARK("v4")
#endif

static const char *const level_names[] = {"baseline", "v3", "v4"};
static char launcher_path[PATH_MAX];
static char requested[16];

const char *stompbox_build_level(void) { return build_level; }
const char *stompbox_launcher_path(void) { return launcher_path[0] ? launcher_path : NULL; }
const char *stompbox_requested_level(void) { return requested[0] ? requested : NULL; }

#if defined(__x86_64__)
static unsigned long long xgetbv0(void) {
    unsigned int eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((unsigned long long)edx << 32) | eax;
}

// The x86-64 psABI's levels, read from cpuid, with the operating system's consent to the
// vector registers (XCR0): 0 baseline, 1 v3, 2 v4. v2's features are part of v3's test.
static int processor_level(void) {
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    const unsigned int leaf1 = c;
    const int v2 = (leaf1 & bit_SSE3) && (leaf1 & bit_SSSE3) && (leaf1 & bit_SSE4_1) && (leaf1 & bit_SSE4_2)
        && (leaf1 & bit_POPCNT) && (leaf1 & bit_CMPXCHG16B);
    const int osxsave = (leaf1 & bit_OSXSAVE) != 0;
    if (!v2 || !osxsave) return 0;
    const unsigned long long xcr0 = xgetbv0();
    if ((xcr0 & 0x6) != 0x6) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    const unsigned int leaf7b = b, leaf7d = d;
    if (!__get_cpuid(0x80000001, &a, &b, &c, &d)) return 0;
    const int v3 = (leaf1 & bit_AVX) && (leaf1 & bit_FMA) && (leaf1 & bit_F16C) && (leaf1 & bit_MOVBE)
        && (leaf7b & bit_AVX2) && (leaf7b & bit_BMI) && (leaf7b & bit_BMI2) && (c & bit_LZCNT) && (c & bit_LAHF_LM);
    if (!v3) return 0;
    const int v4 = (leaf7b & bit_AVX512F) && (leaf7b & bit_AVX512BW) && (leaf7b & bit_AVX512CD)
        && (leaf7b & bit_AVX512DQ) && (leaf7b & bit_AVX512VL) && (xcr0 & 0xe0) == 0xe0;
    if (!v4) return 1;
    // The v4 build prefers 512-bit vectors (as the native build does on these processors):
    // only where they run at full clock. Elsewhere (Skylake-X to Ice Lake) v3's 256 bits win.
    unsigned int vendor_b = 0;
    __get_cpuid(0, &a, &vendor_b, &c, &d);
    const int amd = vendor_b == 0x68747541; // "Auth"enticAMD
    const int fp16 = (leaf7d & (1u << 23)) != 0; // AVX512-FP16: Sapphire Rapids on
    return (amd || fp16) ? 2 : 1;
}
#else
static int processor_level(void) { return 0; }
#endif

const char *stompbox_cpu_level(void) { return level_names[processor_level()]; }

#if defined(STOMPBOX_LEVEL_BASELINE)
static int is_executable(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static void dispatch(char **argv) {
    char self[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (!slash || slash == self) return;
    *slash = 0;
    const char *name = slash + 1, *dir = self;

    int level = processor_level();
    const char *forced = getenv("STOMPBOX_CPU");
    if (forced && *forced) {
        int asked = -1;
        for (int i = 0; i < 3; i++) if (strcmp(forced, level_names[i]) == 0) asked = i;
        if (asked < 0) {
            fprintf(stderr, "stompbox: STOMPBOX_CPU=%s is not baseline, v3 or v4; choosing by the processor\n", forced);
        } else if (asked > level) {
            fprintf(stderr, "stompbox: STOMPBOX_CPU=%s: this processor runs %s at most\n", forced, level_names[level]);
        } else {
            level = asked;
        }
    }
    for (; level > 0; level--) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/../lib/stompbox/%s/%s", dir, level_names[level], name) >= (int)sizeof path) return;
        if (!is_executable(path)) continue;
        *slash = '/';
        setenv(LAUNCHER_VARIABLE, self, 1);
        execv(path, argv);
        // Not executable after all (a mount with noexec, a file of the wrong kind): go on as
        // the baseline, which runs everywhere.
        unsetenv(LAUNCHER_VARIABLE);
        *slash = 0;
    }
}
#endif

__attribute__((constructor)) static void stompbox_launcher(int argc, char **argv, char **envp) {
    (void)argc; (void)envp;
    const char *forced = getenv("STOMPBOX_CPU");
    if (forced) snprintf(requested, sizeof requested, "%s", forced);
    const char *by = getenv(LAUNCHER_VARIABLE);
    if (by) {
        snprintf(launcher_path, sizeof launcher_path, "%s", by);
        // Children of this process (the window started by `stompbox`, a render started by a
        // test) choose for themselves.
        unsetenv(LAUNCHER_VARIABLE);
        return;
    }
#if defined(STOMPBOX_LEVEL_BASELINE)
    if (argv) dispatch(argv);
#else
    (void)argv;
#endif
}
