/* Loading plugins into a registry (include/nhens/plugin.h), and recording each one's absolute path and the
 * SHA-256 of its bytes in the registry (the provenance summary.json and report's cache read). */
#include "nhens/plugin.h"
#include "registry_plugins.h"
#include "sha256.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nh_registry_load_plugin(nh_registry *reg, const char *path, nh_error *err)
{
    if (!path || !*path)
        return nh_fail(err, NH_ERR_INPUT, "plugin path is empty");
    /* dlopen searches the library path for a bare name; a plugin is always a file the user names */
    if (!strchr(path, '/'))
        return nh_fail(err, NH_ERR_INPUT, "plugin '%s' must be a path to a shared object (e.g. ./%s)", path, path);
    /* the file is digested, then loaded by the same absolute path: the digest is of what runs */
    char absolute[PATH_MAX], sha256[NH_SHA256_HEX];
    if (!realpath(path, absolute))
        return nh_fail(err, NH_ERR_INPUT, "cannot load plugin '%s': %s", path, strerror(errno));
    if (nh_sha256_file(absolute, sha256))
        return nh_fail(err, NH_ERR_INPUT, "cannot read plugin '%s': %s", path, strerror(errno));
    void *handle = dlopen(absolute, RTLD_NOW | RTLD_LOCAL);
    if (!handle)
        return nh_fail(err, NH_ERR_INPUT, "cannot load plugin '%s': %s", path, dlerror());
    const nh_plugin *entry = dlsym(handle, "nh_plugin_entry");
    if (!entry) {
        dlclose(handle);
        return nh_fail(err, NH_ERR_INPUT, "'%s' is not an nhens plugin: it does not export nh_plugin_entry", path);
    }
    if (entry->abi_version != NH_PLUGIN_ABI_VERSION) {
        int found = entry->abi_version;
        dlclose(handle);
        return nh_fail(err, NH_ERR_INPUT,
                       "plugin '%s' was built for nhens plugin ABI %d, and this nhens has ABI %d; rebuild the "
                       "plugin against these headers",
                       path, found, NH_PLUGIN_ABI_VERSION);
    }
    if (!entry->register_all) {
        dlclose(handle);
        return nh_fail(err, NH_ERR_INPUT, "plugin '%s' has no register_all function", path);
    }
    nh_error inner;
    inner.msg[0] = '\0';
    const int rc = entry->register_all(reg, &inner);
    if (rc == NH_OK)
        return nh_registry_note_plugin(reg, absolute, entry->name, sha256, err);
    inner.msg[sizeof inner.msg - 1] = '\0';
    if (!inner.msg[0])
        snprintf(inner.msg, sizeof inner.msg, "its register_all failed (%d) without a message", rc);
    return nh_fail(err, NH_ERR_INPUT, "plugin '%s' (%s): %s", path, entry->name ? entry->name : "?", inner.msg);
}
