/* The step kernels of the quartic with 3 pairs (kernel_quartic.h). */
#define QUARTIC_KERNEL_PAIRS 3
#include "kernel_quartic.h"
