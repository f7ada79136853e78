// Every public header compiles as C++ and links from C++ (extern "C" guards): a C++ program runs a tiny ensemble.
#include "nhens/audit.h"
#include "nhens/check.h"
#include "nhens/checkpoint.h"
#include "nhens/core.h"
#include "nhens/ensemble.h"
#include "nhens/files.h"
#include "nhens/job.h"
#include "nhens/lanes.h"
#include "nhens/linalg.h"
#include "nhens/method.h"
#include "nhens/method_type.h"
#include "nhens/nhens.h"
#include "nhens/output.h"
#include "nhens/params.h"
#include "nhens/partial.h"
#include "nhens/pcg.h"
#include "nhens/plugin.h"
#include "nhens/poincare.h"
#include "nhens/ranks.h"
#include "nhens/reference.h"
#include "nhens/registry.h"
#include "nhens/simple.h"
#include "nhens/solver.h"
#include "nhens/stats.h"
#include "nhens/system.h"

#include <cstdio>
#include <cstring>

int main()
{
    nh_error err;
    nh_registry *reg = nh_registry_create(&err);
    if (!reg) {
        std::fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    nh_system quartic;   /* a function declared last in its header (reference.h) links with C linkage */
    const char *pairs[] = {"n=2"};
    if (nh_system_init(&quartic, nh_registry_find_system(reg, "quartic"), NULL, pairs, 1, &err) ||
        nh_has_latitude(&quartic)) {
        std::fprintf(stderr, "quartic: %s\n", err.msg);
        return 1;
    }
    std::printf("nhens %s from C++: %d observers\n", NH_VERSION, nh_observer_count(nh_observer_table_builtin()));
    nh_registry_free(reg);
    return 0;
}
