/* The built-in systems, in the order `nhens list` shows them (the registry starts with this table).
 * Adding a system = one file in systems/ and one line in builtin_systems.h. */
#include "builtin_systems.h"

#define NH_SYSTEM_ENTRY(name) &nh_system_##name,
static const nh_system_type *const registry[] = {NH_BUILTIN_SYSTEMS(NH_SYSTEM_ENTRY)};
#undef NH_SYSTEM_ENTRY

int nh_builtin_system_count(void)
{
    return (int)(sizeof registry / sizeof registry[0]);
}

const nh_system_type *nh_builtin_system_at(int i)
{
    return (i >= 0 && i < nh_builtin_system_count()) ? registry[i] : NULL;
}
