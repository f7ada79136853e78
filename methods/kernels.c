/* The choice of a step kernel (kernels.h): by the system's type and size, then the method. */
#include "kernels.h"

#include "builtin_systems.h"


static const nh_step_kernel *kernels_of(const nh_system *sys)
{
    if (sys->type != &nh_system_quartic || sys->m != 1)
        return NULL;
    for (int i = 0; i < sys->n; ++i)
        if (sys->inv_mass[i] != 1.0)   /* the kernels' M = I */
            return NULL;
    return sys->n == 7 ? nh_quartic3_kernels : sys->n == 5 ? nh_quartic2_kernels : NULL;
}

nh_step_fn nh_step_kernel_for(const nh_method_type *method, const nh_system *sys)
{
    const nh_step_kernel *table = kernels_of(sys);
    for (int i = 0; table && i < NH_KERNEL_METHODS; ++i)
        if (table[i].method == method)
            return table[i].step;
    return NULL;
}
