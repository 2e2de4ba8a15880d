/*
 * state.c - where a trainer stands: the per-step losses, the optimizer state and
 * counters, the run state a checkpoint saves and restores (train_internal.h), and
 * the accessors the checkpoint code reads.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/error.h"
#include "core/optim.h"
#include "data/dataset.h"
#include "train/train_internal.h"
#include "train/trainer.h"

ffnn_status ffnn_trainer_step_losses(const ffnn_trainer *t, const double **losses,
                                     size_t *count)
{
    if (!t || !losses || !count)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_trainer_step_losses: NULL argument");
    *losses = t->step_loss;
    *count = t->step_loss_count;
    return FFNN_OK;
}

ffnn_status ffnn_trainer_step_grad_norms(const ffnn_trainer *t, const float **norms,
                                        size_t *count)
{
    if (!t || !norms || !count)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "ffnn_trainer_step_grad_norms: NULL argument");
    *norms = t->step_norm;
    *count = t->run.grad_norm ? t->step_loss_count : 0;
    return FFNN_OK;
}

ffnn_status ffnn_trainer_optimizer_state(ffnn_trainer *t, float *host_state, size_t *count)
{
    if (!t || !count)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "ffnn_trainer_optimizer_state: NULL argument");
    size_t n = ffnn_optimizer_state_count(t->cfg.optimizer) * t->run.model->parameter_count;
    if (host_state && *count < n)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "ffnn_trainer_optimizer_state: room for %zu floats, the %s state "
                         "has %zu", *count, ffnn_optimizer_name(t->cfg.optimizer), n);
    *count = n;
    if (!host_state || n == 0)
        return FFNN_OK;
    return t->run.ops->download(t->run.ctx, host_state, t->run.opt_state, n * sizeof *host_state);
}

uint64_t ffnn_trainer_optimizer_steps(const ffnn_trainer *t) { return t->opt_steps; }

/* ------------------------------------------------------------ checkpoint state */

ffnn_model *ffnn_trainer_model(const ffnn_trainer *t) { return t->run.model; }

const ffnn_train_config *ffnn_trainer_config(const ffnn_trainer *t) { return &t->cfg; }

const ffnn_dataset *ffnn_trainer_train_data(const ffnn_trainer *t) { return t->run.train.host; }

/* crc extended by the n bytes at p (none when p is NULL), in 1 GiB pieces. */
static uLong crc32_bytes(uLong crc, const uint8_t *p, size_t n)
{
    for (size_t at = 0; p && at < n; at += 1u << 30) {
        size_t k = n - at < (1u << 30) ? n - at : (1u << 30);
        crc = crc32(crc, p + at, (uInt)k);
    }
    return crc;
}

/* crc extended by the class labels of d: one byte each when every label is
 * below 256 (the checkpoints written while labels were uint8 stay valid), else
 * each as 4 bytes little-endian. */
static uLong crc32_labels(uLong crc, const ffnn_dataset *d)
{
    int wide = 0;
    for (size_t i = 0; d->labels && i < d->count; i++)
        wide |= d->labels[i] > 255;
    for (size_t i = 0; d->labels && i < d->count; i++) {
        uint32_t v = (uint32_t)d->labels[i];
        uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
        crc = crc32(crc, b, wide ? 4 : 1);
    }
    return crc;
}

uint32_t ffnn_trainer_data_crc32(ffnn_trainer *t)
{
    if (!t->data_crc_known) {
        const ffnn_dataset *d = t->run.train.host;
        const uint8_t *parts[3] = {d->images, (const uint8_t *)d->values,
                                   (const uint8_t *)d->targets};
        size_t sizes[3] = {d->count * d->features, d->count * d->features * sizeof(float),
                           d->count * d->target_width * sizeof(float)};
        uLong crc = crc32(0L, Z_NULL, 0);
        for (int p = 0; p < 2; p++)
            crc = crc32_bytes(crc, parts[p], sizes[p]);
        crc = crc32_labels(crc, d);
        crc = crc32_bytes(crc, parts[2], sizes[2]);
        t->data_crc = (uint32_t)crc;
        t->data_crc_known = 1;
    }
    return t->data_crc;
}

ffnn_status ffnn_trainer_download_parameters(ffnn_trainer *t, float *host)
{
    return t->run.ops->download(t->run.ctx, host, t->run.params,
                                t->run.model->parameter_count * sizeof *host);
}

ffnn_status ffnn_trainer_get_state(ffnn_trainer *t, ffnn_trainer_state *s)
{
    ffnn_status st = ffnn_trainer_read_back_losses(t);
    if (st == FFNN_OK && t->diverged_epoch != 0)
        st = ffnn_fail(FFNN_ERR_NUMERIC,
                       "epoch %d, step %zu: the loss is %g (the run diverged; a checkpoint "
                       "after it would hold NaN/Inf)", t->diverged_epoch, t->diverged_step,
                       t->diverged_loss);
    if (st != FFNN_OK)
        return st;
    s->epoch = t->epoch;
    s->step = t->step;
    s->optimizer_steps = t->opt_steps;
    memcpy(s->epoch_rng, t->epoch_rng.s, sizeof s->epoch_rng);
    s->step_losses = t->epoch_loss;
    s->plateau = t->plateau;
    s->plateau_epoch = t->plateau_epoch;
    s->es_epoch = t->es_epoch;
    s->es_best_epoch = t->es_best_epoch;
    s->es_best_loss = t->es_best_loss;
    s->es_best = t->es_best && t->es_best_epoch > 0 ? t->es_best : NULL;
    return FFNN_OK;
}

ffnn_status ffnn_trainer_download_ema(ffnn_trainer *t, float *host)
{
    if (!t->run.ema)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "the trainer keeps no EMA (ema_decay 0)");
    return t->run.ops->download(t->run.ctx, host, t->run.ema,
                                t->run.model->parameter_count * sizeof *host);
}

ffnn_status ffnn_trainer_set_state(ffnn_trainer *t, const float *params, const float *opt_state,
                                   const float *ema, const ffnn_trainer_state *s)
{
    size_t steps = ffnn_trainer_steps_per_epoch(t), n = t->run.model->parameter_count;
    size_t state_floats = ffnn_optimizer_state_count(t->cfg.optimizer) * n;
    ffnn_status st;
    if (s->epoch < 0 || s->step > steps || (s->epoch == 0 && s->step != 0))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "epoch %d, step %zu: expected an epoch >= 0 and a step in [0, %zu] "
                         "(0 before the first epoch)", s->epoch, s->step, steps);
    uint64_t expected = s->epoch == 0 ? 0 : (uint64_t)(s->epoch - 1) * steps + s->step;
    if (s->optimizer_steps != expected)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "optimizer steps %llu: expected %llu (%d full epochs of %zu steps "
                         "and %zu steps)", (unsigned long long)s->optimizer_steps,
                         (unsigned long long)expected, s->epoch > 0 ? s->epoch - 1 : 0, steps,
                         s->step);
    const int es_on = t->cfg.early_stopping > 0;
    if (es_on && (s->es_best_epoch < 0 || s->es_best_epoch > s->es_epoch ||
                  s->es_epoch > s->epoch || (s->es_best_epoch > 0 && !s->es_best)))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "early stopping: best epoch %d, last epoch seen %d: expected 0 <= "
                         "best <= last seen <= epoch %d (and the best weights)",
                         s->es_best_epoch, s->es_epoch, s->epoch);
    for (size_t k = 0; k < s->step; k++)
        if (!isfinite(s->step_losses[k]))
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "step %zu: loss %g: expected a "
                             "finite number", k + 1, s->step_losses[k]);
    ffnn_run_params_changed(&t->run); /* the bf16 shadow, if any, is made again */
    if ((st = t->run.ops->upload(t->run.ctx, t->run.params, params, n * sizeof *params)) !=
            FFNN_OK ||
        (state_floats && (st = t->run.ops->upload(t->run.ctx, t->run.opt_state, opt_state,
                                                  state_floats * sizeof *opt_state)) != FFNN_OK) ||
        (t->run.ema && ema &&
         (st = t->run.ops->upload(t->run.ctx, t->run.ema, ema, n * sizeof *ema)) != FFNN_OK))
        return st;
    t->plateau = s->plateau;
    t->plateau_epoch = s->plateau_epoch;
    if (es_on) { /* off: the file's state is not this run's */
        t->es_epoch = s->es_epoch;
        t->es_best_epoch = s->es_best_epoch;
        t->es_best_loss = s->es_best_epoch > 0 ? s->es_best_loss : 0.0;
        if (s->es_best_epoch > 0)
            memcpy(t->es_best, s->es_best, n * sizeof *t->es_best);
    }
    memcpy(t->run.model->params, params, n * sizeof *params);
    t->opt_steps = s->optimizer_steps;
    memcpy(t->epoch_rng.s, s->epoch_rng, sizeof t->epoch_rng.s);
    t->shuffle_rng = t->epoch_rng;
    t->epoch = s->epoch;
    t->step = s->step;
    t->diverged_epoch = 0;
    memcpy(t->epoch_loss, s->step_losses, s->step * sizeof *t->epoch_loss);
    t->epoch_loss_known = s->step;
    t->step_loss_count = 0;
    if (s->epoch > 0 && s->step == steps) {
        memcpy(t->step_loss, t->epoch_loss, steps * sizeof *t->step_loss);
        t->step_loss_count = steps;
    }
    /* the epoch's permutation again (shuffle_rng then stands where it stood) */
    if (s->epoch > 0 && (st = ffnn_trainer_make_permutation(t)) != FFNN_OK)
        return st;
    return t->run.ops->synchronize(t->run.ctx); /* the uploads may be asynchronous */
}

/* ------------------------------------------------------------ early stopping */

ffnn_status ffnn_trainer_early_stopping(const ffnn_trainer *t, int *best_epoch,
                                        double *best_loss, int *stop)
{
    if (!t)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_trainer_early_stopping: NULL trainer");
    const int best = t->cfg.early_stopping > 0 ? t->es_best_epoch : 0;
    if (best_epoch)
        *best_epoch = best;
    if (best_loss)
        *best_loss = best > 0 ? t->es_best_loss : NAN;
    if (stop)
        *stop = best > 0 && t->es_epoch - best >= t->cfg.early_stopping;
    return FFNN_OK;
}

ffnn_status ffnn_trainer_restore_best(ffnn_trainer *t)
{
    if (!t)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_trainer_restore_best: NULL trainer");
    if (t->cfg.early_stopping <= 0 || t->es_best_epoch == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_trainer_restore_best: %s",
                         t->cfg.early_stopping <= 0
                             ? "early stopping is off (early_stopping 0): no best epoch kept"
                             : "no best epoch yet (no epoch with a finite metric finished)");
    ffnn_model *m = t->run.model;
    memcpy(m->params, t->es_best, m->parameter_count * sizeof *m->params);
    m->stale = 0; /* the model holds them until the trainer's next step */
    return FFNN_OK;
}
