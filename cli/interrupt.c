/* interrupt.c - SIGINT, SIGTERM, SIGHUP and SIGPIPE during ffnn train
 * (interrupt.h). The handler only records the signal; a second one (SIGPIPE
 * aside) removes the temporary files of saves in progress
 * (ffnn_remove_temporary_files: unlink only) and _exits. A signal this process
 * was started with set to SIG_IGN (nohup, a background job of a
 * non-interactive shell) stays ignored, and restore puts back what install
 * found. */
#define _POSIX_C_SOURCE 200809L
#include "interrupt.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ffnn.h"

static volatile sig_atomic_t received; /* the first signal, or 0 */

/* The signals that stop a run, and what each was before install. */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
enum { STOP_SIGNALS = sizeof stop_signals / sizeof stop_signals[0] };
static struct sigaction previous[STOP_SIGNALS];
static int installed;

static void on_signal(int sig)
{
    static const char msg[] = "\nffnn train: second interrupt: exiting now (temporary files "
                              "removed; the last checkpoint written is intact)\n";
    if (sig == SIGPIPE) {
        /* the reader of stdout (or stderr) is gone: stop as for SIGINT; further
         * writes there fail with EPIPE and are dropped, never a second signal */
        if (!received)
            received = sig;
        return;
    }
    if (received) {
        ffnn_remove_temporary_files();
        ssize_t n = write(2, msg, sizeof msg - 1);
        (void)n;
        _exit(FFNN_CLI_EXIT_INTERRUPTED);
    }
    received = sig;
}

void ffnn_cli_interrupt_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    received = 0;
    for (int i = 0; i < STOP_SIGNALS; i++) {
        if (!installed && sigaction(stop_signals[i], NULL, &previous[i]) != 0)
            previous[i].sa_handler = SIG_DFL;
        if (previous[i].sa_handler != SIG_IGN)
            sigaction(stop_signals[i], &sa, NULL);
    }
    installed = 1;
}

void ffnn_cli_interrupt_restore(void)
{
    if (!installed)
        return;
    for (int i = 0; i < STOP_SIGNALS; i++) {
        if (stop_signals[i] == SIGPIPE && received == SIGPIPE)
            signal(SIGPIPE, SIG_IGN); /* the pipe stays closed: the last flush at
                                         exit fails quietly instead of killing */
        else
            sigaction(stop_signals[i], &previous[i], NULL);
    }
    installed = 0;
}

int ffnn_cli_interrupted(void) { return (int)received; }

const char *ffnn_cli_signal_name(int sig)
{
    static char other[32];
    if (sig == SIGINT)
        return "SIGINT";
    if (sig == SIGTERM)
        return "SIGTERM";
    if (sig == SIGHUP)
        return "SIGHUP";
    if (sig == SIGPIPE)
        return "SIGPIPE";
    snprintf(other, sizeof other, "signal %d", sig);
    return other;
}
