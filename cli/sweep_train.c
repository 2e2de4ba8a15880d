/* sweep_train.c - ffnn sweep's training: every model of every fold in one
 * ffnn_sweep, an epoch at a time, with successive halving's rungs (--halving). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ffnn.h"
#include "interrupt.h"
#include "options.h"
#include "sweep.h"

#define CMD SWEEP_CMD

/* Every model of every fold in one sweep (model k * folds + f: configuration k, fold
 * f): one line per --print-every epochs on stderr (how many still train, the best
 * configuration of the epoch by fold 0's validation or training loss). */
static int halve(const sweep_cli *s, config *c, long long n, const folds *d, ffnn_sweep *sw,
                 int e, size_t *training);

int ffnn_sweep_train_all(const sweep_cli *s, config *c, long long n, folds *d, int *stopped)
{
    size_t total = (size_t)n * (size_t)d->count;
    ffnn_model **models = calloc(total, sizeof *models);
    ffnn_train_config *cfg = calloc(total, sizeof *cfg);
    const ffnn_dataset **train = calloc(total, sizeof *train), **val = calloc(total, sizeof *val);
    double *seconds = calloc(total, sizeof *seconds);   /* [total] each model's training time */
    int *epochs = calloc(total, sizeof *epochs);        /* [total] its epochs counted so far */
    int rc = !seconds || !epochs || !models || !cfg || !train || !val ? (fprintf(stderr, "%s: out of memory\n", CMD), 1)
                                               : 0;
    for (size_t j = 0; rc == 0 && j < total; j++) {
        long long k = (long long)(j / (size_t)d->count);
        int f = (int)(j % (size_t)d->count);
        models[j] = c[k].model[f];
        cfg[j] = c[k].o.cfg;
        train[j] = d->std[f][0];
        val[j] = d->std[f][1];
    }
    ffnn_sweep *sw = NULL;
    if (rc == 0 && ffnn_sweep_create(models, cfg, total, train, val, c[0].o.cfg.threads, &sw))
        rc = ffnn_cli_fail(CMD, "creating the models' trainers");
    if (rc == 0 && !c[0].o.quiet)
        fprintf(stderr, "%s: %lld configurations x %d fold%s = %zu models, %d at a time\n", CMD,
                n, d->count, d->count > 1 ? "s" : "", total, ffnn_sweep_lanes(sw));
    size_t training = total, model_epochs = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long long rung = s->halving ? s->min_epochs : 0; /* the next rung's epoch (0: none) */
    ffnn_cli_interrupt_install(); /* the first signal: stop after this epoch and rank */
    for (int e = 1; rc == 0 && training > 0; e++) {
        model_epochs += training;
        if (ffnn_sweep_run_epoch(sw, &training) != FFNN_OK) {
            rc = ffnn_cli_fail(CMD, "training");
            break;
        }
        double best = INFINITY;
        long long at = 0;
        for (long long k = 0; k < n; k++) {
            c[k].seconds = 0;
            for (int f = d->count - 1; f >= 0; f--) { /* fold 0's state is kept */
                size_t j = (size_t)(k * d->count + f);
                ffnn_sweep_model_state(sw, j, &c[k].state);
                if (c[k].state.epochs_run > epochs[j]) /* it ran this epoch */
                    seconds[j] += c[k].state.last.seconds, epochs[j] = c[k].state.epochs_run;
                c[k].seconds += seconds[j];
            }
            double v = c[k].state.last.val_loss == c[k].state.last.val_loss
                           ? c[k].state.last.val_loss : c[k].state.last.train_loss;
            if (c[k].state.epochs_run == e && v < best)
                best = v, at = k;
        }
        if (rung && e == rung && training > 0) {
            if ((rc = halve(s, c, n, d, sw, e, &training)) != 0)
                break;
            rung = rung > INT_MAX / s->halving ? 0 : rung * s->halving;
        }
        int every = c[0].o.print_every > 0 ? c[0].o.print_every
                    : c[0].o.cfg.epochs >= 10 ? c[0].o.cfg.epochs / 10 : 1;
        if (!c[0].o.quiet && (e % every == 0 || training == 0))
            fprintf(stderr, "epoch %d: %zu of %zu models still training; best this epoch %.4f "
                    "(configuration %lld)\n", e, training, total, best, at + 1);
        int sig = ffnn_cli_interrupted();
        if (sig && training > 0) {
            fprintf(stderr, "%s: %s after epoch %d: ranking the models as they are (%zu of "
                    "%zu still training)\n", CMD, ffnn_cli_signal_name(sig), e, training, total);
            *stopped = 1;
            break;
        }
    }
    ffnn_cli_interrupt_restore();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (rc == 0 && !c[0].o.quiet)
        fprintf(stderr, "%s: %zu model-epochs in %.3f s of training (%.1f model-epochs/s)\n",
                CMD, model_epochs, wall, wall > 0 ? (double)model_epochs / wall : 0.0);
    ffnn_sweep_free(sw); /* each model keeps its weights (the best epoch's if stopped early) */
    free(models);
    free(cfg);
    free(train);
    free(val);
    free(seconds);
    free(epochs);
    return rc;
}

/* --halving at the rung of epoch e: the configurations still training ranked by
 * the mean over their folds' models of the --rank-by metric of their last epoch
 * (val_loss: the best epoch's with early stopping), the best ceil(n/ETA) kept, the
 * others' models stopped (ffnn_sweep_stop_model); *training gets the models left. */
static int halve(const sweep_cli *s, config *c, long long n, const folds *d, ffnn_sweep *sw,
                 int e, size_t *training)
{
    ranked *r = malloc((size_t)n * sizeof *r);
    if (!r)
        return fprintf(stderr, "%s: out of memory\n", CMD), 1;
    const char *by = s->rank_by ? s->rank_by : d->std[0][1] ? "val_loss" : "train_loss";
    long long alive = 0;
    for (long long k = 0; k < n; k++) {
        double sum = 0;
        int on = 0;
        for (int f = 0; f < d->count; f++) {
            ffnn_sweep_state st;
            ffnn_sweep_model_state(sw, (size_t)(k * d->count + f), &st);
            on |= st.training;
            sum += !strcmp(by, "val_loss")       ? st.best_loss
                   : !strcmp(by, "val_accuracy") ? -st.last.val_accuracy
                                                 : st.last.train_loss;
        }
        if (!on)
            continue; /* done before the rung (its epochs, or early stopping) */
        double v = sum / d->count;
        r[alive].key = v == v ? v : INFINITY, r[alive].k = k, r[alive].stage = 0;
        alive++;
    }
    qsort(r, (size_t)alive, sizeof *r, ffnn_sweep_by_rank);
    long long keep = (alive + s->halving - 1) / s->halving;
    int rc = 0;
    for (long long q = keep; q < alive && rc == 0; q++) {
        long long k = r[q].k;
        c[k].dropped_at = e;
        for (int f = 0; f < d->count && rc == 0; f++)
            if (ffnn_sweep_stop_model(sw, (size_t)(k * d->count + f)) != FFNN_OK)
                rc = ffnn_cli_fail(CMD, "--halving");
    }
    *training = 0;
    for (size_t j = 0; j < ffnn_sweep_count(sw); j++) {
        ffnn_sweep_state st;
        ffnn_sweep_model_state(sw, j, &st);
        *training += (size_t)st.training;
    }
    for (long long k = 0; k < n; k++) /* fold 0's state, as train_all keeps it */
        ffnn_sweep_model_state(sw, (size_t)(k * d->count), &c[k].state);
    if (rc == 0 && !c[0].o.quiet)
        fprintf(stderr, "%s: rung at epoch %d: %lld configurations ranked by %s, the best "
                "%lld go on\n", CMD, e, alive, by, keep);
    free(r);
    return rc;
}

