/* Progress of an ensemble on stderr, for `run` and `report`: on a terminal one line rewritten in place;
 * otherwise (a log, CI) a line at the first merged block, then every NH_PROGRESS_SECONDS, and at the
 * end. Each line has the trajectories done, the elapsed time and an estimate of the time left. */
#include "cli.h"

#include <time.h>
#include <unistd.h>

double nh_cli_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void nh_cli_progress_start(nh_cli_progress *p, const char *label)
{
    *p = (nh_cli_progress){.label = label, .start = nh_cli_seconds(), .tty = isatty(STDERR_FILENO)};
    p->last = p->start - 2 * NH_PROGRESS_SECONDS;
}

void nh_cli_progress_report(long done, long total, void *ctx)
{
    nh_cli_progress *p = ctx;
    const double now = nh_cli_seconds(), elapsed = now - p->start;
    if (!p->tty && done < total && now - p->last < NH_PROGRESS_SECONDS)
        return;
    p->last = now;
    const double left = done > 0 ? elapsed * (double)(total - done) / (double)done : 0.0;
    fprintf(stderr, "%s%s trajectories %ld/%ld, %.1f s elapsed, about %.0f s left%s", p->tty ? "\r" : "", p->label,
            done, total, elapsed, left, p->tty && done < total ? "   " : "\n");
    fflush(stderr);
}
