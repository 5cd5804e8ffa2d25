#include <pulse/error.h>
#include <pulse/pulseaudio.h>
