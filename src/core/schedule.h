/* schedule.h - learning-rate schedules (schedule.c): the learning rate of each
 * optimizer step, as torch.optim.lr_scheduler computes it, on the host. Pure
 * functions of the configuration and the step, except reduce-on-plateau, whose
 * state (ffnn_plateau) the trainer keeps, updates once per epoch and checkpoints.
 *
 * Stepping: the epoch schedules (step, multistep, exponential, cosine, linear,
 * plateau) change the rate once per epoch, as a torch scheduler whose step() is
 * called after every epoch: epoch e (0-based) runs at the rate after e calls (the
 * closed forms of torch's _get_closed_form_lr). The warm-up is per step: step k
 * (0-based over the whole run) of the first warmup_steps runs at
 * (k + 1) / warmup_steps times that rate (torch: LambdaLR stepped per batch,
 * multiplied in). */
#ifndef FFNN_CORE_SCHEDULE_H
#define FFNN_CORE_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "ffnn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reduce-on-plateau's state (torch.optim.lr_scheduler.ReduceLROnPlateau, mode
 * min, threshold_mode rel, cooldown 0, eps 1e-8). */
typedef struct ffnn_plateau {
    double lr;          /* the current rate (starts at the configured one)       */
    double best;        /* the best metric so far (HUGE_VAL before the first)    */
    int bad_epochs;     /* epochs since the best without an improvement          */
} ffnn_plateau;

/* The state at the start of a run. */
ffnn_plateau ffnn_plateau_start(const ffnn_train_config *cfg);

/* After an epoch whose metric (validation loss, else training loss) is metric:
 * improvement when metric < best (1 - threshold); after more than patience
 * epochs without one, lr = max(lr factor, min_lr) (kept when the change is at
 * most 1e-8), and the count restarts. No-op unless cfg's schedule is plateau. */
void ffnn_plateau_update(ffnn_plateau *p, const ffnn_train_config *cfg, double metric);

/* The learning rate of optimizer step t (1-based over the run) with
 * steps_per_epoch steps per epoch; plateau: p's rate (p may be NULL for the
 * other schedules). In double, from the decimal values of the float settings
 * (ffnn_decimal_value), as PyTorch's Python floats. */
double ffnn_schedule_lr(const ffnn_train_config *cfg, const ffnn_plateau *p, uint64_t t,
                        size_t steps_per_epoch);

/* 1 when every step of an epoch runs at the same rate (no warm-up step inside
 * it): the strategies that launch a whole epoch with one rate check this. */
int ffnn_schedule_constant_within_epochs(const ffnn_train_config *cfg);

#ifdef __cplusplus
}
#endif
#endif
