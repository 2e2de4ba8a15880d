/* interrupt.h - SIGINT and SIGTERM during ffnn train (interrupt.c): the first
 * signal asks the run to stop after the current step or launch (the run then
 * saves its checkpoint and model and exits 130); a second one removes the
 * temporary files of saves in progress and exits 130 at once. */
#ifndef FFNN_CLI_INTERRUPT_H
#define FFNN_CLI_INTERRUPT_H

/* Install the handlers (SA_RESTART, so interrupted reads and writes go on). */
void ffnn_cli_interrupt_install(void);

/* The default handlers again. */
void ffnn_cli_interrupt_restore(void);

/* The number of the first signal received since install (SIGINT, SIGTERM), or 0. */
int ffnn_cli_interrupted(void);

/* "SIGINT", "SIGTERM" or "signal N" for signal sig. */
const char *ffnn_cli_signal_name(int sig);

/* The exit status of a run stopped by a signal (128 + SIGINT, as a shell). */
enum { FFNN_CLI_EXIT_INTERRUPTED = 130 };

#endif
