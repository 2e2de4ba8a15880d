/*
 * split.c - a data set split in two by a fixed seeded permutation, stratified by
 * class (ffnn_dataset_split in ffnn.h has the rule; tests/torch_twin.py redoes it).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/rng.h"
#include "data/dataset.h"

/* The rows of src whose flag in[] is `want`, in file order, as a new data set. */
static ffnn_status take_rows(const ffnn_dataset *src, const unsigned char *in, int want,
                             size_t count, ffnn_dataset **out)
{
    ffnn_dataset *ds = NULL;
    ffnn_status st = ffnn_dataset_slice(src, 0, count, &ds); /* src's kinds, names, classes */
    if (st != FFNN_OK)
        return st;
    size_t f = src->features, w = src->target_width, k = 0;
    size_t fb = src->images ? 1 : sizeof(float);
    for (size_t i = 0; i < src->count; i++) {
        if (in[i] != want)
            continue;
        if (src->images)
            memcpy(ds->images + k * f, src->images + i * f, f);
        else
            memcpy(ds->values + k * f, src->values + i * f, f * fb);
        if (src->labels)
            ds->labels[k] = src->labels[i];
        else
            memcpy(ds->targets + k * w, src->targets + i * w, w * sizeof(float));
        if (src->weights) /* slice gave ds a weights buffer */
            ds->weights[k] = src->weights[i];
        k++;
    }
    *out = ds;
    return FFNN_OK;
}

/* The rows of a data set grouped by class (file order within a class), then each
 * class shuffled by the split's seeded stream, class by class; and the flags of
 * the rows a caller picks. */
typedef struct class_groups {
    size_t classes;    /* src's classes (1 for float targets)               */
    size_t *count;     /* [classes]: the rows of each class                 */
    size_t *start;     /* [classes + 1]: where each class begins in order   */
    int32_t *order;    /* [n]: the row indices, by class                    */
    unsigned char *in; /* [n]: zeroed; the caller's flag per row            */
} class_groups;

static void groups_free(class_groups *g)
{
    free(g->count);
    free(g->start);
    free(g->order);
    free(g->in);
}

/* src's rows into *g, each class shuffled with seed; FFNN_OK, or FFNN_ERR_NO_MEMORY
 * ("what: out of memory for N samples") with nothing left allocated. */
static ffnn_status shuffled_groups(const ffnn_dataset *src, uint64_t seed, const char *what,
                                   class_groups *g)
{
    size_t n = src->count;
    g->classes = src->labels ? (size_t)src->classes : 1;
    g->count = calloc(g->classes, sizeof *g->count);
    g->start = calloc(g->classes + 1, sizeof *g->start);
    g->order = malloc(n * sizeof *g->order);
    g->in = calloc(n, 1);
    size_t *fill = calloc(g->classes, sizeof *fill);
    if (!g->count || !g->start || !g->order || !g->in || !fill) {
        free(fill);
        groups_free(g);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "%s: out of memory for %zu samples", what, n);
    }
    for (size_t i = 0; i < n; i++)
        g->count[src->labels ? (size_t)src->labels[i] : 0]++;
    for (size_t c = 0; c < g->classes; c++)
        g->start[c + 1] = g->start[c] + g->count[c];
    for (size_t i = 0; i < n; i++) {
        size_t c = src->labels ? (size_t)src->labels[i] : 0;
        g->order[g->start[c] + fill[c]++] = (int32_t)i;
    }
    free(fill);
    ffnn_rng r;
    ffnn_rng_seed(&r, seed, FFNN_STREAM_SPLIT);
    for (size_t c = 0; c < g->classes; c++)
        ffnn_rng_shuffle(&r, g->order + g->start[c], g->count[c]);
    return FFNN_OK;
}

/* Largest-remainder counts: q[c] of n[c] go to the part, summing to total. */
static void stratum_counts(const size_t *n, size_t classes, double fraction, size_t total,
                           size_t *q)
{
    size_t sum = 0;
    for (size_t c = 0; c < classes; c++) {
        q[c] = (size_t)floor(fraction * (double)n[c]);
        sum += q[c];
    }
    while (sum < total) { /* one more to the largest remainder (first class on ties) */
        size_t best = classes;
        double best_r = -1.0;
        for (size_t c = 0; c < classes; c++) {
            double r = fraction * (double)n[c] - (double)q[c];
            if (q[c] < n[c] && r > best_r) {
                best_r = r;
                best = c;
            }
        }
        if (best == classes)
            break;
        q[best]++;
        sum++;
    }
}

ffnn_status ffnn_dataset_split(const ffnn_dataset *src, double fraction, uint64_t seed,
                               ffnn_dataset **rest, ffnn_dataset **part)
{
    if (!src || !rest || !part)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_split: NULL argument");
    size_t n = src->count, total = (size_t)floor(fraction * (double)n + 0.5);
    if (!(fraction > 0.0 && fraction < 1.0) || total == 0 || total == n)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "split: a fraction of %g of %zu samples leaves %zu and %zu: expected a "
                         "fraction in (0, 1) that leaves both sides non-empty", fraction, n,
                         n - total, total);
    class_groups g;
    ffnn_status st = shuffled_groups(src, seed, "split", &g);
    if (st != FFNN_OK)
        return st;
    size_t *q = calloc(g.classes, sizeof *q); /* the first q[c] of class c go to part */
    if (!q) {
        groups_free(&g);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "split: out of memory for %zu samples", n);
    }
    stratum_counts(g.count, g.classes, fraction, total, q);
    for (size_t c = 0; c < g.classes; c++)
        for (size_t k = 0; k < q[c]; k++)
            g.in[g.order[g.start[c] + k]] = 1;
    st = take_rows(src, g.in, 0, n - total, rest);
    if (st == FFNN_OK && (st = take_rows(src, g.in, 1, total, part)) != FFNN_OK) {
        ffnn_dataset_free(*rest);
        *rest = NULL;
    }
    groups_free(&g);
    free(q);
    return st;
}

ffnn_status ffnn_dataset_fold(const ffnn_dataset *src, int k, int fold, uint64_t seed,
                              ffnn_dataset **train, ffnn_dataset **test)
{
    if (!src || !test)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_fold: NULL argument");
    size_t n = src->count;
    if (k < 2 || (size_t)k > n || fold < 0 || fold >= k)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cross-validation: expected 2 <= K <= %zu samples and a fold in "
                         "[0, K), found K %d, fold %d", n, k, fold);
    class_groups g;
    ffnn_status st = shuffled_groups(src, seed, "cross-validation", &g);
    if (st != FFNN_OK)
        return st;
    size_t next = 0, in_fold = 0; /* the fold the next sample is dealt to */
    for (size_t c = 0; c < g.classes; c++)
        for (size_t j = 0; j < g.count[c]; j++, next = (next + 1) % (size_t)k)
            if (next == (size_t)fold) {
                g.in[g.order[g.start[c] + j]] = 1;
                in_fold++;
            }
    if (in_fold == 0 || in_fold == n) {
        st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cross-validation: fold %d of %d is empty",
                       fold, k);
        goto done;
    }
    if ((st = take_rows(src, g.in, 1, in_fold, test)) == FFNN_OK && train &&
        (st = take_rows(src, g.in, 0, n - in_fold, train)) != FFNN_OK) {
        ffnn_dataset_free(*test);
        *test = NULL;
    }
done:
    groups_free(&g);
    return st;
}
