/* checkpoints.c - ffnn train --resume, --checkpoint, --checkpoint-every,
 * --max-steps (see checkpoints.h). */
#define _POSIX_C_SOURCE 200809L
#include "checkpoints.h"
#include "model_files.h"
#include "options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One flag against the checkpoint's value (as text); 0 when they agree. */
static int disagree(const char *path, const char *flag, const char *value, const char *key,
                    const char *saved)
{
    fprintf(stderr, "ffnn train: --resume %s: %s %s disagrees with the checkpoint's %s %s "
            "(leave %s out to continue with the checkpoint's value)\n", path, flag, value,
            key, saved, flag);
    return 1;
}

/* The shortest decimal that reads back as f: 0.1f -> "0.1". */
static void float_text(float f, char *buf, size_t size)
{
    for (int digits = 1; digits <= 9; digits++) {
        snprintf(buf, size, "%.*g", digits, (double)f);
        if (strtof(buf, NULL) == f)
            return;
    }
}

static int check_float(const char *path, int given, const char *flag, float *value,
                       const char *key, float saved)
{
    char a[32], b[32];
    if (!given) {
        *value = saved;
        return 0;
    }
    if (*value == saved)
        return 0;
    float_text(*value, a, sizeof a);
    float_text(saved, b, sizeof b);
    return disagree(path, flag, a, key, b);
}

static int check_uint(const char *path, int given, const char *flag, unsigned long long value,
                      const char *key, unsigned long long saved, unsigned long long *out)
{
    char a[32], b[32];
    if (!given) {
        *out = saved;
        return 0;
    }
    if (value == saved)
        return 0;
    snprintf(a, sizeof a, "%llu", value);
    snprintf(b, sizeof b, "%llu", saved);
    return disagree(path, flag, a, key, b);
}

/* --arch, when given, names the checkpoint's architecture. */
static int check_arch(const char *path, const char *arch, const ffnn_model *m)
{
    char *a, *b;
    int differs = ffnn_cli_compare_arch(arch, m, &a, &b), bad = differs != 0;
    if (differs > 0)
        bad = disagree(path, "--arch", a ? a : arch, "arch", b ? b : "?");
    free(a);
    free(b);
    return bad;
}

int ffnn_cli_resume_settings(const char *path, const char *arch, const ffnn_cli_given *given,
                             int split, ffnn_train_config *cfg, long long *train_limit)
{
    ffnn_checkpoint_info info;
    const ffnn_train_config *s = &info.cfg;
    ffnn_model *model = NULL;
    unsigned long long u = 0;
    int bad = 0;

    if (ffnn_checkpoint_load(path, &model, &info) != FFNN_OK) {
        fprintf(stderr, "ffnn train: --resume: %s\n", ffnn_last_error());
        return 1;
    }
    bad = arch && check_arch(path, arch, model);
    ffnn_model_free(model);
    if (bad)
        return 1;
    if (!given->loss)
        cfg->loss = s->loss;
    else if (cfg->loss != s->loss)
        bad = disagree(path, "--loss", ffnn_loss_name(cfg->loss), "loss", ffnn_loss_name(s->loss));
    if (!given->optimizer)
        cfg->optimizer = s->optimizer;
    else if (!bad && cfg->optimizer != s->optimizer)
        bad = disagree(path, "--optimizer", ffnn_optimizer_name(cfg->optimizer), "optimizer",
                       ffnn_optimizer_name(s->optimizer));
    bad = bad || check_float(path, given->lr, "--lr", &cfg->learning_rate, "learning_rate",
                             s->learning_rate);
    if (s->optimizer == FFNN_OPT_MOMENTUM) {
        bad = bad || check_float(path, given->momentum, "--momentum", &cfg->momentum,
                                 "momentum", s->momentum);
        if (!bad && !given->nesterov)
            cfg->nesterov = s->nesterov;
        else if (!bad && !cfg->nesterov != !s->nesterov)
            bad = disagree(path, "--nesterov", "", "nesterov", s->nesterov ? "true" : "false");
    }
    if (s->optimizer == FFNN_OPT_ADAM || s->optimizer == FFNN_OPT_ADAMW)
        bad = bad ||
              check_float(path, given->beta1, "--beta1", &cfg->beta1, "beta1", s->beta1) ||
              check_float(path, given->beta2, "--beta2", &cfg->beta2, "beta2", s->beta2) ||
              check_float(path, given->eps, "--eps", &cfg->epsilon, "epsilon", s->epsilon);
    if (!bad && !(bad = check_uint(path, given->batch, "--batch", cfg->batch_size, "batch_size",
                                   s->batch_size, &u)) && !given->batch)
        cfg->batch_size = (size_t)u;
    if (!bad && !(bad = check_uint(path, given->seed, "--seed", cfg->seed, "seed", s->seed, &u)) &&
        !given->seed)
        cfg->seed = u;
    if (!bad && !given->shuffle)
        cfg->shuffle = s->shuffle;
    else if (!bad && !cfg->shuffle != !s->shuffle)
        bad = disagree(path, "--no-shuffle", "", "shuffle", "true");
    if (!bad && !given->drop_last)
        cfg->drop_last = s->drop_last;
    else if (!bad && !cfg->drop_last != !s->drop_last)
        bad = disagree(path, "--drop-last", "", "drop_last", "false");
    /* train_count is the training set's size: --train-limit's only without splits
     * (the limit applies to the data before --test-split and --val-split take
     * their parts; with them the library's check of the count and CRC-32 holds) */
    if (!bad && !split &&
        !(bad = check_uint(path, given->train_limit, "--train-limit",
                           (unsigned long long)*train_limit, "train_count", info.train_count,
                           &u)) &&
        !given->train_limit)
        *train_limit = (long long)u;
    if (!given->epochs)
        cfg->epochs = s->epochs;
    /* the training-feature settings: the checkpoint's unless given (then the library's resume
     * refuses a difference, naming the setting and both values) */
    if (!given->decay) {
        cfg->weight_decay = s->weight_decay;
        cfg->decay_bias = s->decay_bias;
    }
    if (!given->schedule) {
        cfg->lr_schedule = s->lr_schedule;
        cfg->lr_step_size = s->lr_step_size;
        cfg->lr_gamma = s->lr_gamma;
        memcpy(cfg->lr_milestones, s->lr_milestones, sizeof cfg->lr_milestones);
        cfg->lr_milestone_count = s->lr_milestone_count;
        cfg->lr_t_max = s->lr_t_max;
        cfg->lr_min = s->lr_min;
        cfg->lr_end_factor = s->lr_end_factor;
        cfg->lr_total_iters = s->lr_total_iters;
        cfg->lr_patience = s->lr_patience;
        cfg->lr_factor = s->lr_factor;
        cfg->lr_threshold = s->lr_threshold;
        cfg->warmup_steps = s->warmup_steps;
    }
    if (!given->clip) {
        cfg->clip_grad_norm = s->clip_grad_norm;
        cfg->clip_grad_value = s->clip_grad_value;
    }
    if (!given->ema)
        cfg->ema_decay = s->ema_decay;
    /* the patience: the checkpoint's unless given; a different one is taken (only
     * when to stop changes: the best epoch so far carries over, or, from a
     * checkpoint without early stopping, the tracking starts with this run) */
    if (!given->early_stopping)
        cfg->early_stopping = s->early_stopping;
    return bad;
}

int ffnn_cli_resume_model(const char *path, ffnn_model **model)
{
    if (ffnn_checkpoint_load(path, model, NULL) == FFNN_OK)
        return 0;
    fprintf(stderr, "ffnn train: --resume: %s\n", ffnn_last_error());
    return 1;
}

int ffnn_cli_resume_trainer(const char *path, ffnn_trainer *trainer, ffnn_cli_checkpointer *c,
                            FILE *info)
{
    int epoch;
    size_t step, steps = ffnn_trainer_steps_per_epoch(trainer);
    if (ffnn_trainer_resume(trainer, path) != FFNN_OK) {
        fprintf(stderr, "ffnn train: --resume: %s\n", ffnn_last_error());
        return -1;
    }
    ffnn_trainer_position(trainer, &epoch, &step);
    c->last_saved = epoch == 0 ? 0 : (uint64_t)(epoch - 1) * steps + step;
    if (c->max_steps > 0 && c->last_saved >= (uint64_t)c->max_steps)
        c->stopped = 1;
    if (info) /* NULL: a data-parallel rank other than 0 */
        fprintf(info, "resumed from %s: epoch %d, step %zu of %zu (step %llu of the run)\n", path,
            epoch, step, steps, (unsigned long long)c->last_saved);
    return epoch == 0 || step == steps ? epoch + 1 : epoch;
}

int ffnn_cli_checkpoint_save(ffnn_cli_checkpointer *c, ffnn_trainer *t)
{
    int epoch;
    size_t step;
    ffnn_trainer_position(t, &epoch, &step);
    uint64_t global = epoch == 0 ? 0
                      : (uint64_t)(epoch - 1) * ffnn_trainer_steps_per_epoch(t) + step;
    if (!c->path || global == c->last_saved)
        return 0;
    if (ffnn_trainer_save_checkpoint(t, c->path) != FFNN_OK) {
        snprintf(c->message, sizeof c->message, "%s", ffnn_last_error());
        c->failed = 1;
        return 1;
    }
    c->last_saved = global;
    return 0;
}

int ffnn_cli_checkpoint_step(ffnn_cli_checkpointer *c, ffnn_trainer *t, int epoch, size_t step,
                             size_t steps_per_epoch)
{
    uint64_t global = (uint64_t)(epoch - 1) * steps_per_epoch + step;
    int stop = c->max_steps > 0 && global >= (uint64_t)c->max_steps;
    /* not after an epoch's last step: the epoch loop saves that position once the
     * epoch has ended (its validation, the plateau schedule's and early stopping's
     * update are then in the checkpoint) */
    if (c->path && step < steps_per_epoch &&
        ((c->every > 0 && global % (uint64_t)c->every == 0) || stop) &&
        ffnn_cli_checkpoint_save(c, t) != 0)
        return 1;
    c->stopped = stop;
    return stop;
}
