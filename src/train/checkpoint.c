/*
 * checkpoint.c - the trainer's side of checkpoints (ffnn.h, "checkpoints"):
 * ffnn_trainer_save_checkpoint fills an ffnn_run_state (io/run_state.h) from the
 * trainer and io/checkpoint.c writes it; ffnn_trainer_resume has io read one,
 * checks that this trainer runs what it records, and hands it to the trainer;
 * ffnn_checkpoint_load reads one for the caller. Only the train_internal.h
 * functions touch the trainer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/error.h"
#include "core/model.h"
#include "core/optim.h"
#include "core/train_options.h"
#include "io/run_state.h"
#include "parallel/comm.h"
#include "train/train_internal.h"

/* ------------------------------------------------------------ reading */

ffnn_status ffnn_checkpoint_load(const char *path, ffnn_model **model, ffnn_checkpoint_info *info)
{
    if (!path)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_checkpoint_load: NULL path");
    /* what the file does not record (device, strategy, eval_batch_size, the
     * other optimizers' hyperparameters ...): the defaults */
    const ffnn_train_config defaults = ffnn_train_config_default();
    ffnn_run_state s;
    ffnn_status st = ffnn_checkpoint_read(path, &defaults, &s);
    if (st != FFNN_OK)
        return st;
    if (info) {
        memset(info, 0, sizeof *info);
        info->cfg = s.cfg;
        info->train_count = s.train_count;
        info->train_crc32 = s.train_crc32;
        info->epoch = s.epoch;
        info->step = s.step;
        info->steps_per_epoch = s.steps_per_epoch;
        info->optimizer_steps = s.optimizer_steps;
        snprintf(info->ffnn_version, sizeof info->ffnn_version, "%s", s.ffnn_version);
    }
    if (model) {
        *model = (ffnn_model *)s.model; /* ffnn_checkpoint_read made it: ours */
        s.model = NULL;
        s.params = NULL;
    }
    ffnn_run_state_free(&s);
    return FFNN_OK;
}

/* ------------------------------------------------------------ resuming */

/* The setting `what` differs: checkpoint value `saved`, trainer value `here`. */
static ffnn_status ck_differs(const char *path, const char *what, const char *saved,
                              const char *here)
{
    return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                     "%s: cannot resume: %s is %s in the checkpoint but %s in this run "
                     "(continuing exactly needs the same setting)", path, what, saved, here);
}

/* The architectures of the checkpoint (saved) and of the trainer (here) are the
 * same; the strings sized from the models. */
static ffnn_status ck_check_arch(const char *path, const ffnn_model *saved,
                                 const ffnn_model *here)
{
    size_t a_size = ffnn_arch_format_size(saved->layer_count);
    size_t b_size = ffnn_arch_format_size(here->layer_count);
    char *a = malloc(a_size), *b = malloc(b_size);
    ffnn_status st = FFNN_OK;
    if (!a || !b) {
        st = ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory", path);
    } else {
        ffnn_model_arch_string(saved, a, a_size);
        ffnn_model_arch_string(here, b, b_size);
        if (strcmp(a, b) != 0)
            st = ck_differs(path, "the architecture", a, b);
    }
    free(a);
    free(b);
    return st;
}

/* Option o of c as the message shows it: a bool on/off, else its text. */
static void ck_option_text(const ffnn_train_config *c, const ffnn_train_option *o, char *buf,
                           size_t size)
{
    if (o->type == FFNN_OPTION_BOOL)
        snprintf(buf, size, "%s", ffnn_option_value(c, o) ? "on" : "off");
    else if (!ffnn_option_format(c, o, buf, size))
        snprintf(buf, size, "?");
}

/* The trainer runs what the checkpoint f recorded: the architecture, every
 * option the table marks MATCH that the file records for its optimizer
 * (core/train_options.def), the training set's size and CRC-32. */
static ffnn_status ck_check_trainer(const char *path, const ffnn_run_state *f, ffnn_trainer *t)
{
    const ffnn_train_config *c = ffnn_trainer_config(t), *s = &f->cfg;
    const ffnn_dataset *data = ffnn_trainer_train_data(t);
    const int adam = s->optimizer == FFNN_OPT_ADAM || s->optimizer == FFNN_OPT_ADAMW;
    char a[FFNN_OPTION_LIST_TEXT_MAX], b[FFNN_OPTION_LIST_TEXT_MAX + 64];
    ffnn_status st;

    if ((st = ck_check_arch(path, f->model, ffnn_trainer_model(t))) != FFNN_OK)
        return st;
    for (size_t i = 0; i < ffnn_train_option_count(); i++) {
        const ffnn_train_option *o = ffnn_train_option_at(i);
        if (!o->resume_match || o->checkpoint == FFNN_CK_NONE ||
            (o->checkpoint == FFNN_CK_MOMENTUM && s->optimizer != FFNN_OPT_MOMENTUM) ||
            (o->checkpoint == FFNN_CK_ADAM && !adam) || ffnn_option_equal(s, c, o))
            continue;
        ck_option_text(s, o, a, sizeof a);
        ck_option_text(c, o, b, sizeof b);
        return ck_differs(path, o->name, a, b);
    }
    const size_t count = data ? ffnn_dataset_count(data) : 0;
    if (f->train_count != count) {
        snprintf(a, sizeof a, "%zu", f->train_count);
        snprintf(b, sizeof b, "%zu", count);
        return ck_differs(path, "the training set's sample count", a, b);
    }
    uint32_t crc = ffnn_trainer_data_crc32(t);
    if (crc != f->train_crc32) {
        snprintf(a, sizeof a, "0x%08x", (unsigned)f->train_crc32);
        snprintf(b, sizeof b, "0x%08x (same sample count, other samples, labels or order)",
                 (unsigned)crc);
        return ck_differs(path, "the training data's CRC-32", a, b);
    }
    return FFNN_OK;
}

ffnn_status ffnn_trainer_resume(ffnn_trainer *t, const char *path)
{
    if (!t || !path)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_trainer_resume: NULL argument");
    ffnn_run_state f;
    ffnn_status st = ffnn_checkpoint_read(path, NULL, &f);
    if (st != FFNN_OK)
        return st;
    st = ck_check_trainer(path, &f, t);
    if (st == FFNN_OK) {
        ffnn_trainer_state s;
        memset(&s, 0, sizeof s);
        s.epoch = f.epoch;
        s.step = f.step;
        s.optimizer_steps = f.optimizer_steps;
        memcpy(s.epoch_rng, f.epoch_rng, sizeof s.epoch_rng);
        s.step_losses = f.step_losses;
        s.plateau = f.plateau;
        s.plateau_epoch = f.plateau_epoch;
        if (!(s.plateau.lr > 0)) /* not recorded (no plateau schedule): the start */
            s.plateau = ffnn_plateau_start(ffnn_trainer_config(t));
        if (f.cfg.early_stopping > 0) { /* recorded (else none yet: zero) */
            s.es_epoch = f.es_epoch;
            s.es_best_epoch = f.es_best_epoch;
            s.es_best_loss = f.es_best_loss;
            s.es_best = f.es_best;
        }
        st = ffnn_trainer_set_state(t, f.params, f.opt_state, f.ema, &s);
        if (st != FFNN_OK)
            st = ffnn_fail_context_at(st, path, ": cannot resume");
    }
    ffnn_run_state_free(&f);
    return st;
}

/* ------------------------------------------------------------ saving */

/* Gather the trainer's state into floats [(states + 1) n] (parameters, then the
 * optimizer state when with_state) and *ts. */
static ffnn_status collect(ffnn_trainer *t, const char *path, float **floats,
                           ffnn_trainer_state *ts, int with_state)
{
    const ffnn_model *m = ffnn_trainer_model(t);
    const ffnn_train_config *c = ffnn_trainer_config(t);
    size_t n = m->parameter_count, states = ffnn_optimizer_state_count(c->optimizer);
    size_t state_count = states * n;
    ffnn_status st = ffnn_trainer_get_state(t, ts);
    if (st != FFNN_OK) {
        if (st == FFNN_ERR_NUMERIC)
            return ffnn_fail_context_at(st, path, ": not written (the previous checkpoint, if any, "
                                   "is left as it was)");
        return st;
    }
    const size_t ema = c->ema_decay > 0.0f; /* the EMA weights, after the state */
    *floats = malloc((states + 1 + ema) * n * sizeof **floats); /* [(states + 1 + ema) n] */
    if (!*floats)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory for a checkpoint of %zu "
                         "floats", path, (states + 1 + ema) * n);
    if ((st = ffnn_trainer_download_parameters(t, *floats)) == FFNN_OK && with_state &&
        state_count != 0)
        st = ffnn_trainer_optimizer_state(t, *floats + n, &state_count);
    if (st == FFNN_OK && with_state && ema)
        st = ffnn_trainer_download_ema(t, *floats + (states + 1) * n);
    return st;
}

/* Write what collect gathered. */
static ffnn_status write_state(ffnn_trainer *t, const char *path, const float *floats,
                               const ffnn_trainer_state *ts)
{
    const ffnn_model *m = ffnn_trainer_model(t);
    const ffnn_train_config *c = ffnn_trainer_config(t);
    size_t n = m->parameter_count, states = ffnn_optimizer_state_count(c->optimizer);
    ffnn_run_state s;
    memset(&s, 0, sizeof s);
    s.model = m;
    s.params = floats;
    s.cfg = *c;
    s.train_count = ffnn_dataset_count(ffnn_trainer_train_data(t));
    s.train_crc32 = ffnn_trainer_data_crc32(t);
    s.steps_per_epoch = ffnn_trainer_steps_per_epoch(t);
    s.epoch = ts->epoch;
    s.step = ts->step;
    s.optimizer_steps = ts->optimizer_steps;
    memcpy(s.epoch_rng, ts->epoch_rng, sizeof s.epoch_rng);
    s.step_losses = ts->step_losses;
    s.opt_state = states ? floats + n : NULL;
    s.ema = c->ema_decay > 0.0f ? floats + (states + 1) * n : NULL;
    s.plateau = ts->plateau;
    s.plateau_epoch = ts->plateau_epoch;
    if (c->early_stopping > 0) {
        s.es_epoch = ts->es_epoch;
        s.es_best_epoch = ts->es_best_epoch;
        s.es_best_loss = ts->es_best_loss;
        s.es_best = ts->es_best_epoch > 0 ? ts->es_best : NULL;
    }
    return ffnn_checkpoint_write(path, &s);
}

/* One rank of a data-parallel run: every rank reads back its losses (a
 * collective), downloads its parameters and takes part in two reductions:
 * whether a rank failed (the highest such rank is named) and the CRC-32 of its
 * parameters (min and max must agree: the ranks applied the same updates).
 * Rank 0 then writes and broadcasts its status and message, so every rank
 * returns the same outcome. */
static ffnn_status save_parallel(ffnn_trainer *t, const char *path, ffnn_comm *c)
{
    const ffnn_model *m = ffnn_trainer_model(t);
    float *floats = NULL;
    ffnn_trainer_state ts;
    ffnn_status st = collect(t, path, &floats, &ts, c->rank == 0);
    double v[3] = {-1.0, 0.0, 0.0}; /* failed rank, crc, -crc: reduced with max */
    if (st != FFNN_OK)
        v[0] = (double)c->rank;
    else {
        uLong crc = crc32(0L, Z_NULL, 0);
        const unsigned char *p = (const unsigned char *)floats;
        for (size_t left = m->parameter_count * sizeof *floats; left > 0;) {
            uInt k = left > (1u << 30) ? (1u << 30) : (uInt)left;
            crc = crc32(crc, p, k);
            p += k;
            left -= k;
        }
        v[1] = (double)crc;
        v[2] = -(double)crc;
    }
    char why[512];
    snprintf(why, sizeof why, "%s", st != FFNN_OK ? ffnn_last_error() : "");
    ffnn_status rst = c->ops->reduce_host(c, v, 3, FFNN_REDUCE_MAX);
    if (rst != FFNN_OK || st != FFNN_OK) {
        free(floats);
        return rst != FFNN_OK ? rst : ffnn_fail(st, "%s", why);
    }
    if (v[0] >= 0.0) {
        free(floats);
        return ffnn_fail(FFNN_ERR_IO, "%s: not written: rank %d could not gather its state "
                         "(its message names the cause)", path, (int)v[0]);
    }
    if (v[1] != -v[2]) {
        free(floats);
        return ffnn_fail(FFNN_ERR_NUMERIC, "%s: not written: the ranks' parameters differ "
                         "(CRC-32 from 0x%08x to 0x%08x at epoch %d, step %zu): their updates "
                         "diverged", path, (unsigned)-v[2], (unsigned)v[1], ts.epoch, ts.step);
    }
    struct { int32_t status; char message[508]; } outcome;
    memset(&outcome, 0, sizeof outcome);
    if (c->rank == 0) {
        outcome.status = (int32_t)write_state(t, path, floats, &ts);
        if (outcome.status != FFNN_OK)
            snprintf(outcome.message, sizeof outcome.message, "%s", ffnn_last_error());
    }
    free(floats);
    if ((rst = c->ops->broadcast_host(c, &outcome, sizeof outcome, 0)) != FFNN_OK)
        return rst;
    if (outcome.status != FFNN_OK)
        return c->rank == 0 ? (ffnn_status)outcome.status
                            : ffnn_fail((ffnn_status)outcome.status, "rank 0: %s",
                                        outcome.message);
    return FFNN_OK;
}

ffnn_status ffnn_trainer_save_checkpoint(ffnn_trainer *t, const char *path)
{
    if (!t || !path)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_trainer_save_checkpoint: NULL argument");
    ffnn_comm *c = ffnn_trainer_comm(t);
    if (c)
        return save_parallel(t, path, c);
    float *floats = NULL;
    ffnn_trainer_state ts;
    ffnn_status st = collect(t, path, &floats, &ts, 1);
    if (st == FFNN_OK)
        st = write_state(t, path, floats, &ts);
    free(floats);
    return st;
}
