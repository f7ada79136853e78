/* The built-in systems, in the order `nhens list` shows them (the registry starts with this table).
 * Adding a system = one file in systems/ and one line here. */
#include "nhens/system.h"


extern const nh_system_type nh_system_quartic;
extern const nh_system_type nh_system_cvt;
extern const nh_system_type nh_system_knife;
extern const nh_system_type nh_system_disk, nh_system_hcvt, nh_system_mvparticle, nh_system_vdisk, nh_system_robot;
extern const nh_system_type nh_system_dlparticle, nh_system_sleigh, nh_system_suslov;

static const nh_system_type *const registry[] = {
    &nh_system_quartic,
    &nh_system_cvt,
    &nh_system_knife,
    &nh_system_disk,
    &nh_system_hcvt,
    &nh_system_mvparticle,
    &nh_system_dlparticle,
    &nh_system_vdisk,
    &nh_system_robot,
    &nh_system_sleigh,
    &nh_system_suslov,
};

int nh_builtin_system_count(void)
{
    return (int)(sizeof registry / sizeof registry[0]);
}

const nh_system_type *nh_builtin_system_at(int i)
{
    return (i >= 0 && i < nh_builtin_system_count()) ? registry[i] : NULL;
}
