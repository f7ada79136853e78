/* The step kernels of the quartic with 2 pairs (kernel_quartic.h). */
#define QUARTIC_KERNEL_PAIRS 2
#include "kernel_quartic.h"
