/* Must NOT compile: systems sit beside solvers, below methods. */
#include "nhens/method.h"

int nh_layer_probe(void)
{
    return NH_METHOD_IMPLICIT;
}
