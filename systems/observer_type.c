/* The descriptor of a plugin's observer (include/nhens/observer.h): its name rule and its check, which the
 * registry applies when a plugin adds one. */
#include "nhens/observer.h"

#include <stdio.h>
#include <string.h>

int nh_observer_name_ok(const char *name)
{
    if (!name || !((*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z')) ||
        strlen(name) > NH_OBSERVER_NAME_MAX)
        return 0;
    for (const char *p = name; *p; ++p)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return 0;
    return 1;
}

int nh_observer_type_check(const nh_observer_type *type, nh_error *err)
{
    if (!type)
        return nh_fail(err, NH_ERR_INPUT, "no observer descriptor to add (a NULL pointer)");
    if (!nh_observer_name_ok(type->name))
        return nh_fail(err, NH_ERR_INPUT, "observer name '%.40s' is not allowed: it needs 1-%d characters, a letter "
                       "then letters, digits or '_'", type->name ? type->name : "(null)", NH_OBSERVER_NAME_MAX);
    if (type->dim < 1 || type->dim > NH_OBSERVER_MAX_DIM)
        return nh_fail(err, NH_ERR_INPUT, "observer '%s' has dim = %d; 1 to %d values are allowed", type->name,
                       type->dim, NH_OBSERVER_MAX_DIM);
    if (!type->value)
        return nh_fail(err, NH_ERR_INPUT, "observer '%s' has no value function", type->name);
    if (!type->help || !type->help[0])
        return nh_fail(err, NH_ERR_INPUT, "observer '%s' has no help text (one line for nhens list)", type->name);
    return NH_OK;
}
