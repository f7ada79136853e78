/* The registry's record of its plugins, written by the loader (engine/plugin.c), which reads this private
 * header of the methods layer; readers use nh_registry_plugin_at (registry.h). */
#ifndef NHENS_REGISTRY_PLUGINS_H
#define NHENS_REGISTRY_PLUGINS_H

#include "nhens/registry.h"

/* Appends (path copied, name kept: a loaded plugin's strings live as long as the process). */
int nh_registry_note_plugin(nh_registry *reg, const char *path, const char *name, const char *sha256, nh_error *err);

#endif
