/* SIGINT and SIGTERM during `run` and `report`: the first asks the ensemble to stop gracefully (the
 * engine polls nh_cli_interrupted between blocks and every NH_INTERRUPT_POLL_STEPS steps, the finished
 * blocks are merged and written with "complete": false, the exit status is 128 + the signal); a second
 * signal ends the process at once. Under mpirun a signal to any rank stops every rank (engine/ranks.c);
 * rank 0 then exits as if it received SIGTERM, mpirun's own signal to its ranks. The received signal number is the only mutable global of nhens: a
 * signal handler can reach nothing else. */
#include "cli.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t received_signal;

static void on_signal(int sig)
{
    if (received_signal) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    received_signal = sig;
}

void nh_cli_catch_interrupts(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int nh_cli_interrupted(void *ctx)
{
    (void)ctx;
    return received_signal != 0;
}

int nh_cli_interrupt_status(void)
{
    return received_signal ? 128 + received_signal : NH_EXIT_OK;
}

void nh_cli_interrupted_by_peer(void)
{
    if (!received_signal)
        received_signal = SIGTERM;
}
