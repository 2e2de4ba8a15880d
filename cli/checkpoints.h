/* checkpoints.h - the checkpoint parts of ffnn train: --resume (the checkpoint's
 * settings, checked against the flags given), and --checkpoint /
 * --checkpoint-every / --max-steps during the epoch loop. Messages go to stderr. */
#ifndef FFNN_CLI_CHECKPOINTS_H
#define FFNN_CLI_CHECKPOINTS_H

#include <stdint.h>
#include <stdio.h>

#include "ffnn.h"

/* Which train options were given on the command line (1 = given). */
typedef struct ffnn_cli_given {
    int arch, loss, epochs, batch, lr, seed, shuffle, drop_last, train_limit;
    int optimizer, momentum, nesterov, beta1, beta2, eps;
    int decay, schedule, clip, ema; /* --weight-decay/--no-decay-bias, --lr-schedule/
                                       --warmup-steps, --clip-grad-*, --ema */
    int early_stopping;             /* --early-stopping */
} ffnn_cli_given;

/* The checkpoints of one ffnn train run. */
typedef struct ffnn_cli_checkpointer {
    const char *path;      /* --checkpoint FILE (or NULL: none)                    */
    long long every;       /* --checkpoint-every N (0: at the end of each epoch only) */
    long long max_steps;   /* --max-steps N (0: no limit)                          */
    uint64_t last_saved;   /* run-wide step of the last checkpoint (UINT64_MAX: none) */
    int failed;            /* a save failed: message holds why                      */
    int stopped;           /* --max-steps was reached                               */
    char message[1200];
} ffnn_cli_checkpointer;

/* --resume path: read the checkpoint; every setting it records and the user did
 * not give is taken from it (into *cfg, *train_limit); a flag that was given
 * must agree with it (else the message names the flag, its value and the
 * checkpoint's). split: the run takes --test-split or --val-split from the data,
 * so the checkpoint's training-set size is not --train-limit's (which is then
 * neither taken nor compared: give it again; ffnn_trainer_resume checks the
 * training set's size and CRC-32). --epochs and --early-stopping may differ:
 * both say only when the run stops (the best epoch the checkpoint holds is
 * kept). Returns 0, or 1 with the message printed. */
int ffnn_cli_resume_settings(const char *path, const char *arch, const ffnn_cli_given *given,
                             int split, ffnn_train_config *cfg, long long *train_limit);

/* The checkpoint's model (architecture and parameters) into *model; 0 or 1. */
int ffnn_cli_resume_model(const char *path, ffnn_model **model);

/* Continue trainer from the checkpoint (after ffnn_cli_resume_settings and
 * ffnn_trainer_create), say where on info, and mark that position saved in c.
 * Returns the first epoch to run (the unfinished one, or the next), or -1 with
 * the message printed. */
int ffnn_cli_resume_trainer(const char *path, ffnn_trainer *trainer, ffnn_cli_checkpointer *c,
                            FILE *info);


/* From an ffnn_step_fn: save every `every` run-wide steps and stop at
 * max_steps (saving there), except after an epoch's last step: the epoch loop
 * saves that one with ffnn_cli_checkpoint_save once the epoch has ended, so it
 * holds the epoch's end (validation, plateau schedule, early stopping).
 * Returns non-zero to stop the epoch. */
int ffnn_cli_checkpoint_step(ffnn_cli_checkpointer *c, ffnn_trainer *t, int epoch, size_t step,
                             size_t steps_per_epoch);

/* Save now (unless this run-wide step is already saved); 0, or 1 with
 * c->failed and c->message set. */
int ffnn_cli_checkpoint_save(ffnn_cli_checkpointer *c, ffnn_trainer *t);

#endif
