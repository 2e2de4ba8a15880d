/* test_numeric.c - see test_numeric.h. */
#include "test_numeric.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_fixtures.h"
#include "train/train_internal.h"

uint64_t rng_next(rng *r)
{
    r->state ^= r->state >> 12;
    r->state ^= r->state << 25;
    r->state ^= r->state >> 27;
    return r->state * 2685821657736338717ULL;
}

float rng_uniform(rng *r, float lo, float hi)
{
    return lo + (hi - lo) * (float)((double)(rng_next(r) >> 40) / 16777216.0);
}

size_t rng_between(rng *r, size_t lo, size_t hi)
{
    return lo + (size_t)(rng_next(r) % (hi - lo + 1));
}

size_t rng_below(rng *r, size_t n) { return (size_t)(rng_next(r) % n); }

void fill_uniform(rng *r, float *v, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; ++i)
        v[i] = rng_uniform(r, lo, hi);
}

float *poisoned(size_t n)
{
    float *p = malloc((n ? n : 1) * sizeof(float));
    if (p)
        memset(p, 0xFF, n * sizeof(float));
    return p;
}

int close_f32(const char *what, const float *got, const float *want, size_t n, double atol,
              double rtol)
{
    size_t bad = 0, first = 0;
    double worst = 0.0;
    for (size_t i = 0; i < n; ++i) {
        const double diff = fabs((double)got[i] - (double)want[i]);
        if (!(diff <= atol + rtol * fabs((double)want[i]))) {
            if (bad == 0)
                first = i;
            ++bad;
        }
        if (diff > worst || diff != diff)
            worst = diff;
    }
    if (bad == 0)
        return 1;
    fprintf(stderr,
            "    %s: %zu of %zu values differ; first at [%zu]: got %.9g want %.9g "
            "(tolerance %.3g); largest |diff| %.3g\n",
            what, bad, n, first, (double)got[first], (double)want[first],
            atol + rtol * fabs((double)want[first]), worst);
    return 0;
}

int same_bits(const char *what, const void *got, const void *want, size_t bytes)
{
    if (memcmp(got, want, bytes) == 0)
        return 1;
    const unsigned char *g = got, *w = want;
    size_t i = 0;
    while (g[i] == w[i])
        i++;
    fprintf(stderr, "    %s: bytes differ from offset %zu (of %zu)\n", what, i, bytes);
    if (bytes % 4 == 0)
        fprintf(stderr, "    as floats at [%zu]: got %.9g want %.9g\n", i / 4,
                (double)((const float *)got)[i / 4], (double)((const float *)want)[i / 4]);
    return 0;
}

int same_f32(const char *what, const float *got, const float *want, size_t n)
{
    return same_bits(what, got, want, n * sizeof(float));
}

void abs_copy(float *dst, const float *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = fabsf(src[i]);
}

double matmul_atol(size_t K) { return 1e-5 * (1.0 + sqrt((double)K)); }

float bf16_round(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    memcpy(&f, &u, sizeof f);
    return f;
}

float tf32_round(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u = (u + 0x1000u) & ~0x1fffu;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t bf16_bits(float f)
{
    f = bf16_round(f);
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16);
}

float bf16_value(uint16_t v)
{
    const uint32_t u = (uint32_t)v << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static const dense_shape dense_shapes[] = {
    {1, 1, 1},       {7, 3, 5},       {17, 33, 65},     {33, 1, 65},   {257, 17, 1},
    {9, 48, 31},     {64, 65, 64},    {1, 784, 10},     {1, 784, 256}, {17, 784, 256},
    {64, 784, 256},  {65, 784, 256},  {1000, 784, 256}, {64, 256, 10}, {65, 256, 10},
    {1000, 256, 10}, {2000, 3, 5},    {60000, 3, 5},
};
const size_t test_dense_fixed = sizeof dense_shapes / sizeof dense_shapes[0];
const size_t test_dense_count = sizeof dense_shapes / sizeof dense_shapes[0] + 6;

dense_shape test_dense_shape(rng *r, size_t i)
{
    if (i < test_dense_fixed)
        return dense_shapes[i];
    const dense_shape s = {rng_between(r, 1, 300), rng_between(r, 1, 900), rng_between(r, 1, 300)};
    return s;
}

/* edge cases (N = R, a window wider than the row, even R), rows not a multiple of
 * 256, shared tiles that shrink (R 201) or fall back to the global kernels (R 700),
 * more rows than a grid's y (70000), a long row (3000001: 11719 tiles), a team of
 * threads over one row (100000); then L1D_RANDOM random ones */
static const l1d_shape l1d_shapes[] = {
    {1, 1, 1, FFNN_LOCAL1D_VALID},       {1, 1, 1, FFNN_LOCAL1D_SAME},
    {3, 5, 5, FFNN_LOCAL1D_VALID},       {3, 5, 5, FFNN_LOCAL1D_SAME},
    {2, 3, 7, FFNN_LOCAL1D_SAME},        {4, 256, 3, FFNN_LOCAL1D_VALID},
    {4, 258, 3, FFNN_LOCAL1D_VALID},     {4, 257, 3, FFNN_LOCAL1D_SAME},
    {4, 300, 3, FFNN_LOCAL1D_VALID},     {64, 64, 5, FFNN_LOCAL1D_VALID},
    {64, 64, 5, FFNN_LOCAL1D_SAME},      {5, 1000, 4, FFNN_LOCAL1D_VALID},
    {7, 999, 2, FFNN_LOCAL1D_VALID},     {2, 600, 33, FFNN_LOCAL1D_SAME},
    {2, 3000, 33, FFNN_LOCAL1D_SAME},    {3, 2000, 64, FFNN_LOCAL1D_VALID},
    {2, 1500, 201, FFNN_LOCAL1D_SAME},   {2, 1400, 700, FFNN_LOCAL1D_VALID},
    {70000, 6, 3, FFNN_LOCAL1D_SAME},    {1, 100000, 3, FFNN_LOCAL1D_VALID},
    {3, 20000, 9, FFNN_LOCAL1D_SAME},    {1, 3000001, 3, FFNN_LOCAL1D_VALID},
    {1024, 784, 5, FFNN_LOCAL1D_VALID},
};
const size_t test_l1d_fixed = sizeof l1d_shapes / sizeof l1d_shapes[0];
const size_t test_l1d_count = sizeof l1d_shapes / sizeof l1d_shapes[0] + 16;

/* batch 1..9, R 1..9 (odd for same), N R..300 */
l1d_shape test_l1d_shape(rng *r, size_t i)
{
    if (i < test_l1d_fixed)
        return l1d_shapes[i];
    l1d_shape s;
    s.padding = rng_next(r) & 1 ? FFNN_LOCAL1D_SAME : FFNN_LOCAL1D_VALID;
    s.R = rng_between(r, 1, 9);
    if (s.padding == FFNN_LOCAL1D_SAME && s.R % 2 == 0)
        s.R++;
    s.N = rng_between(r, s.padding == FFNN_LOCAL1D_SAME ? 1 : s.R, 300);
    s.batch = rng_between(r, 1, 9);
    return s;
}


ffnn_status test_gc_create(const ffnn_dataset *ds, const char *arch, uint64_t seed,
                           float scale, ffnn_loss loss, test_gc *g)
{
    memset(g, 0, sizeof *g);
    g->count = ffnn_dataset_count(ds);
    ffnn_status st = ffnn_model_create(arch, &g->m);
    if (st == FFNN_OK)
        st = ffnn_model_init(g->m, seed);
    if (st != FFNN_OK) {
        test_gc_free(g);
        return st;
    }
    g->p = ffnn_model_parameters(g->m);
    g->n = ffnn_model_parameter_count(g->m);
    for (size_t i = 0; i < g->n; i++)
        g->p[i] *= scale;
    ffnn_train_config cfg = test_train_config(FFNN_DEVICE_CPU, FFNN_STRATEGY_REFERENCE);
    cfg.loss = loss;
    cfg.batch_size = g->count;
    cfg.eval_batch_size = g->count;
    st = ffnn_trainer_create(g->m, ds, &cfg, &g->t);
    g->rows = malloc(g->count * sizeof *g->rows);
    g->grad = malloc(g->n * sizeof *g->grad);
    if (st == FFNN_OK && (!g->rows || !g->grad))
        st = FFNN_ERR_NO_MEMORY;
    if (st != FFNN_OK) {
        test_gc_free(g);
        return st;
    }
    for (size_t i = 0; i < g->count; i++)
        g->rows[i] = (int32_t)i;
    return FFNN_OK;
}

ffnn_status test_gc_loss_at(const test_gc *g, size_t i, float value, double *loss)
{
    const float saved = g->p[i];
    g->p[i] = value;
    ffnn_status st = ffnn_trainer_upload_model(g->t);
    if (st == FFNN_OK)
        st = g->dropout ? ffnn_trainer_gradient_dropout(g->t, g->rows, g->count, g->dstep, loss,
                                                        NULL)
                        : ffnn_trainer_gradient(g->t, g->rows, g->count, loss, NULL);
    g->p[i] = saved;
    return st;
}

void test_gc_free(test_gc *g)
{
    ffnn_trainer_free(g->t);
    ffnn_model_free(g->m);
    free(g->rows);
    free(g->grad);
    memset(g, 0, sizeof *g);
}
