/* Must NOT compile: the methods layer sees only base, solvers, systems and methods headers, so an upward
 * include of the engine fails. CTest builds this target and expects the build to fail. */
#include "nhens/ensemble.h"

int nh_layer_probe(void)
{
    return NH_BLOCK_SIZE;
}
