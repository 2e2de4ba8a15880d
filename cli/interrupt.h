/* interrupt.h - SIGINT, SIGTERM, SIGHUP (the terminal closed) and SIGPIPE (the
 * reader of the output gone: ffnn train ... | head) during ffnn train
 * (interrupt.c): the first signal asks the run to stop after the current step
 * or launch (the run then saves its checkpoint and model and exits 130); a
 * second one (not SIGPIPE: later writes to the closed pipe just fail) removes
 * the temporary files of saves in progress and exits 130 at once. A signal
 * inherited as ignored (SIG_IGN: nohup, background jobs) stays ignored. */
#ifndef FFNN_CLI_INTERRUPT_H
#define FFNN_CLI_INTERRUPT_H

/* Install the handlers (SA_RESTART, so interrupted reads and writes go on),
 * except for signals found ignored. */
void ffnn_cli_interrupt_install(void);

/* The dispositions install found, again (idempotent). */
void ffnn_cli_interrupt_restore(void);

/* The number of the first signal received since install, or 0. */
int ffnn_cli_interrupted(void);

/* "SIGINT", "SIGTERM", "SIGHUP", "SIGPIPE" or "signal N" for signal sig. */
const char *ffnn_cli_signal_name(int sig);

/* The exit status of a run stopped by a signal (128 + SIGINT, as a shell). */
enum { FFNN_CLI_EXIT_INTERRUPTED = 130 };

#endif
