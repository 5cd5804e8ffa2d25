#include <pulse/error.h>
#include <pulse/pulseaudio.h>
#include <pulse/simple.h>
