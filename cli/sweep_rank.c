/* sweep_rank.c - ffnn sweep's results: each configuration evaluated (the means
 * over its folds), ranked, and printed as a table, CSV or JSON lines. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ffnn.h"
#include "options.h"
#include "sweep.h"

#define CMD SWEEP_CMD

/* The metric configuration k is ranked by (lower is better). */
static double rank_value(const sweep_cli *s, const config *c)
{
    const char *by = s->rank_by ? s->rank_by : c->has_val ? "val_loss" : "train_loss";
    double v = !strcmp(by, "val_loss")       ? (c->has_val ? c->val.loss : NAN)
               : !strcmp(by, "val_accuracy") ? (c->has_val ? -c->val.accuracy : NAN)
                                             : c->state.last.train_loss;
    return v == v ? v : INFINITY; /* NaN (a diverged model) ranks last */
}

int ffnn_sweep_by_rank(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->stage != y->stage)
        return x->stage > y->stage ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key ? 1 : (x->k > y->k) - (x->k < y->k);
}

/* order[n]: the configurations, best first (ties in configuration order). */
int ffnn_sweep_rank_configs(const sweep_cli *s, const config *c, long long n, long long *order)
{
    ranked *r = malloc((size_t)n * sizeof *r);
    if (!r)
        return fprintf(stderr, "%s: out of memory\n", CMD), 1;
    for (long long k = 0; k < n; k++)
        r[k].key = rank_value(s, &c[k]), r[k].k = k,
        r[k].stage = c[k].dropped_at ? c[k].dropped_at : LLONG_MAX;
    qsort(r, (size_t)n, sizeof *r, ffnn_sweep_by_rank);
    for (long long k = 0; k < n; k++)
        order[k] = r[k].k;
    free(r);
    return 0;
}

static void settings_text(const sweep_cli *s, const config *c, char *out, size_t size, int json)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0, shown = 0; i < s->axis_count && used < size; i++) {
        if (s->axes[i].count < 2 && !s->axes[i].range)
            continue; /* one value: the same for every configuration */
        const char *v = c->values[i];
        char *end;
        strtod(v, &end);
        int number = *v && !*end;
        used += (size_t)snprintf(out + used, size - used,
                                 json ? (number ? "%s\"%s\": %s" : "%s\"%s\": \"%s\"") : "%s%s=%s",
                                 shown++ ? (json ? ", " : " ") : "", s->axes[i].name, v);
    }
}

void ffnn_sweep_print_results(const sweep_cli *s, const config *c, const long long *order,
                          long long n, FILE *f, int csv)
{
    char set[1024];
    int width = 8;
    for (long long r = 0; r < n; r++) {
        settings_text(s, &c[order[r]], set, sizeof set, 0);
        width = (int)strlen(set) > width ? (int)strlen(set) : width;
    }
    if (csv)
        fprintf(f, "rank,configuration,settings,epochs,seconds,train_loss,val_loss,"
                   "val_accuracy,test_loss,test_accuracy%s\n", s->halving ? ",dropped_at" : "");
    else if (!s->json)
        printf("%4s %5s  %-*s %6s %10s %10s %8s %10s %8s %8s%s\n", "rank", "conf",
               width, "settings", "epochs", "train_loss", "val_loss", "val_acc", "test_loss", "test_acc",
               "seconds", s->halving ? "  dropped" : "");
    for (long long r = 0; r < n; r++) {
        const config *x = &c[order[r]];
        double vl = x->has_val ? x->val.loss : NAN, va = x->has_val ? x->val.accuracy : NAN;
        double tl = x->has_test ? x->test.loss : NAN, ta = x->has_test ? x->test.accuracy : NAN;
        if (csv) {
            settings_text(s, x, set, sizeof set, 0);
            fprintf(f, "%lld,%lld,\"%s\",%d,%.3f,%.6g,%.6g,%.6g,%.6g,%.6g", r + 1,
                    order[r] + 1, set, x->state.epochs_run, x->seconds,
                    x->state.last.train_loss, vl, va, tl, ta);
            if (s->halving)
                fprintf(f, ",%d", x->dropped_at);
            fputc('\n', f);
        } else if (s->json) {
            settings_text(s, x, set, sizeof set, 1);
            printf("{\"rank\": %lld, \"configuration\": %lld, \"settings\": {%s}, "
                   "\"arch\": \"%s\", \"epochs\": %d, \"best_epoch\": %d, \"seconds\": %.4f, "
                   "\"train_loss\": %.6g",
                   r + 1, order[r] + 1, set, x->arch, x->state.epochs_run,
                   x->state.best_epoch, x->seconds, x->state.last.train_loss);
            const char *keys[4] = {"val_loss", "val_accuracy", "test_loss", "test_accuracy"};
            const double v[4] = {vl, va, tl, ta};
            for (int k = 0; k < 4; k++)
                if (v[k] == v[k])
                    printf(", \"%s\": %.6g", keys[k], v[k]);
            if (s->halving && x->dropped_at)
                printf(", \"dropped_at\": %d", x->dropped_at);
            printf("}\n");
        } else {
            settings_text(s, x, set, sizeof set, 0);
            char cell[4][16]; /* val_loss, val_acc, test_loss, test_acc; "-" without the set */
            const double v[4] = {vl, 100 * va, tl, 100 * ta};
            for (int q = 0; q < 4; q++)
                snprintf(cell[q], sizeof cell[q], v[q] != v[q] ? "-" : q % 2 ? "%.2f%%" : "%.4f",
                         v[q]);
            char dropped[32] = "";
            if (s->halving)
                snprintf(dropped, sizeof dropped, x->dropped_at ? "  epoch %d" : "  -",
                         x->dropped_at);
            printf("%4lld %5lld  %-*s %6d %10.4f %10s %8s %10s %8s %8.2f%s\n", r + 1,
                   order[r] + 1, width, set, x->state.epochs_run, x->state.last.train_loss,
                   cell[0], cell[1], cell[2], cell[3], x->seconds, dropped);
        }
    }
}

int ffnn_sweep_write_csv(const sweep_cli *s, const config *c, const long long *order, long long n)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", s->csv_path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return fprintf(stderr, "%s: --csv %s: %s\n", CMD, tmp, strerror(errno)), 1;
    ffnn_sweep_print_results(s, c, order, n, f, 1);
    int bad = ferror(f) | fclose(f);
    if (bad || rename(tmp, s->csv_path) != 0) {
        fprintf(stderr, "%s: --csv %s: %s\n", CMD, s->csv_path, strerror(errno));
        remove(tmp);
        return 1;
    }
    return 0;
}

/* The means over the folds of metrics m[folds]. */
static ffnn_metrics mean_metrics(const ffnn_metrics *m, int folds)
{
    ffnn_metrics r = m[0];
    for (int f = 1; f < folds; f++) {
        r.loss += m[f].loss, r.accuracy += m[f].accuracy, r.mse += m[f].mse;
        r.rmse += m[f].rmse, r.mae += m[f].mae, r.r2 += m[f].r2, r.count += m[f].count;
    }
    r.loss /= folds, r.accuracy /= folds, r.mse /= folds, r.rmse /= folds, r.mae /= folds;
    r.r2 /= folds;
    return r;
}

/* Each configuration on its folds' validation sets (their means) and the test set,
 * in the data's own units (the models standardise raw rows themselves). */
int ffnn_sweep_evaluate_all(const sweep_cli *s, config *c, long long n, const folds *d)
{
    ffnn_metrics m[SWEEP_MAX_FOLDS];
    for (long long k = 0; k < n; k++) {
        if (!ffnn_sweep_owns(s, k))
            continue; /* another rank's: its results come from there */
        const ffnn_cli_train_options *o = &c[k].o;
        size_t batch = o->cfg.eval_batch_size;
        for (int set = 1; set <= 2; set++) {
            if (!d->raw[0][set])
                continue;
            for (int f = 0; f < d->count; f++)
                if (ffnn_model_evaluate_metrics(c[k].model[f], d->raw[f][set], batch,
                                                &m[f], NULL) != FFNN_OK)
                    return ffnn_cli_fail(CMD, set == 1 ? "the validation set" : "the test set");
            if (set == 1)
                c[k].val = mean_metrics(m, d->count), c[k].has_val = 1;
            else
                c[k].test = mean_metrics(m, d->count), c[k].has_test = 1;
        }
    }
    return 0;
}

