/*
 * tune.c - the tune strategy (ffnn.h, FFNN_STRATEGY_TUNE): auto by measurement.
 * Each candidate strategy that takes the model, batch and precision trains a
 * copy of the model in a temporary trainer of the same config on the trial data:
 * the first TUNE_TRIAL_STEPS batches of the training set (all of it when it is
 * smaller). One trial epoch warms up (CUDA graph captures: the graph cache keys
 * a captured run by its first step within the epoch, so only from the second
 * epoch on do graph, cublas and cublaslt replay, as in a real run; cuBLAS's
 * heuristics; the first persistent launch); then whole trial epochs are timed
 * (ffnn_trainer_run_epoch: synchronised wall time, the permutation and loss
 * read-back included, as in training) until the timed part is at least
 * TUNE_MIN_SECONDS or one real epoch of steps. The real trainer is created with
 * the fastest per step, the measurement kept as its strategy note. The caller's
 * model is only read: the trials train a copy, reset to the caller's parameters
 * before each. Measured in this process, so it follows this GPU, driver and
 * cuBLAS, where auto's fixed rule was measured once on an H200.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/error.h"
#include "core/model.h"
#include "data/dataset.h"
#include "strategy/strategy.h"
#include "train/config.h"
#include "train/trainer.h"

#define TUNE_TRIAL_STEPS 128  /* steps of a trial epoch at most (the trial data's rows /
                                 batch); persistent then runs 128 steps per launch */
#define TUNE_MIN_SECONDS 0.02 /* timed wall time wanted, unless one real epoch is shorter */

/* One candidate: a trainer of `copy` (its parameters reset to m's) with cfg on
 * the trial data, one trial epoch of warm-up, then timed trial epochs until
 * TUNE_MIN_SECONDS or real_steps steps; *us the mean microseconds per step. */
static ffnn_status measure(const ffnn_model *m, ffnn_model *copy, const ffnn_dataset *trial,
                           const ffnn_train_config *cfg, size_t real_steps, double *us)
{
    memcpy(copy->params, m->params, m->parameter_count * sizeof *m->params);
    ffnn_trainer *t = NULL;
    ffnn_status st = ffnn_trainer_create_one(copy, trial, cfg, NULL, &t);
    if (st != FFNN_OK)
        return st;
    size_t steps = ffnn_trainer_steps_per_epoch(t), total = 0;
    double total_s = 0.0;
    ffnn_epoch_stats stats;
    st = ffnn_trainer_run_epoch(t, NULL, NULL, &stats); /* warm-up */
    while (st == FFNN_OK && (total == 0 || (total_s < TUNE_MIN_SECONDS && total < real_steps))) {
        st = ffnn_trainer_run_epoch(t, NULL, NULL, &stats);
        total += steps;
        total_s += stats.seconds;
    }
    ffnn_trainer_free(t); /* syncs the trained weights into the copy, not into m */
    if (st == FFNN_OK && (total == 0 || !(total_s > 0.0)))
        st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "no step was timed");
    if (st == FFNN_OK)
        *us = total_s / (double)total * 1e6;
    return st;
}

/* A model of m's architecture (parameters copied by measure). */
static ffnn_status copy_layout(const ffnn_model *m, ffnn_model **out)
{
    size_t size = ffnn_arch_format_size(m->layer_count);
    char *arch = malloc(size);
    if (!arch)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory for the architecture string");
    ffnn_model_arch_string(m, arch, size);
    ffnn_status st = ffnn_model_create(arch, out);
    free(arch);
    if (st == FFNN_OK && (*out)->parameter_count != m->parameter_count) {
        ffnn_model_free(*out);
        *out = NULL;
        st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "tune: the model's copy differs");
    }
    return st;
}

/* Append to the note (truncated quietly when full). */
static void note_add(char *note, size_t size, const char *text)
{
    size_t used = strlen(note);
    if (used + 1 < size)
        snprintf(note + used, size - used, "%s", text);
}

ffnn_status ffnn_trainer_create_tuned(ffnn_model *m, const ffnn_dataset *train,
                                      const ffnn_train_config *cfg, ffnn_trainer **out)
{
    ffnn_status st = ffnn_train_config_check(m, train, cfg);
    if (st == FFNN_OK) /* a model another trainer trains: its latest weights */
        st = ffnn_model_sync(m);
    if (st != FFNN_OK)
        return st;
    const ffnn_backend_ops *cuda =
        (cfg->device == FFNN_DEVICE_CUDA || cfg->device == FFNN_DEVICE_AUTO) &&
                ffnn_cuda_device_count() > 0 ? ffnn_cuda_backend() : NULL;
    const int on_gpu = cuda != NULL;
    if (!on_gpu) /* the cpu (or an error for --device cuda): nothing to choose */
        return ffnn_trainer_create_one(m, train, cfg, NULL, out);

    /* the trial data: the first TUNE_TRIAL_STEPS batches (a copy), or all of it */
    const size_t batch = cfg->batch_size < train->count ? cfg->batch_size : train->count;
    const size_t real_steps = cfg->drop_last ? train->count / batch
                                             : (train->count + batch - 1) / batch;
    ffnn_dataset *slice = NULL;
    if (batch * TUNE_TRIAL_STEPS < train->count &&
        (st = ffnn_dataset_slice(train, 0, batch * TUNE_TRIAL_STEPS, &slice)) != FFNN_OK)
        return st;
    const ffnn_dataset *trial = slice ? slice : train;
    ffnn_model *copy = NULL;
    if ((st = copy_layout(m, &copy)) != FFNN_OK) {
        ffnn_dataset_free(slice);
        return st;
    }
    char note[sizeof((ffnn_trainer *)0)->strategy_note] = "tune:";
    /* the candidates (strategy/strategy.h); none measured: cfg's strategy, which
     * ffnn_trainer_create_one resolves by the auto rule */
    size_t n_candidates = 0;
    const ffnn_strategy *candidates = ffnn_strategy_candidates(&n_candidates);
    ffnn_strategy best = cfg->strategy;
    double best_us = 0.0;
    int measured = 0, items = 0; /* candidates timed; named in the note */
    for (size_t i = 0; i < n_candidates; i++) {
        ffnn_train_config c = *cfg;
        c.strategy = candidates[i];
        c.device = FFNN_DEVICE_CUDA;
        c.early_stopping = 0; /* the trial times training alone */
        const ffnn_strategy_impl *impl = NULL;
        if (ffnn_strategy_choose(m, &c, cuda->caps, &impl) != FFNN_OK)
            continue; /* not for this net, optimizer or precision: not a candidate */
        double us = 0.0;
        char item[64];
        if (measure(m, copy, trial, &c, real_steps, &us) != FFNN_OK) { /* e.g. device limits */
            snprintf(item, sizeof item, "%s %s failed", items++ ? "," : "",
                     ffnn_strategy_name(candidates[i]));
            note_add(note, sizeof note, item);
            continue;
        }
        snprintf(item, sizeof item, "%s %s %.1f%s", items++ ? "," : "",
                 ffnn_strategy_name(candidates[i]), us, measured ? "" : " us/step");
        note_add(note, sizeof note, item);
        if (!measured || us < best_us) {
            best = candidates[i];
            best_us = us;
        }
        measured = 1;
    }
    ffnn_model_free(copy);
    ffnn_dataset_free(slice);
    if (!measured)
        note_add(note, sizeof note, " nothing measured");
    ffnn_train_config c = *cfg;
    c.strategy = best; /* none measured: auto's rule */
    if ((st = ffnn_trainer_create_one(m, train, &c, NULL, out)) != FFNN_OK && measured) {
        c.strategy = cfg->strategy; /* the pick ran in a trial but not now: the rule */
        best = c.strategy;
        st = ffnn_trainer_create_one(m, train, &c, NULL, out);
    }
    if (st != FFNN_OK)
        return st;
    char pick[80];
    snprintf(pick, sizeof pick, " -> %s%s", best == cfg->strategy ? "auto's pick " : "",
             ffnn_strategy_name(ffnn_trainer_strategy(*out)));
    note_add(note, sizeof note, pick);
    (*out)->cfg.strategy = cfg->strategy; /* what was asked (tune); the pick runs */
    snprintf((*out)->strategy_note, sizeof (*out)->strategy_note, "%s", note);
    return FFNN_OK;
}
