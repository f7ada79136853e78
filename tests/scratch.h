/* Scratch folders of the test suite: removing what a test made under /tmp, without a shell. */
#ifndef NHENS_TEST_SCRATCH_H
#define NHENS_TEST_SCRATCH_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* rm -rf of a scratch folder we made (no shell). */
static inline void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        remove(dir);
        return;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[4608];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path)
            continue;
        if (e->d_type == DT_DIR)
            remove_tree(path);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

#endif
