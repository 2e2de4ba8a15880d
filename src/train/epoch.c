/*
 * epoch.c - the training loop: an epoch's permutation, runs of steps through the
 * trainer's strategy (strategy/strategy.h), the per-step losses read back once
 * per call and checked for NaN/Inf, ffnn_trainer_step and the epoch functions.
 * The per-row losses of the whole epoch stay on the device until read back.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "core/rng.h"
#include "data/dataset.h"
#include "parallel/comm.h"
#include "train/trainer.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The permutation of an epoch (or file order) from the shuffle generator as it
 * was when the epoch began (epoch_rng), uploaded once; shuffle_rng advances. */
ffnn_status ffnn_trainer_make_permutation(ffnn_trainer *t)
{
    size_t n = t->run.train.host->count;
    for (size_t i = 0; i < n; i++)
        t->perm[i] = (int32_t)i;
    t->shuffle_rng = t->epoch_rng;
    if (t->cfg.shuffle)
        ffnn_rng_shuffle(&t->shuffle_rng, t->perm, n);
    return t->run.ops->upload(t->run.ctx, t->run.train.index, t->perm, n * sizeof(int32_t));
}

/* Start an epoch: a fresh permutation (or file order), uploaded once. */
static ffnn_status begin_epoch(ffnn_trainer *t)
{
    t->epoch_rng = t->shuffle_rng;
    t->epoch++;
    t->step = 0;
    t->epoch_loss_known = 0;
    return ffnn_trainer_make_permutation(t);
}

/* Queue steps [t->step, t->step + count) of the current epoch with the trainer's
 * strategy and advance the counters. */
static ffnn_status run_steps(ffnn_trainer *t, size_t count)
{
    ffnn_status st = t->strategy->run_steps(&t->run, t->strategy_state, t->step, count,
                                            t->opt_steps);
    if (st != FFNN_OK)
        return st;
    t->opt_steps += count;
    t->step += count;
    t->run.model->stale = 1; /* copied into the model when the public call returns */
    return FFNN_OK;
}

/* Steps per launch: cfg.steps_per_launch, else the strategy's default; 1 for a
 * strategy that launches step by step. */
static size_t launch_steps(const ffnn_trainer *t)
{
    if (!t->strategy->default_steps)
        return 1;
    const size_t asked = (size_t)t->cfg.steps_per_launch;
    return asked ? asked : t->strategy->default_steps(ffnn_trainer_steps_per_epoch(t));
}

/* Batch size of step s (0-based) of an epoch: the last batch may be short. */
size_t ffnn_trainer_batch_of_step(const ffnn_trainer *t, size_t s)
{
    return ffnn_step_batch(t->run.train.host->count, t->cfg.batch_size, s);
}

/* Record the loss of step s (0-based) of the current epoch; 0 when it is NaN
 * or Inf. The first NaN/Inf loss of the run is remembered (no checkpoint is
 * written after it). */
static int record_step_loss(ffnn_trainer *t, size_t s, double loss)
{
    t->epoch_loss[s] = loss;
    if (isfinite(loss))
        return 1;
    if (t->diverged_epoch == 0) {
        t->diverged_epoch = t->epoch;
        t->diverged_step = s + 1;
        t->diverged_loss = loss;
    }
    return 0;
}

/* Data parallelism: each rank holds the row losses of its shard of each step
 * in rows (the epoch's rows from `first` on); the steps [from, to)'s losses are
 * the sums over the ranks (in double) / the step's rows, the same on every rank.
 * *bad: the first step whose loss is NaN/Inf (else to), *bad_rank: the lowest
 * rank whose own rows of that step are (a second, rare reduction). Collective. */
static ffnn_status reduce_step_losses(ffnn_trainer *t, const float *rows, size_t first,
                                      size_t from, size_t to, size_t *bad, int *bad_rank)
{
    ffnn_comm *c = t->run.comm;
    size_t n = to - from;
    double *sum = malloc(n * sizeof *sum), *own = malloc(n * sizeof *own); /* [n] each */
    if (!sum || !own) {
        free(sum);
        free(own);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    }
    for (size_t s = from; s < to; s++) {
        size_t lo, count, step_rows;
        ffnn_step_rows(&t->run, s, &lo, &count, &step_rows);
        double acc = 0.0;
        for (size_t i = 0; i < count; i++)
            acc += rows[lo - first + i];
        sum[s - from] = own[s - from] = acc;
    }
    ffnn_status st = c->ops->reduce_host(c, sum, n, FFNN_REDUCE_SUM);
    for (size_t s = from; s < to && st == FFNN_OK; s++)
        if (!record_step_loss(t, s, sum[s - from] / (double)ffnn_trainer_batch_of_step(t, s)) &&
            *bad == to)
            *bad = s;
    if (st == FFNN_OK && *bad < to) { /* every rank sees the same sums, so all come here */
        double who = isfinite(own[*bad - from]) ? (double)c->size : (double)c->rank;
        if ((st = c->ops->reduce_host(c, &who, 1, FFNN_REDUCE_MIN)) == FFNN_OK)
            *bad_rank = who < (double)c->size ? (int)who : -1;
    }
    free(sum);
    free(own);
    return st;
}

/* Read back the per-row losses of steps [epoch_loss_known, step) of the current
 * epoch in one download (it synchronises) and record each step's mean; when
 * the epoch is complete, it becomes the last epoch (ffnn_trainer_step_losses).
 * FFNN_ERR_NUMERIC names the first NaN/Inf step. */
ffnn_status ffnn_trainer_read_back_losses(ffnn_trainer *t)
{
    size_t from = t->epoch_loss_known, to = t->step, B = t->cfg.batch_size;
    if (from >= to)
        return FFNN_OK;
    size_t first = from * B, count = (to - 1) * B + ffnn_trainer_batch_of_step(t, to - 1) - first;
    float *rows = malloc(count * sizeof *rows); /* [count] */
    if (!rows)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    ffnn_status st = t->run.ops->download(t->run.ctx, rows, t->run.train.row_loss + first,
                                      count * sizeof *rows);
    if (st == FFNN_OK && t->run.grad_norm) /* the clipping norms of the same steps */
        st = t->run.ops->download(t->run.ctx, t->epoch_norm + from, t->run.grad_norm + from,
                                  (to - from) * sizeof *t->epoch_norm);
    if (st != FFNN_OK) {
        free(rows);
        return st;
    }
    size_t bad = to; /* every step recorded; the first NaN/Inf reported */
    int bad_rank = -1;
    if (t->run.comm) {
        st = reduce_step_losses(t, rows, first, from, to, &bad, &bad_rank);
        free(rows);
        if (st != FFNN_OK)
            return st;
    } else {
        for (size_t s = from; s < to; s++)
            if (!record_step_loss(t, s, ffnn_weighted_mean_of(rows + (s * B - first),
                                                              t->perm + s * B,
                                                              t->run.train.host->weights,
                                                              ffnn_trainer_batch_of_step(t, s))) &&
                bad == to)
                bad = s;
        free(rows);
    }
    t->epoch_loss_known = to;
    if (bad < to && bad_rank >= 0)
        return ffnn_fail(FFNN_ERR_NUMERIC,
                         "epoch %d, step %zu: the loss is %g, from rank %d's rows (diverged "
                         "or NaN/Inf in its shard of the data; try a smaller learning rate)",
                         t->epoch, bad + 1, t->epoch_loss[bad], bad_rank);
    if (bad < to)
        return ffnn_fail(FFNN_ERR_NUMERIC,
                         "epoch %d, step %zu: the loss is %g (diverged or NaN/Inf in the "
                         "data; try a smaller learning rate)", t->epoch, bad + 1,
                         t->epoch_loss[bad]);
    if (to == ffnn_trainer_steps_per_epoch(t)) {
        memcpy(t->step_loss, t->epoch_loss, to * sizeof *t->step_loss);
        memcpy(t->step_norm, t->epoch_norm, to * sizeof *t->step_norm);
        t->step_loss_count = to;
    }
    return FFNN_OK;
}

/* Data parallelism: rank 0's validation loss and accuracy (NaN without a
 * validation set) become every rank's, so that the plateau schedule and any
 * decision taken on them (early stopping) are the same on every rank even when
 * a rank's own evaluation would round differently. One broadcast per finished
 * epoch on every rank, with or without a validation set (collectives match). */
static ffnn_status share_validation(ffnn_trainer *t, ffnn_epoch_stats *stats)
{
    ffnn_comm *c = t->run.comm;
    double v[2] = {stats->val_loss, stats->val_accuracy};
    ffnn_status st = c->ops->broadcast_host(c, v, sizeof v, 0);
    if (st == FFNN_OK) {
        stats->val_loss = v[0];
        stats->val_accuracy = v[1];
    }
    return st;
}

/* Early stopping's update with the epoch's metric: a finite metric below the
 * best so far (or the first finite one) makes the epoch the best, its weights
 * (the model's view: the EMA weights when on) copied to the host. */
static ffnn_status end_of_epoch_early_stopping(ffnn_trainer *t, double metric)
{
    if (isfinite(metric) && (t->es_best_epoch == 0 || metric < t->es_best_loss)) {
        ffnn_status st = t->run.ops->download(t->run.ctx, t->es_best,
                                              t->run.ema ? t->run.ema : t->run.params,
                                              t->run.model->parameter_count * sizeof(float));
        if (st != FFNN_OK)
            return st;
        t->es_best_epoch = t->epoch;
        t->es_best_loss = metric;
    }
    t->es_epoch = t->epoch;
    return FFNN_OK;
}

/* Once per finished epoch (all its losses read back): reduce-on-plateau and
 * early stopping, on val_loss, the epoch's validation loss, or when that is NaN
 * (no validation set, or ffnn_trainer_step, which evaluates none) on the epoch's
 * mean training loss: the metric given to torch's ReduceLROnPlateau.step().
 * Each updates once per epoch (plateau_epoch, es_epoch: the last seen). */
static ffnn_status end_of_epoch(ffnn_trainer *t, double val_loss)
{
    const size_t steps = ffnn_trainer_steps_per_epoch(t);
    const int early_stopping = t->cfg.early_stopping > 0 && t->es_epoch != t->epoch;
    if (t->step != steps || t->epoch_loss_known != steps ||
        (t->plateau_epoch == t->epoch && !early_stopping))
        return FFNN_OK;
    double sum = 0.0;
    for (size_t s = 0; s < steps; s++)
        sum += t->epoch_loss[s];
    const double metric = isnan(val_loss) ? sum / (double)steps : val_loss;
    if (t->plateau_epoch != t->epoch) {
        ffnn_plateau_update(&t->plateau, &t->cfg, metric);
        t->plateau_epoch = t->epoch;
    }
    return early_stopping ? end_of_epoch_early_stopping(t, metric) : FFNN_OK;
}

ffnn_status ffnn_trainer_step(ffnn_trainer *t, double *loss)
{
    ffnn_status st;
    if (t->epoch == 0 || t->step == ffnn_trainer_steps_per_epoch(t))
        if ((st = begin_epoch(t)) != FFNN_OK)
            return st;
    if ((st = ffnn_trainer_read_back_losses(t)) != FFNN_OK || (st = run_steps(t, 1)) != FFNN_OK)
        return st;
    st = ffnn_trainer_read_back_losses(t); /* this batch's rows */
    *loss = t->epoch_loss[t->step - 1];
    if (st == FFNN_OK)
        st = end_of_epoch(t, NAN);
    if (st == FFNN_OK) /* the model holds the weights when the call returns */
        st = ffnn_model_sync(t->run.model);
    return st;
}

void ffnn_trainer_position(const ffnn_trainer *t, int *epoch, size_t *step)
{
    if (epoch)
        *epoch = t->epoch;
    if (step)
        *step = t->step;
}

ffnn_status ffnn_trainer_run_epoch_until(ffnn_trainer *t, ffnn_step_fn on_step, void *user,
                                         ffnn_epoch_stats *stats, int *finished)
{
    ffnn_status st;
    if (!t || !stats)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_trainer_run_epoch_until: NULL argument");
    size_t steps = ffnn_trainer_steps_per_epoch(t), B = t->cfg.batch_size;
    double start = now_seconds();
    if ((st = t->run.ops->synchronize(t->run.ctx)) != FFNN_OK)
        return st;
    if ((t->epoch == 0 || t->step == steps) && (st = begin_epoch(t)) != FFNN_OK)
        return st;
    size_t first_step = t->step, per_launch = launch_steps(t);
    while (t->step < steps) {
        size_t count = steps - t->step < per_launch ? steps - t->step : per_launch;
        if ((st = run_steps(t, count)) != FFNN_OK)
            return st;
        if (on_step && on_step(user, t, t->epoch, t->step, steps) != 0)
            break;
    }
    /* one read-back per call: the rows of the steps not read back yet */
    if ((st = ffnn_trainer_read_back_losses(t)) != FFNN_OK)
        return st;
    if (t->diverged_epoch == t->epoch && t->diverged_step > first_step) /* seen by on_step */
        return ffnn_fail(FFNN_ERR_NUMERIC,
                         "epoch %d, step %zu: the loss is %g (diverged or NaN/Inf in the "
                         "data; try a smaller learning rate)", t->diverged_epoch,
                         t->diverged_step, t->diverged_loss);
    double seconds = now_seconds() - start, sum = 0.0;
    for (size_t s = 0; s < t->step; s++)
        sum += t->epoch_loss[s];
    size_t rows_done =
        t->step > first_step /* samples trained on in this call */
            ? (t->step - 1) * B + ffnn_trainer_batch_of_step(t, t->step - 1) - first_step * B
            : 0;
    stats->epoch = t->epoch;
    stats->train_loss = t->step ? sum / (double)t->step : 0.0;
    stats->seconds = seconds;
    stats->images_per_second = seconds > 0 ? (double)rows_done / seconds : 0.0;
    stats->val_loss = stats->val_accuracy = NAN;
    if (t->val && t->step == steps &&
        (st = ffnn_trainer_evaluate(t, t->val, &stats->val_loss, &stats->val_accuracy)) != FFNN_OK)
        return st;
    if (t->run.comm && t->step == steps && (st = share_validation(t, stats)) != FFNN_OK)
        return st;
    stats->learning_rate = ffnn_schedule_lr(&t->cfg, &t->plateau,
                                            t->opt_steps ? t->opt_steps : 1, steps);
    if ((st = end_of_epoch(t, stats->val_loss)) != FFNN_OK ||
        (st = ffnn_model_sync(t->run.model)) != FFNN_OK) /* the model holds the weights */
        return st;
    if (finished)
        *finished = t->step == steps;
    return FFNN_OK;
}

/* ffnn_trainer_run_epoch's progress callback as a step callback that never stops. */
typedef struct progress_adapter {
    ffnn_progress_fn progress;
    void *user;
} progress_adapter;

static int call_progress(void *user, ffnn_trainer *t, int epoch, size_t step, size_t steps)
{
    const progress_adapter *a = user;
    (void)t, (void)epoch;
    if (a->progress)
        a->progress(a->user, step, steps);
    return 0;
}

ffnn_status ffnn_trainer_run_epoch(ffnn_trainer *t, ffnn_progress_fn progress, void *user,
                                   ffnn_epoch_stats *stats)
{
    progress_adapter a = {progress, user};
    return ffnn_trainer_run_epoch_until(t, call_progress, &a, stats, NULL);
}

