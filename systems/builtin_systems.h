/* The built-in systems (systems-private; methods/ reads it too): one X-macro list, in the order `nhens list`
 * shows them, which declares each descriptor nh_system_NAME and builds the registry's table
 * (systems/registry.c). Adding a system = its file in systems/ and one line here. */
#ifndef NHENS_SYSTEMS_BUILTIN_SYSTEMS_H
#define NHENS_SYSTEMS_BUILTIN_SYSTEMS_H

#include "nhens/system.h"

#define NH_BUILTIN_SYSTEMS(X)                                                                                      \
    X(quartic)                                                                                                     \
    X(cvt)                                                                                                         \
    X(knife)                                                                                                       \
    X(disk)                                                                                                        \
    X(hcvt)                                                                                                        \
    X(mvparticle)                                                                                                  \
    X(dlparticle)                                                                                                  \
    X(vdisk)                                                                                                       \
    X(robot)                                                                                                       \
    X(sleigh)                                                                                                      \
    X(suslov)

#define NH_DECLARE_SYSTEM(name) extern const nh_system_type nh_system_##name;
NH_BUILTIN_SYSTEMS(NH_DECLARE_SYSTEM)
#undef NH_DECLARE_SYSTEM

#endif
