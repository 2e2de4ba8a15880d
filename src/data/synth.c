/* synth.c - the synthetic data sets of the seeds, drawn from ffnn's documented
 * generator (src/core/rng.h) so that a spec and a seed always give the same samples.
 *
 *   synth:points[:N[:SEED]]      seed 004's 2-D points (default N = 2100)
 *       x0, x1 = 2u - 1 (u: ffnn_rng_uniform, two draws per sample, x0 first),
 *       i.e. uniform in [-1, 1)^2 on a grid of 2^-23, exact in float;
 *       label = 1 when x0 * x1 > 0 (quadrants one and three), else 0.
 *       Float features [N, 2], class labels (2 classes).
 *
 *   synth:regression[:N[:SEED]]  seed 001's 32-feature regression (default N = 2560;
 *                                the seed used 256, 2560 and 25600)
 *       x_j = 2u - 1 for j = 0..31 (32 draws), then e = u (one draw), and
 *         y = sum_{j=0..31} a_j x_j + sum_{k=0..15} c_k sqrt(x_{2k}^2 + x_{2k+1}^2)
 *             + 0.1 (e - 0.5)
 *       with a_j = 0.25 (-1)^j and c_k = 0.5 (-1)^k, evaluated in double in that
 *       order (the linear sum over j, then the norms over k, then the noise term)
 *       and rounded to float once. The noise is uniform in [-0.05, 0.05).
 *       Float features [N, 32], float targets [N, 1].
 *       Why this function: a network without biases (seed 001's
 *       32-256relu:nobias-1:nobias) is positively homogeneous, f(s x) = s f(x) for
 *       s > 0, so it can fit only functions of that kind; y is one (up to the
 *       noise), smooth except where a pair (x_{2k}, x_{2k+1}) is (0, 0), and not
 *       linear: the best linear fit leaves about a third (32%) of its variance
 *       (about 0.97), which the hidden layer has to explain.
 *
 *   synth:motif[:N[:SEED]]       1-D signals classified by the shape of a short
 *                                motif at a random place (default N = 5000), for
 *                                the local1d layer (seed 002)
 *       label = below(2), then p = below(62) (ffnn_rng_below), then 64 noise
 *       values x_j = 0.5 (2u - 1) (uniform in [-0.5, 0.5), exact in float); then
 *       the label's motif is added at x_p, x_{p+1}, x_{p+2}:
 *         label 1: (+1, -1, +1)        label 0: (+1, +1, -1)
 *       Float features [N, 64], class labels (2 classes).
 *       Why this task: both motifs have the same sum and energy, so no global
 *       statistic of the signal (mean, power) tells the classes apart; they differ
 *       only in how neighbouring samples relate, at a position that changes from
 *       sample to sample. A local detector over 3 samples sees a contrast of 4
 *       against noise of standard deviation 0.41 (0.29 per sample); a dense
 *       unit's projection of the whole signal mixes in all 64 noise values.
 *
 * The training set (N samples) is drawn from the stream FFNN_STREAM_SYNTH_TRAIN
 * of the seed, the test set (ceil(N / 5) samples) from FFNN_STREAM_SYNTH_TEST,
 * sample after sample. SEED in the spec, when present, replaces the seed
 * argument. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/dataset.h"
#include "core/error.h"
#include "core/rng.h"

#define SYNTH_MAX_COUNT 100000000ull
#define POINTS_DEFAULT_COUNT 2100
#define REGRESSION_DEFAULT_COUNT 2560
#define REGRESSION_FEATURES 32
#define MOTIF_DEFAULT_COUNT 5000
#define MOTIF_FEATURES 64
#define MOTIF_LENGTH 3

static const char synth_specs[] =
    "synth:points[:N[:SEED]], synth:regression[:N[:SEED]] or synth:motif[:N[:SEED]]";

typedef enum { SYNTH_POINTS, SYNTH_REGRESSION, SYNTH_MOTIF } synth_kind;

/* One uniform value in [-1, 1): 2u - 1, exact in float (u has 24 bits). */
static float symmetric(ffnn_rng *r) { return 2.0f * ffnn_rng_uniform(r) - 1.0f; }

/* count samples of 2-D points from r into ds (float features [count, 2]). */
static void fill_points(ffnn_dataset *ds, ffnn_rng *r)
{
    for (size_t i = 0; i < ds->count; i++) {
        float x0 = symmetric(r);
        float x1 = symmetric(r);
        ds->values[2 * i] = x0;
        ds->values[2 * i + 1] = x1;
        ds->labels[i] = x0 * x1 > 0.0f;
    }
    ds->classes = 2;
}

/* The noise-free regression function of one sample x [32] (see the top). */
double ffnn_synth_regression_function(const float *x)
{
    double y = 0.0;
    for (int j = 0; j < REGRESSION_FEATURES; j++)
        y += (j % 2 == 0 ? 0.25 : -0.25) * (double)x[j];
    for (int k = 0; k < REGRESSION_FEATURES / 2; k++) {
        double u = x[2 * k], v = x[2 * k + 1];
        y += (k % 2 == 0 ? 0.5 : -0.5) * sqrt(u * u + v * v);
    }
    return y;
}

/* count samples of the regression set from r into ds. */
static void fill_regression(ffnn_dataset *ds, ffnn_rng *r)
{
    for (size_t i = 0; i < ds->count; i++) {
        float *x = ds->values + i * REGRESSION_FEATURES; /* [32] */
        for (int j = 0; j < REGRESSION_FEATURES; j++)
            x[j] = symmetric(r);
        double e = ffnn_rng_uniform(r);
        ds->targets[i] = (float)(ffnn_synth_regression_function(x) + 0.1 * (e - 0.5));
    }
}

/* count samples of the motif set from r into ds (see the top). */
static void fill_motif(ffnn_dataset *ds, ffnn_rng *r)
{
    static const float motif[2][MOTIF_LENGTH] = {{1.0f, 1.0f, -1.0f}, {1.0f, -1.0f, 1.0f}};
    for (size_t i = 0; i < ds->count; i++) {
        const uint32_t label = ffnn_rng_below(r, 2);
        const uint32_t p = ffnn_rng_below(r, MOTIF_FEATURES - MOTIF_LENGTH + 1);
        float *x = ds->values + i * MOTIF_FEATURES; /* [64] */
        for (int j = 0; j < MOTIF_FEATURES; j++)
            x[j] = 0.5f * symmetric(r);
        for (int k = 0; k < MOTIF_LENGTH; k++)
            x[p + (uint32_t)k] += motif[label][k];
        ds->labels[i] = (uint8_t)label;
    }
    ds->classes = 2;
}

/* One set of count samples of kind from (seed, stream). */
static ffnn_status generate(synth_kind kind, size_t count, uint64_t seed, uint64_t stream,
                            ffnn_dataset **out)
{
    ffnn_rng r;
    ffnn_status st;
    ffnn_rng_seed(&r, seed, stream);
    if (kind == SYNTH_POINTS) {
        if ((st = ffnn_dataset_alloc_kind(count, 1, 2, 1, 0, out)) != FFNN_OK)
            return st;
        fill_points(*out, &r);
    } else if (kind == SYNTH_MOTIF) {
        if ((st = ffnn_dataset_alloc_kind(count, 1, MOTIF_FEATURES, 1, 0, out)) != FFNN_OK)
            return st;
        fill_motif(*out, &r);
    } else {
        if ((st = ffnn_dataset_alloc_kind(count, 1, REGRESSION_FEATURES, 1, 1, out)) != FFNN_OK)
            return st;
        fill_regression(*out, &r);
    }
    return FFNN_OK;
}

/* A decimal unsigned integer field [s, end) into *v; 0 on success. */
static int parse_field(const char *s, const char *end, uint64_t *v)
{
    char buf[32];
    char *stop = NULL;
    size_t n = (size_t)(end - s);
    if (n == 0 || n >= sizeof buf || s[0] < '0' || s[0] > '9')
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    unsigned long long x = strtoull(buf, &stop, 10);
    if (errno || *stop != '\0')
        return -1;
    *v = (uint64_t)x;
    return 0;
}

/* Parse a spec (see the top) into kind, count and seed (*seed kept when absent). */
static ffnn_status parse_spec(const char *spec, synth_kind *kind, size_t *count,
                              uint64_t *seed)
{
    const char *p, *colon;
    uint64_t n;
    if (strncmp(spec, "synth:", 6) != 0)
        return ffnn_fail(FFNN_ERR_PARSE, "synthetic data '%s': expected %s", spec,
                         synth_specs);
    p = spec + 6;
    colon = strchr(p, ':');
    size_t name_len = colon ? (size_t)(colon - p) : strlen(p);
    if (name_len == 6 && strncmp(p, "points", 6) == 0) {
        *kind = SYNTH_POINTS;
        *count = POINTS_DEFAULT_COUNT;
    } else if (name_len == 10 && strncmp(p, "regression", 10) == 0) {
        *kind = SYNTH_REGRESSION;
        *count = REGRESSION_DEFAULT_COUNT;
    } else if (name_len == 5 && strncmp(p, "motif", 5) == 0) {
        *kind = SYNTH_MOTIF;
        *count = MOTIF_DEFAULT_COUNT;
    } else {
        return ffnn_fail(FFNN_ERR_PARSE,
                         "synthetic data '%s': unknown generator '%.*s' (expected %s)", spec,
                         (int)name_len, p, synth_specs);
    }
    if (!colon)
        return FFNN_OK;
    p = colon + 1;
    colon = strchr(p, ':');
    if (parse_field(p, colon ? colon : p + strlen(p), &n) != 0 || n < 1 ||
        n > SYNTH_MAX_COUNT)
        return ffnn_fail(FFNN_ERR_PARSE,
                         "synthetic data '%s': column %d: expected a sample count N in [1, "
                         "%llu], found '%.*s'", spec, (int)(p - spec) + 1,
                         (unsigned long long)SYNTH_MAX_COUNT,
                         (int)(colon ? (size_t)(colon - p) : strlen(p)), p);
    *count = (size_t)n;
    if (!colon)
        return FFNN_OK;
    p = colon + 1;
    if (parse_field(p, p + strlen(p), &n) != 0)
        return ffnn_fail(FFNN_ERR_PARSE,
                         "synthetic data '%s': column %d: expected a seed (an unsigned "
                         "decimal integer) and nothing after it, found '%s'",
                         spec, (int)(p - spec) + 1, p);
    *seed = n;
    return FFNN_OK;
}

ffnn_status ffnn_dataset_synthetic(const char *spec, uint64_t seed, ffnn_dataset **train,
                                   ffnn_dataset **test)
{
    synth_kind kind = SYNTH_POINTS;
    size_t count = 0;
    ffnn_dataset *tr = NULL, *te = NULL;
    ffnn_status st;

    if (!spec)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_dataset_synthetic: spec is NULL");
    if ((st = parse_spec(spec, &kind, &count, &seed)) != FFNN_OK)
        return st;
    if (train && (st = generate(kind, count, seed, FFNN_STREAM_SYNTH_TRAIN, &tr)) != FFNN_OK)
        return st;
    if (test && (st = generate(kind, (count + 4) / 5, seed, FFNN_STREAM_SYNTH_TEST, &te)) !=
                    FFNN_OK) {
        ffnn_dataset_free(tr);
        return st;
    }
    if (train)
        *train = tr;
    if (test)
        *test = te;
    return FFNN_OK;
}
