/* The built-in methods (methods-private): one X-macro list, in the order `nhens list` shows them, which
 * declares each descriptor nh_method_NAME and builds the registry's table (methods/registry.c). Adding a
 * method = its file in methods/ and one line here. */
#ifndef NHENS_METHODS_BUILTIN_METHODS_H
#define NHENS_METHODS_BUILTIN_METHODS_H

#include "nhens/method_type.h"

#define NH_BUILTIN_METHODS(X)                                                                                      \
    X(dla)                                                                                                         \
    X(idla)                                                                                                        \
    X(dla01)                                                                                                       \
    X(leapfrog)                                                                                                    \
    X(dd)                                                                                                          \
    X(rk4)                                                                                                         \
    X(newmark)                                                                                                     \
    X(newmark_psi)                                                                                                 \
    X(adjoint)                                                                                                     \
    X(triple_jump)                                                                                                 \
    X(compose)                                                                                                     \
    X(spark2)                                                                                                      \
    X(genfun)                                                                                                      \
    X(avf)                                                                                                         \
    X(gonzalez)                                                                                                    \
    X(itoh_abe)                                                                                                    \
    X(gonzalez_r)                                                                                                  \
    X(gonzalez_f)

#define NH_DECLARE_METHOD(name) extern const nh_method_type nh_method_##name;
NH_BUILTIN_METHODS(NH_DECLARE_METHOD)
#undef NH_DECLARE_METHOD

#endif
