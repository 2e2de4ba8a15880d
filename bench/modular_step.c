/*
 * modular_step.c - parts b and c of `ffnn bench modular` (modular.c has the method):
 * one training step of 784-512relu-128relu-10 op by op with CUDA events, checked
 * against the CPU reference first, and the cross-entropy batch sum by atomics, a
 * shared-memory tree and warp shuffles (lab/reduce.h), checked against a double sum.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lab/reduce.h"
#include "backend/backend.h"
#include "core/error.h"
#include "ffnn.h"
#include "harness.h"
#include "modular.h"
#include "suites.h"


const char *const mod_op_names[N_OPS] = {
    "gather",         "dense_forward_1", "relu_1",         "dense_forward_2", "relu_2",
    "dense_forward_3", "loss_softmax_ce", "dense_backward_3", "relu_backward_2",
    "dense_backward_2", "relu_backward_1", "dense_backward_1", "sgd_update"};
/* The seed's table 1.7 (full MNIST, v6, its GPU, us, averaged over its layers):
 * linearLayerForward, reluActivationForward, softmax+MSE kernels, linearLayerBackprop
 * + UpdateWeights + UpdateBias, reluActivationBackprop. NaN: no counterpart. */
const double mod_op_seed_us[N_OPS] = {NAN,   17.51, 0.99, 17.51, 0.99, 17.51, NAN,
                                      22.60, 1.11,  22.60, 1.11, 22.60, NAN};

#define L1_IN 784
#define L1_OUT 512
#define L2_OUT 128
#define L3_OUT 10

/* The rows of part b at batch B: k = -1 the step as launched, 0..N_OPS-1 the ops,
 * N_OPS the step queued. */
static row *new_step_row(modular *s, size_t B, int k)
{
    const char *name = k < 0 ? "step_as_launched" : k == N_OPS ? "step_queued" : mod_op_names[k];
    row *r = mod_new_row(s, "step", name, "cuda");
    r->batch = (int)B;
    r->repeats = s->o.repeats;
    snprintf(r->arch, sizeof r->arch, "784-512relu-128relu-10");
    snprintf(r->loss, sizeof r->loss, "ce");
    r->seed_value = k >= 0 && k < N_OPS ? mod_op_seed_us[k] : NAN;
    r->seed_unit = "us";
    return r;
}

/* ------------------------------------------------------------ part c: reduction lab */

/* The seed's binaryCrossEntropyCost on the 2-D points (batch 100, width 1, its GPU):
 * v0 atomics + unified memory, v1 shared tree, v2 shuffles (table 1.3). */
static const double lab_seed_us[FFNN_REDUCE_VARIANTS] = {200.94, 3.50, 2.49};

static row *new_lab_row(modular *s, int B, int v)
{
    row *r = mod_new_row(s, "lab", ffnn_reduce_lab_name(v), "cuda");
    r->batch = B;
    r->repeats = s->o.repeats;
    r->seed_value = lab_seed_us[v];
    r->seed_unit = "us";
    snprintf(r->loss, sizeof r->loss, "ce");
    return r;
}

#if FFNN_HAVE_CUDA

/* ------------------------------------------------------------ part b on the GPU */

typedef struct step_bufs {
    uint8_t *images, *correct;
    int32_t *labels, *y, *index;
    float *x, *params, *grads, *z1, *a1, *z2, *a2, *z3, *dout, *rloss, *da2, *dz2, *da1, *dz1;
} step_bufs;

typedef struct step_env {
    const ffnn_backend_ops *ops;
    void *ctx;
    step_bufs b;
    size_t batch, nsrc, P;
    size_t w_off[3], b_off[3];
    ffnn_optimizer_step sgd;
} step_env;

static ffnn_status env_alloc(step_env *e, void **p, size_t bytes)
{
    return e->ops->alloc(e->ctx, bytes, p);
}

static ffnn_status step_setup(step_env *e, const uint8_t *images, const int32_t *labels,
                              const int32_t *index, const float *params)
{
    step_bufs *b = &e->b;
    size_t B = e->batch;
    ffnn_status st = FFNN_OK;
#define A(ptr, n) \
    if (st == FFNN_OK) st = env_alloc(e, (void **)&b->ptr, (n) * sizeof *b->ptr)
    A(images, e->nsrc * L1_IN);
    A(labels, e->nsrc);
    A(index, B);
    A(y, B);
    A(correct, B);
    A(x, B * L1_IN);
    A(params, e->P);
    A(grads, e->P);
    A(z1, B * L1_OUT);
    A(a1, B * L1_OUT);
    A(da1, B * L1_OUT);
    A(dz1, B * L1_OUT);
    A(z2, B * L2_OUT);
    A(a2, B * L2_OUT);
    A(da2, B * L2_OUT);
    A(dz2, B * L2_OUT);
    A(z3, B * L3_OUT);
    A(dout, B * L3_OUT);
    A(rloss, B);
#undef A
    if (st == FFNN_OK) st = e->ops->upload(e->ctx, b->images, images, e->nsrc * L1_IN);
    if (st == FFNN_OK) st = e->ops->upload(e->ctx, b->labels, labels, e->nsrc * sizeof *labels);
    if (st == FFNN_OK) st = e->ops->upload(e->ctx, b->index, index, B * sizeof *index);
    if (st == FFNN_OK) st = e->ops->upload(e->ctx, b->params, params, e->P * sizeof *params);
    return st;
}

static void step_teardown(step_env *e)
{
    if (e->ctx == NULL) return;
    void **p = (void **)&e->b;
    for (size_t i = 0; i < sizeof e->b / sizeof(void *); i++)
        if (p[i]) e->ops->release(e->ctx, p[i]);
    e->ops->destroy(e->ctx);
    e->ctx = NULL;
}

static ffnn_status run_op(step_env *e, int op)
{
    const ffnn_backend_ops *o = e->ops;
    void *c = e->ctx;
    step_bufs *b = &e->b;
    size_t B = e->batch;
    float *P = b->params, *G = b->grads;
    switch (op) {
    case OP_GATHER: {
        ffnn_gather_source src;
        memset(&src, 0, sizeof src);
        src.images = b->images;
        src.features = L1_IN;
        src.labels = b->labels;
        return o->gather(c, &src, b->index, B, b->x, b->y, NULL);
    }
    case OP_FWD1:
        return o->dense_forward(c, b->x, P + e->w_off[0], P + e->b_off[0], b->z1, B, L1_IN,
                                L1_OUT);
    case OP_RELU1: return o->activation_forward(c, FFNN_ACT_RELU, 0.0f, b->z1, b->a1, B * L1_OUT);
    case OP_FWD2:
        return o->dense_forward(c, b->a1, P + e->w_off[1], P + e->b_off[1], b->z2, B, L1_OUT,
                                L2_OUT);
    case OP_RELU2: return o->activation_forward(c, FFNN_ACT_RELU, 0.0f, b->z2, b->a2, B * L2_OUT);
    case OP_FWD3:
        return o->dense_forward(c, b->a2, P + e->w_off[2], P + e->b_off[2], b->z3, B, L2_OUT,
                                L3_OUT);
    case OP_LOSS:
        return o->loss(c, FFNN_LOSS_SOFTMAX_CE, b->z3, b->y, NULL, B, L3_OUT, b->dout,
                       b->rloss, b->correct);
    case OP_BWD3:
        return o->dense_backward(c, b->a2, P + e->w_off[2], b->dout, b->da2, G + e->w_off[2],
                                 G + e->b_off[2], B, L2_OUT, L3_OUT);
    case OP_RELUB2:
        return o->activation_backward(c, FFNN_ACT_RELU, 0.0f, b->a2, b->da2, b->dz2, B * L2_OUT);
    case OP_BWD2:
        return o->dense_backward(c, b->a1, P + e->w_off[1], b->dz2, b->da1, G + e->w_off[1],
                                 G + e->b_off[1], B, L1_OUT, L2_OUT);
    case OP_RELUB1:
        return o->activation_backward(c, FFNN_ACT_RELU, 0.0f, b->a1, b->da1, b->dz1, B * L1_OUT);
    case OP_BWD1:
        return o->dense_backward(c, b->x, P + e->w_off[0], b->dz1, NULL, G + e->w_off[0],
                                 G + e->b_off[0], B, L1_IN, L1_OUT);
    case OP_SGD: return o->optimizer_update(c, &e->sgd, P, G, NULL, e->P);
    default: return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "op %d", op);
    }
}

/* Compare n floats (or bytes) at gp (g's memory) and cp (c's); *err: the largest
 * normwise relative error so far. 0, or -1 with why. */
static int check_buf(step_env *g, step_env *c, const char *what, const void *gp, const void *cp,
                     size_t n, int u8, double *err, char *why, size_t why_size)
{
    size_t bytes = n * (u8 ? 1 : sizeof(float));
    void *hg = malloc(bytes), *hc = malloc(bytes);
    int rc = -1;
    if (hg == NULL || hc == NULL) {
        snprintf(why, why_size, "out of host memory");
    } else if (g->ops->download(g->ctx, hg, gp, bytes) != FFNN_OK ||
               c->ops->download(c->ctx, hc, cp, bytes) != FFNN_OK) {
        snprintf(why, why_size, "download %s: %.200s", what, ffnn_last_error());
    } else if (u8) {
        rc = memcmp(hg, hc, bytes) == 0 ? 0 : -1;
        if (rc) snprintf(why, why_size, "%s differs", what);
    } else {
        const ffnn_lab_tolerance tol = {0.0, STEP_TOL, 1.0, 0.0};
        ffnn_lab_check_result res;
        rc = ffnn_lab_check(what, hg, hc, NULL, n, &tol, &res) == 0 ? 0 : -1;
        if (rc == 0 && res.max_rel > *err) *err = res.max_rel;
        if (rc != 0)
            snprintf(why, why_size, "%s[%zu]: gpu %.9g, cpu %.9g (max |gpu - cpu| / max |cpu| "
                     "> %.0e, or not finite)", what, res.first, res.first_got, res.first_want,
                     STEP_TOL);
    }
    free(hg);
    free(hc);
    return rc;
}
/* Run the step on both, then compare each op's outputs. op_err[k]: its error. */
static int validate_step(step_env *g, step_env *c, double *op_err, char *why, size_t why_size)
{
    for (int k = 0; k < N_OPS; k++) {
        ffnn_status st = run_op(g, k);
        if (st == FFNN_OK) st = run_op(c, k);
        if (st != FFNN_OK) {
            snprintf(why, why_size, "%s: %.200s", mod_op_names[k], ffnn_last_error());
            return -1;
        }
    }
    size_t B = g->batch;
    step_bufs *a = &g->b, *b = &c->b;
#define CHK(k, what, field, off, n, u8)                                                      \
    do {                                                                                     \
        op_err[k] = op_err[k] > 0 ? op_err[k] : 0.0;                                         \
        if (check_buf(g, c, what, (const char *)a->field + (off), (const char *)b->field + (off), \
                      n, u8, &op_err[k], why, why_size))                                     \
            return -1;                                                                       \
    } while (0)
    CHK(OP_GATHER, "gather x", x, 0, B * L1_IN, 0);
    CHK(OP_GATHER, "gather y", y, 0, B, 1);
    CHK(OP_FWD1, "z1", z1, 0, B * L1_OUT, 0);
    CHK(OP_RELU1, "a1", a1, 0, B * L1_OUT, 0);
    CHK(OP_FWD2, "z2", z2, 0, B * L2_OUT, 0);
    CHK(OP_RELU2, "a2", a2, 0, B * L2_OUT, 0);
    CHK(OP_FWD3, "z3", z3, 0, B * L3_OUT, 0);
    CHK(OP_LOSS, "dout", dout, 0, B * L3_OUT, 0);
    CHK(OP_LOSS, "row loss", rloss, 0, B, 0);
    CHK(OP_LOSS, "row correct", correct, 0, B, 1);
    const size_t wsz[3] = {L1_OUT * L1_IN, L2_OUT * L1_OUT, L3_OUT * L2_OUT};
    const size_t bsz[3] = {L1_OUT, L2_OUT, L3_OUT};
    const int bwd[3] = {OP_BWD1, OP_BWD2, OP_BWD3};
    for (int l = 2; l >= 0; l--) {
        char nm[32];
        snprintf(nm, sizeof nm, "dW%d", l + 1);
        CHK(bwd[l], nm, grads, g->w_off[l] * sizeof(float), wsz[l], 0);
        snprintf(nm, sizeof nm, "db%d", l + 1);
        CHK(bwd[l], nm, grads, g->b_off[l] * sizeof(float), bsz[l], 0);
    }
    CHK(OP_BWD3, "da2", da2, 0, B * L2_OUT, 0);
    CHK(OP_RELUB2, "dz2", dz2, 0, B * L2_OUT, 0);
    CHK(OP_BWD2, "da1", da1, 0, B * L1_OUT, 0);
    CHK(OP_RELUB1, "dz1", dz1, 0, B * L1_OUT, 0);
    CHK(OP_SGD, "params", params, 0, g->P, 0);
#undef CHK
    return 0;
}

/* One op (k < N_OPS) or the whole step (k < 0 or k == N_OPS), for ffnn_lab_time. */
typedef struct op_call {
    step_env *g;
    int k;
} op_call;

static ffnn_status op_launch(void *arg)
{
    const op_call *c = arg;
    if (c->k >= 0 && c->k < N_OPS) return run_op(c->g, c->k);
    for (int j = 0; j < N_OPS; j++) {
        ffnn_status st = run_op(c->g, j);
        if (st != FFNN_OK) return st;
    }
    return FFNN_OK;
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

/* The two backends of part b at batch B: the cuda one (g) and the CPU reference (c),
 * on the same random inputs and parameters. 0, or -1 with why. */
static int step_prepare(const options *o, size_t B, step_env *g, step_env *c, ffnn_model **m,
                        char *why, size_t why_size)
{
    g->ops = ffnn_cuda_backend();
    c->ops = &ffnn_cpu_backend;
    g->batch = c->batch = B;
    g->nsrc = c->nsrc = B < 1024 ? 1024 : B;
    if (ffnn_model_create("784-512relu-128relu-10", m) != FFNN_OK ||
        ffnn_model_init(*m, (uint64_t)o->seed) != FFNN_OK) {
        snprintf(why, why_size, "failed: model: %.300s", ffnn_last_error());
        return -1;
    }
    g->P = c->P = ffnn_model_parameter_count(*m);
    float *params = ffnn_model_parameters(*m);
    for (int l = 0; l < 3; l++) {
        g->w_off[l] = c->w_off[l] = (size_t)(ffnn_model_weight(*m, l) - params);
        g->b_off[l] = c->b_off[l] = (size_t)(ffnn_model_bias(*m, l) - params);
    }
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.learning_rate = LR;
    cfg.optimizer = FFNN_OPT_SGD;
    g->sgd = c->sgd = ffnn_optimizer_step_at(&cfg, 1);
    uint8_t *images = malloc(g->nsrc * L1_IN);
    int32_t *labels = malloc(g->nsrc * sizeof *labels);
    int32_t *index = malloc(B * sizeof *index);
    int rc = -1;
    if (!images || !labels || !index) {
        snprintf(why, why_size, "failed: out of host memory");
        goto done;
    }
    uint64_t s = (uint64_t)o->seed * 7919 + B;
    for (size_t i = 0; i < g->nsrc * L1_IN; i++) images[i] = (uint8_t)(lcg(&s) & 0xff);
    for (size_t i = 0; i < g->nsrc; i++) labels[i] = (int32_t)(lcg(&s) % 10);
    for (size_t i = 0; i < B; i++) index[i] = (int32_t)(lcg(&s) % g->nsrc);
    if (ffnn_lab_backend_create(g->ops, FFNN_MATMUL_TILED, 1, &g->ctx) != FFNN_OK ||
        ffnn_lab_backend_create(c->ops, FFNN_MATMUL_TILED, 1, &c->ctx) != FFNN_OK ||
        step_setup(g, images, labels, index, params) != FFNN_OK ||
        step_setup(c, images, labels, index, params) != FFNN_OK) {
        snprintf(why, why_size, "failed: setup: %.300s", ffnn_last_error());
        goto done;
    }
    rc = 0;
done:
    free(images);
    free(labels);
    free(index);
    return rc;
}

/* Part b at batch B on the GPU: check the step against the CPU reference, then time
 * every op and the whole step (one row each). */
static void measure_step(modular *s, size_t B)
{
    char why[400] = "", w[300];
    double op_err[N_OPS];
    for (int k = 0; k < N_OPS; k++) op_err[k] = 0.0;
    step_env g, c;
    memset(&g, 0, sizeof g);
    memset(&c, 0, sizeof c);
    ffnn_model *m = NULL;
    int ok = step_prepare(&s->o, B, &g, &c, &m, why, sizeof why) == 0;
    if (ok && validate_step(&g, &c, op_err, w, sizeof w) != 0) {
        snprintf(why, sizeof why, "failed: check against the CPU reference: %s", w);
        ok = 0;
    }
    void *stream = ok ? ffnn_lab_backend_stream(g.ctx) : NULL;
    for (int k = -1; k <= N_OPS; k++) {
        row *r = new_step_row(s, B, k);
        if (!ok) {
            mod_set_status(r, why);
            continue;
        }
        r->err = k >= 0 && k < N_OPS ? op_err[k] : NAN;
        op_call call = {&g, k};
        const int one_op = k >= 0 && k < N_OPS;
        const ffnn_lab_timing t = {0, s->o.repeats, one_op ? INNER : 1, 0.0, INNER,
                                   k >= 0 ? SPIN_US : 0.0};
        ffnn_lab_times times;
        if (ffnn_lab_time(stream, op_launch, &call, &t, &times) != FFNN_OK)
            snprintf(r->status, sizeof r->status, "failed: timing: %.200s", ffnn_last_error());
        else
            r->us = times.median_us, r->us_min = times.min_us, r->us_max = times.max_us;
        fprintf(stderr, "  step B=%-5zu %-18s %9.2f us (min %.2f, max %.2f)  err %.2g  %s\n", B,
                r->task, r->us, r->us_min, r->us_max, r->err, r->status);
    }
    step_teardown(&g);
    step_teardown(&c);
    ffnn_model_free(m);
}

/* ------------------------------------------------------------ part c on the GPU */

/* One variant's sum, for ffnn_lab_time. */
typedef struct reduce_call {
    int v, B;
    float *z;       /* [B, LAB_C] logits (device) */
    uint8_t *y;     /* [B] labels (device)        */
    float *out;     /* the sum (device)           */
    void *stream;
} reduce_call;

static ffnn_status reduce_launch(void *arg)
{
    const reduce_call *c = arg;
    return ffnn_reduce_lab_ce_sum(c->v, c->z, c->y, c->B, LAB_C, c->out, c->stream);
}

/* Variant v at batch B on the device buffers of rc: check on fresh random logits and
 * labels (hz, hy: host buffers of B rows) against a double CPU sum, then time; fills r. */
static void measure_variant(const options *o, reduce_call *rc, float *hz, uint8_t *hy, row *r)
{
    const int B = rc->B, v = rc->v;
    uint64_t seed = (uint64_t)o->seed * 1000003ULL + (uint64_t)B * 3 + (uint64_t)v;
    uint64_t s = seed;
    for (int b = 0; b < B; b++) hy[b] = (uint8_t)(lcg(&s) % LAB_C);
    float sum = NAN;
    ffnn_status st = ffnn_lab_fill_uniform(rc->z, (size_t)B * LAB_C, seed, -4.0f, 4.0f);
    if (st == FFNN_OK) st = ffnn_lab_upload(rc->y, hy, (size_t)B);
    if (st == FFNN_OK) st = ffnn_lab_memset(rc->out, 0xff, sizeof *rc->out);
    if (st == FFNN_OK) st = reduce_launch(rc);
    if (st == FFNN_OK) st = ffnn_lab_stream_sync(rc->stream);
    if (st == FFNN_OK) st = ffnn_lab_download(&sum, rc->out, sizeof sum);
    if (st == FFNN_OK) st = ffnn_lab_download(hz, rc->z, (size_t)B * LAB_C * sizeof *hz);
    if (st != FFNN_OK) {
        snprintf(r->status, sizeof r->status, "failed: %.400s", ffnn_last_error());
        return;
    }
    double ref = 0.0;
    for (int b = 0; b < B; b++) {
        const float *zr = hz + (size_t)b * LAB_C;
        double mx = zr[0], se = 0.0;
        for (int j = 1; j < LAB_C; j++) mx = fmax(mx, zr[j]);
        for (int j = 0; j < LAB_C; j++) se += exp((double)zr[j] - mx);
        ref += mx + log(se) - zr[hy[b]];
    }
    r->err = fabs((double)sum - ref) / fabs(ref);
    if (!(r->err <= LAB_TOL)) {
        snprintf(r->status, sizeof r->status,
                 "failed: check: sum %.9g, double CPU sum %.9g, relative error %.3g (> %.0e)",
                 (double)sum, ref, r->err, LAB_TOL);
        return;
    }
    const ffnn_lab_timing t = {0, o->repeats, INNER, 0.0, INNER, SPIN_US};
    ffnn_lab_times times;
    if (ffnn_lab_time(rc->stream, reduce_launch, rc, &t, &times) != FFNN_OK)
        snprintf(r->status, sizeof r->status, "failed: timing: %.300s", ffnn_last_error());
    else
        r->us = times.median_us, r->us_min = times.min_us, r->us_max = times.max_us;
}

/* Part c on the GPU: every batch size of --lab-batch, every variant. */
static void measure_lab(modular *s)
{
    const options *o = &s->o;
    void *stream = NULL;
    char why[400] = "";
    if (ffnn_lab_stream_create(&stream) != FFNN_OK)
        snprintf(why, sizeof why, "failed: stream: %.300s", ffnn_last_error());
    for (int i = 0; i < o->n_lab_batch; i++) {
        const int B = o->lab_batch[i];
        float *dz = NULL, *dout = NULL, *hz = NULL;
        uint8_t *dy = NULL, *hy = NULL;
        char bwhy[400] = "";
        if (!why[0]) {
            hz = malloc((size_t)B * LAB_C * sizeof *hz);
            hy = malloc((size_t)B);
            if (!hz || !hy ||
                ffnn_lab_malloc((void **)&dz, (size_t)B * LAB_C * sizeof *dz) != FFNN_OK ||
                ffnn_lab_malloc((void **)&dy, (size_t)B) != FFNN_OK ||
                ffnn_lab_malloc((void **)&dout, sizeof *dout) != FFNN_OK)
                snprintf(bwhy, sizeof bwhy, "failed: buffers: %.300s", ffnn_last_error());
        }
        for (int v = 0; v < FFNN_REDUCE_VARIANTS; v++) {
            row *r = new_lab_row(s, B, v);
            if (why[0] || bwhy[0]) {
                mod_set_status(r, why[0] ? why : bwhy);
                continue;
            }
            reduce_call rc = {v, B, dz, dy, dout, stream};
            measure_variant(o, &rc, hz, hy, r);
            fprintf(stderr, "  lab B=%-6d %-12s %9.2f us (min %.2f, max %.2f)  rel err %.2g  %s\n",
                    B, r->task, r->us, r->us_min, r->us_max, r->err, r->status);
        }
        ffnn_lab_free(dz);
        ffnn_lab_free(dy);
        ffnn_lab_free(dout);
        free(hz);
        free(hy);
    }
    ffnn_lab_stream_destroy(stream);
}

#endif /* FFNN_HAVE_CUDA */

/* Part b at batch B, or its rows marked skipped (skip: why). */
void mod_run_step_part(modular *s, size_t B, const char *skip)
{
#if FFNN_HAVE_CUDA
    if (skip == NULL) {
        measure_step(s, B);
        return;
    }
#endif
    char why[400];
    snprintf(why, sizeof why, "skipped: %s", skip ? skip : "this build has no CUDA");
    for (int k = -1; k <= N_OPS; k++) mod_set_status(new_step_row(s, B, k), why);
}

/* Part c, or its rows marked skipped (skip: why). */
void mod_run_lab(modular *s, const char *skip)
{
#if FFNN_HAVE_CUDA
    if (skip == NULL) {
        measure_lab(s);
        return;
    }
#endif
    char why[400];
    snprintf(why, sizeof why, "skipped: %s", skip ? skip : "this build has no CUDA");
    for (int i = 0; i < s->o.n_lab_batch; i++)
        for (int v = 0; v < FFNN_REDUCE_VARIANTS; v++)
            mod_set_status(new_lab_row(s, s->o.lab_batch[i], v), why);
}

