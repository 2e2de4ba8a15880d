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

/* The configurations this rank trains (all of them in one process) and the local
 * sweep's models: model j = q * folds + f is configuration mine[q], fold f. */
typedef struct share {
    long long *mine;               /* [owned]                                       */
    long long owned;
    int folds;
    size_t local;                  /* owned * folds: the models of this rank         */
    size_t total;                  /* n * folds: of every rank                      */
    int has_val;                   /* the folds have validation sets                */
} share;

/* v[count] reduced over the ranks; a failure stops every rank (they would wait). */
static void reduce(const sweep_cli *s, double *v, size_t count, ffnn_comm_op op)
{
    if (ffnn_comm_reduce(s->comm, v, count, op) != FFNN_OK) {
        ffnn_cli_fail(CMD, "exchanging the ranks' results");
        ffnn_comm_abort(s->comm, 1);
    }
}

/* What the ranks tell each other after an epoch (collective; in one process the
 * local values): the models still training, the epoch's best value and its
 * configuration, a signal, the first rank that failed (s->ranks: none). */
typedef struct news {
    size_t training;
    double best;
    long long at;
    int sig, failed;
} news;

static void exchange(const sweep_cli *s, size_t training, double best, long long at, int sig,
                     int rc, news *out)
{
    double sum = (double)training;
    double low[3] = {best, -(double)sig, rc ? (double)s->rank : (double)s->ranks};
    reduce(s, &sum, 1, FFNN_COMM_SUM);
    reduce(s, low, 3, FFNN_COMM_MIN);
    double who = low[0] == best ? (double)at : (double)LLONG_MAX; /* ties: the first */
    reduce(s, &who, 1, FFNN_COMM_MIN);
    *out = (news){(size_t)sum, low[0], (long long)who, (int)-low[1], (int)low[2]};
}

static int halve(const sweep_cli *s, config *c, long long n, const share *sh, ffnn_sweep *sw,
                 int e, size_t *training);

/* The local sweep of the configurations of sh; *sw NULL when this rank has none. */
static int create_sweep(const sweep_cli *s, config *c, const share *sh, folds *d,
                        ffnn_sweep **sw)
{
    size_t total = sh->local;
    ffnn_model **models = calloc(total + 1, sizeof *models);
    ffnn_train_config *cfg = calloc(total + 1, sizeof *cfg);
    const ffnn_dataset **train = calloc(total + 1, sizeof *train);
    const ffnn_dataset **val = calloc(total + 1, sizeof *val);
    int rc = !models || !cfg || !train || !val ? (fprintf(stderr, "%s: out of memory\n", CMD), 1)
                                               : 0;
    for (size_t j = 0; rc == 0 && j < total; j++) {
        long long k = sh->mine[j / (size_t)sh->folds];
        int f = (int)(j % (size_t)sh->folds);
        models[j] = c[k].model[f];
        cfg[j] = c[k].o.cfg;
        train[j] = d->std[f][0];
        val[j] = d->std[f][1];
    }
    *sw = NULL;
    if (rc == 0 && total > 0 &&
        ffnn_sweep_create_gpus(models, cfg, total, train, val, c[0].o.cfg.threads, s->gpus, sw))
        rc = ffnn_cli_fail(CMD, "creating the models' trainers");
    free(models);
    free(cfg);
    free(train);
    free(val);
    return rc;
}

/* After epoch e: the states of this rank's configurations (fold 0's kept; seconds
 * summed over the folds), and the best of those that ran it (fold 0's validation
 * or training loss) into *best, *at. */
static void read_states(config *c, const share *sh, ffnn_sweep *sw, int e, double *seconds,
                        int *epochs, double *best, long long *at)
{
    *best = INFINITY, *at = 0;
    for (long long q = 0; q < sh->owned; q++) {
        long long k = sh->mine[q];
        c[k].seconds = 0;
        for (int f = sh->folds - 1; f >= 0; f--) { /* fold 0's state is kept */
            size_t j = (size_t)(q * sh->folds + f);
            ffnn_sweep_model_state(sw, j, &c[k].state);
            if (c[k].state.epochs_run > epochs[j]) /* it ran this epoch */
                seconds[j] += c[k].state.last.seconds, epochs[j] = c[k].state.epochs_run;
            c[k].seconds += seconds[j];
        }
        double v = c[k].state.last.val_loss == c[k].state.last.val_loss
                       ? c[k].state.last.val_loss : c[k].state.last.train_loss;
        if (c[k].state.epochs_run == e && v < *best)
            *best = v, *at = k;
    }
}

/* Every model of every fold of this rank's configurations in one sweep, an epoch
 * at a time with the other ranks: one line per --print-every epochs on stderr from
 * rank 0 (how many still train, the best configuration of the epoch by fold 0's
 * validation or training loss, over every rank). */
static int train_epochs(const sweep_cli *s, config *c, long long n, const share *sh,
                        ffnn_sweep *sw, double *seconds, int *epochs, int *stopped)
{
    size_t training = sh->total, local = sh->local, model_epochs = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long long rung = s->halving ? s->min_epochs : 0; /* the next rung's epoch (0: none) */
    int rc = 0, quiet = c[0].o.quiet || s->rank != 0;
    ffnn_cli_interrupt_install(); /* the first signal: stop after this epoch and rank */
    for (int e = 1; rc == 0 && training > 0; e++) {
        model_epochs += training;
        if (sw && local > 0 && ffnn_sweep_run_epoch(sw, &local) != FFNN_OK)
            rc = ffnn_cli_fail(CMD, "training");
        double best = INFINITY;
        long long at = 0;
        if (rc == 0)
            read_states(c, sh, sw, e, seconds, epochs, &best, &at);
        news w;
        exchange(s, local, best, at, ffnn_cli_interrupted(), rc, &w);
        if (w.failed < s->ranks) {
            if (rc == 0 && s->rank == 0)
                fprintf(stderr, "%s: rank %d of %d failed in epoch %d (its message is above)\n",
                        CMD, w.failed, s->ranks, e);
            rc = rc ? rc : 1;
            break;
        }
        training = w.training;
        if (rung && e == rung && training > 0) {
            rc = ffnn_sweep_ranks_status(s, halve(s, c, n, sh, sw, e, &training), "at a rung");
            if (rc != 0)
                break;
            local = 0;
            for (size_t j = 0; j < sh->local; j++) {
                ffnn_sweep_state st;
                ffnn_sweep_model_state(sw, j, &st);
                local += (size_t)st.training;
            }
            rung = rung > INT_MAX / s->halving ? 0 : rung * s->halving;
        }
        int every = c[0].o.print_every > 0 ? c[0].o.print_every
                    : c[0].o.cfg.epochs >= 10 ? c[0].o.cfg.epochs / 10 : 1;
        if (!quiet && (e % every == 0 || training == 0))
            fprintf(stderr, "epoch %d: %zu of %zu models still training; best this epoch %.4f "
                    "(configuration %lld)\n", e, training, sh->total, w.best, w.at + 1);
        if (w.sig && training > 0) {
            if (s->rank == 0)
                fprintf(stderr, "%s: %s after epoch %d: ranking the models as they are (%zu "
                        "of %zu still training)\n", CMD, ffnn_cli_signal_name(w.sig), e,
                        training, sh->total);
            *stopped = 1;
            break;
        }
    }
    ffnn_cli_interrupt_restore();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (rc == 0 && !quiet)
        fprintf(stderr, "%s: %zu model-epochs in %.3f s of training (%.1f model-epochs/s)\n",
                CMD, model_epochs, wall, wall > 0 ? (double)model_epochs / wall : 0.0);
    return rc;
}

int ffnn_sweep_train_all(const sweep_cli *s, config *c, long long n, folds *d, int *stopped)
{
    share sh = {NULL, 0, d->count, 0, (size_t)n * (size_t)d->count, d->std[0][1] != NULL};
    sh.mine = calloc((size_t)n + 1, sizeof *sh.mine);
    for (long long k = 0; sh.mine && k < n; k++)
        if (ffnn_sweep_owns(s, k))
            sh.mine[sh.owned++] = k;
    sh.local = (size_t)sh.owned * (size_t)d->count;
    double *seconds = calloc(sh.local + 1, sizeof *seconds); /* [local] each model's time */
    int *epochs = calloc(sh.local + 1, sizeof *epochs);     /* [local] its epochs so far */
    int rc = !sh.mine || !seconds || !epochs ? (fprintf(stderr, "%s: out of memory\n", CMD), 1)
                                             : 0;
    ffnn_sweep *sw = NULL;
    if (rc == 0)
        rc = create_sweep(s, c, &sh, d, &sw);
    rc = ffnn_sweep_ranks_status(s, rc, "to make its models' trainers");
    if (rc == 0 && !c[0].o.quiet && s->rank == 0) {
        if (s->ranks > 1)
            fprintf(stderr, "%s: %lld configurations x %d fold%s = %zu models over %d ranks "
                    "(configuration k on rank (k - 1) %% %d), %d at a time on rank 0\n", CMD, n,
                    d->count, d->count > 1 ? "s" : "", sh.total, s->ranks, s->ranks,
                    ffnn_sweep_lanes(sw));
        else
            fprintf(stderr, "%s: %lld configurations x %d fold%s = %zu models, %d at a time\n",
                    CMD, n, d->count, d->count > 1 ? "s" : "", sh.total, ffnn_sweep_lanes(sw));
    }
    if (rc == 0)
        rc = train_epochs(s, c, n, &sh, sw, seconds, epochs, stopped);
    ffnn_sweep_free(sw); /* each model keeps its weights (the best epoch's if stopped early) */
    free(sh.mine);
    free(seconds);
    free(epochs);
    return rc;
}

/* --halving at the rung of epoch e: the configurations still training (on every
 * rank) ranked by the mean over their folds' models of the --rank-by metric of
 * their last epoch (val_loss: the best epoch's with early stopping), the best
 * ceil(n/ETA) kept, the others' models stopped (ffnn_sweep_stop_model) by the rank
 * that trains them; *training gets the models left on every rank. */
static int halve(const sweep_cli *s, config *c, long long n, const share *sh, ffnn_sweep *sw,
                 int e, size_t *training)
{
    ranked *r = malloc((size_t)n * sizeof *r);
    double *v = calloc(2 * (size_t)n, sizeof *v); /* [n] the keys, [n] 1: still training */
    if (!r || !v) {
        free(r), free(v);
        return fprintf(stderr, "%s: out of memory\n", CMD), 1;
    }
    const char *by = s->rank_by ? s->rank_by : sh->has_val ? "val_loss" : "train_loss";
    for (long long q = 0; q < sh->owned; q++) {
        long long k = sh->mine[q];
        double sum = 0;
        int on = 0;
        for (int f = 0; f < sh->folds; f++) {
            ffnn_sweep_state st;
            ffnn_sweep_model_state(sw, (size_t)(q * sh->folds + f), &st);
            on |= st.training;
            sum += !strcmp(by, "val_loss")       ? st.best_loss
                   : !strcmp(by, "val_accuracy") ? -st.last.val_accuracy
                                                 : st.last.train_loss;
        }
        v[k] = sum / sh->folds, v[n + k] = on;
    }
    /* each value from its one rank, zeros from the others: the sums are exact */
    reduce(s, v, 2 * (size_t)n, FFNN_COMM_SUM);
    int rc = 0;
    long long alive = 0;
    for (long long k = 0; k < n; k++) {
        if (v[n + k] == 0)
            continue; /* done before the rung (its epochs, or early stopping) */
        r[alive].key = v[k] == v[k] ? v[k] : INFINITY, r[alive].k = k, r[alive].stage = 0;
        alive++;
    }
    qsort(r, (size_t)alive, sizeof *r, ffnn_sweep_by_rank);
    long long keep = (alive + s->halving - 1) / s->halving;
    for (long long q = keep; q < alive && rc == 0; q++) {
        long long k = r[q].k;
        c[k].dropped_at = e;
        long long i = k / s->ranks; /* its place among this rank's (round robin) */
        for (int f = 0; f < sh->folds && rc == 0 && ffnn_sweep_owns(s, k); f++)
            if (ffnn_sweep_stop_model(sw, (size_t)(i * sh->folds + f)) != FFNN_OK)
                rc = ffnn_cli_fail(CMD, "--halving");
    }
    *training = 0;
    for (size_t j = 0; j < sh->local; j++) {
        ffnn_sweep_state st;
        ffnn_sweep_model_state(sw, j, &st);
        *training += (size_t)st.training;
    }
    double all = (double)*training;
    reduce(s, &all, 1, FFNN_COMM_SUM);
    *training = (size_t)all;
    for (long long q = 0; q < sh->owned; q++) /* fold 0's state, as train_epochs keeps it */
        ffnn_sweep_model_state(sw, (size_t)(q * sh->folds), &c[sh->mine[q]].state);
    if (rc == 0 && s->rank == 0 && !c[0].o.quiet)
        fprintf(stderr, "%s: rung at epoch %d: %lld configurations ranked by %s, the best "
                "%lld go on\n", CMD, e, alive, by, keep);
    free(r);
    free(v);
    return rc;
}
