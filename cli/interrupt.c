/* interrupt.c - SIGINT / SIGTERM handling of ffnn train (interrupt.h). The
 * handler only records the signal; a second signal removes the temporary files
 * of saves in progress (ffnn_remove_temporary_files: unlink only) and _exits. */
#define _POSIX_C_SOURCE 200809L
#include "interrupt.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ffnn.h"

static volatile sig_atomic_t received; /* the first signal, or 0 */

static void on_signal(int sig)
{
    static const char msg[] = "\nffnn train: second interrupt: exiting now (temporary files "
                              "removed; the last checkpoint written is intact)\n";
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
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

void ffnn_cli_interrupt_restore(void)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}

int ffnn_cli_interrupted(void) { return (int)received; }

const char *ffnn_cli_signal_name(int sig)
{
    static char other[32];
    if (sig == SIGINT)
        return "SIGINT";
    if (sig == SIGTERM)
        return "SIGTERM";
    snprintf(other, sizeof other, "signal %d", sig);
    return other;
}
