/* libFuzzer harness: the experiment-file loader (cli/experiment.c with libinih) on arbitrary bytes.
 * Every input must load or be refused with a message; nothing may crash, leak or trip a sanitizer.
 * Seeds: the experiments folder and tests/cli/hostile (scripts/fuzz.sh). */
#define _GNU_SOURCE
#include "experiment.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("experiment.ini", 0);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) == (ssize_t)size) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        nh_experiment exp;
        nh_error err;
        if (nh_experiment_load(path, 0, &exp, &err) != 0 && err.msg[0] == '\0')
            __builtin_trap(); /* a refusal must say why */
        nh_experiment_scale(&exp, 0.5);
    }
    close(fd);
    return 0;
}
