/* Step kernels (methods-private): the explicit steps compiled a second time for one built-in system, with
 * its n, m and callbacks constants (kernel_quartic.h, after GSL's templates: the method's own source
 * included under macros). The calls into the system and the loops over n of the generic step then fold
 * into straight-line code. A kernel is the method's step, its operations in the same order, so it gives
 * the same bits (tests/methods: kernels); nh_stepper_create picks it when one matches the system. */
#ifndef NHENS_METHODS_KERNELS_H
#define NHENS_METHODS_KERNELS_H

#include "nhens/method.h"
#include "builtin_methods.h"
#include "stepper.h"

typedef struct nh_step_kernel {
    const nh_method_type *method;
    nh_step_fn step;
} nh_step_kernel;

/* The steps compiled per kernel: dla01, lf, spark2, rk4. */
enum { NH_KERNEL_METHODS = 4 };

/* The quartic of Celledoni et al. 2019 (k = 3 pairs, n = 7) and of Anahory Simoes et al. 2022 (k = 2, n = 5). */
extern const nh_step_kernel nh_quartic3_kernels[NH_KERNEL_METHODS];
extern const nh_step_kernel nh_quartic2_kernels[NH_KERNEL_METHODS];

/* The kernel of `method` for `sys`, or NULL: then the method's own step serves it. */
nh_step_fn nh_step_kernel_for(const nh_method_type *method, const nh_system *sys);

#endif
