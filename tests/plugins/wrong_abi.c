/* A plugin that claims an ABI version nhens does not have: the loader must refuse it by name. */
#include <nhens/nhens.h>

static int register_nothing(nh_registry *reg, nh_error *err)
{
    (void)reg;
    (void)err;
    return NH_OK;
}

NH_PLUGIN_EXPORT const nh_plugin nh_plugin_entry = {NH_PLUGIN_ABI_VERSION + 1, "wrong-abi",
                                                    "built against a future ABI", register_nothing};
