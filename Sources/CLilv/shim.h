#include <lilv/lilv.h>
