/* train_logs.h - the --log and --log-steps CSV files of ffnn train (train_logs.c):
 * opened safely (no planted link followed, locked, truncated only once both opened),
 * one row per epoch or step, closed with the write's outcome. Messages go to stderr. */
#ifndef FFNN_CLI_TRAIN_LOGS_H
#define FFNN_CLI_TRAIN_LOGS_H

#include <stddef.h>
#include <stdio.h>

#include "train_run.h"

/* The log files of one run: either NULL when not asked for (or not rank 0). */
typedef struct ffnn_cli_train_logs {
    FILE *epoch;       /* --log: epoch,train_loss,val_loss|test_loss,...            */
    FILE *step;        /* --log-steps: epoch,step,loss[,grad_norm]                  */
    size_t steps_done; /* the run-wide steps logged so far (resumed runs: before)   */
} ffnn_cli_train_logs;

/* Open o->log_path and o->log_steps (when set and lead: rank 0 alone logs) and
 * write their header lines; have_val: the epoch rows carry the validation set's
 * columns (else the test set's). Returns 0, or 1 with the message printed and
 * nothing left open (the files left as they were unless the header failed). */
int ffnn_cli_train_logs_open(ffnn_cli_train_logs *l, const ffnn_cli_train_options *o,
                             int lead, int have_val);

/* Epoch epoch's row of --log (has_set: a held-out set's loss and, unless o->regression,
 * accuracy) and the epoch's per-step rows of --log-steps, each flushed. 0, or 1
 * with the message printed. */
int ffnn_cli_train_logs_epoch(ffnn_cli_train_logs *l, const ffnn_cli_train_options *o,
                              const ffnn_trainer *trainer, int epoch,
                              const ffnn_epoch_stats *s, int has_set, double loss,
                              double accuracy);

/* Close both files; a failed close sets rc to 1 with the message when rc was 0.
 * Returns rc. */
int ffnn_cli_train_logs_close(ffnn_cli_train_logs *l, const ffnn_cli_train_options *o, int rc);

#endif
