/*
 * kernels.c - `ffnn bench kernels`: the matmul kernel lab (the dense layers of report 000,
 * ../shared/seeds/000_*.txt, and two squares). For each dense
 * layer (batch x in -> out) the three matmuls
 *
 *   forward      z  = x W^T   M = batch, N = out, K = in
 *   weight_grad  dW = dz^T x  M = out,   N = in,  K = batch
 *   input_grad   dx = dz W    M = batch, N = in,  K = out
 *
 * run in the variants of lab/matmul.cu (naive, tiled, transposed, regblock, fused,
 * cublas; on tensor cores wmma_tf32, mma_tf32_128/_64, mma_bf16_128/_64, cublas_tf32,
 * cublas_bf16; --variants picks some). Every variant is first checked on fresh random inputs in [-1, 1]
 * (device-side generator) against the CPU reference (src/backend/cpu/dense.c, every
 * output) - or, for layers above REF_FULL_MAX multiply-adds, against REF_SAMPLES
 * outputs at random positions summed on the host in the reference's order - as
 * max |gpu - ref| / max |ref| <= TOL (ffnn_lab_check); fused also checks its epilogue
 * (relu(z + b); dW, db and W, b after SGD; dx * relu'(x)). The tensor-core variants
 * are checked per output against their precision's bound instead: |gpu - ref| <=
 * 2^-9 S (tf32) or 2^-7 S (bf16) + 1e-5 (1 + sqrt K), S = the sum of |products| of
 * that output (the same reference on |x|, |W|, |dz|): TF32 keeps 10 mantissa bits,
 * bf16 7, so each product is off by ~2^-10 / 2^-8 of its size (tests/test_fused.c
 * states the same bounds). A variant that fails is
 * reported as FAIL and not timed. Timing (ffnn_lab_time): CUDA events on the lab's
 * stream; a spin kernel keeps the GPU busy while `inner` copies of the call are queued
 * (inner: enough copies for ~200 us, at most 20), so the events time the GPU running
 * them back to back; warm-up 3 calls, then the median over the repeats of (elapsed /
 * inner). naive / tiled input_grad: dense.cu launches dx only together with dW, so
 * its time is the median of dense_backward(dW + dx) minus that variant's dW-only
 * median. GFLOP/s = 2 M N K / time; % of the ceiling of the variant's arithmetic on the
 * H200: FP32 CUDA cores 51 TFLOP/s (docs/RESULTS.md, src/backend/cuda/dense.cu: 132
 * SMs x 128 lanes x 2 FLOP per FMA at about 1.5 GHz sustained), TF32 tensor cores
 * 411 TFLOP/s (/work/shared/BENCHMARKS.md: PyTorch 8192^3), BF16 788 TFLOP/s (the
 * device notes' PyTorch 8192^3 bf16 product on random data).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lab/matmul.h"
#include "backend/cpu/cpu_ops.h"
#include "core/error.h"
#include "ffnn.h"
#include "harness.h"
#include "suites.h"

#define TOL 1e-5              /* max |gpu - ref| / max |ref| */
#define CEILING_TFLOPS 51.0   /* FP32 CUDA-core ceiling of the H200 (datasheet) */
#define CEILING_TF32 411.0    /* TF32 tensor cores, measured 8192^3 (BENCHMARKS.md) */
#define CEILING_BF16 788.0    /* BF16 tensor cores, measured 8192^3 (device notes) */
#define REF_FULL_MAX 3.0e8    /* M N K up to this: every output checked */
#define REF_SAMPLES 4096      /* else: this many outputs at random positions */
#define MAX_REPEATS 1001
#define SPIN_US 300.0
#define TARGET_US 200.0       /* inner copies per timed sample: ~this much GPU time */
#define MAX_INNER 20
#define LR 0.01f

static const char *usage =
    "usage: ffnn bench kernels [options]\n"
    "\n"
    "The matmul kernel lab: for each dense layer (batch x in -> out) its forward\n"
    "z = x W^T, weight gradient dW = dz^T x and input gradient dx = dz W, each in six\n"
    "variants side by side - naive and tiled (src/backend/cuda/dense.cu), transposed\n"
    "(operand made coalesced first, one thread per output), regblock (register-blocked\n"
    "float4 SGEMM, src/backend/cuda/gemm.cu), fused (regblock with the layer's\n"
    "epilogue: relu + bias; db + SGD; relu') and cublas (cublasSgemm, FP32). Every\n"
    "variant is checked against the CPU reference on fresh random data first (FAIL\n"
    "rows are not timed), then timed with CUDA events: median us, GFLOP/s and % of the\n"
    "51 TFLOP/s FP32 ceiling. On tensor cores (checked within 2^-9 S tf32, 2^-7 S\n"
    "bf16; % of 411 / 788 TFLOP/s): wmma_tf32, mma_tf32_* and mma_bf16_* at each\n"
    "configuration of src/backend/cuda/gemm_mma.cu (128, 64, 128w4, 128w4s4, 64w4,\n"
    "256) and at the plan's (auto: tile and K-splits), cublas_tf32, cublas_bf16.\n"
    "Writes DIR/kernels.csv and DIR/kernels_table.md.\n"
    "Needs a CUDA GPU.\n"
    "\n"
    "layers: batch 64, 256, 1024 x (784 -> 256, 256 -> 10), then 1024^3 and 4096^3\n"
    "\n"
    "options:\n"
    "  --quick       batch 64 layers and 1024^3 only, 5 repeats;\n"
    "                default --out build/bench-quick\n"
    "  --repeats N   timed samples per variant, median reported (default 20)\n"
    "  --no-big      skip the 4096^3 layer\n"
    "  --variants L  only these variants (comma-separated names, e.g.\n"
    "                mma_tf32_64,wmma_tf32,cublas_tf32); default all\n"
    "  --splits S    cut K into S chunks in every gemm.cu / gemm_mma.cu matmul\n"
    "                (split-K; default: the plan of src/backend/gemm_plan.h)\n"
    "  --layers L    these layers instead, comma-separated BATCHxINxOUT (e.g.\n"
    "                1024x128x128,1024x784x128); at most 16, each dimension\n"
    "                1..65536\n"
    "  --out DIR     where the CSV and the table go (default build/bench)\n"
    "  -h, --help    this help\n";

typedef struct layer {
    size_t batch, in, out;
} layer;

typedef struct options {
    int quick, repeats, big;
    const char *out;
    const char *variants; /* comma-separated names, NULL: all */
    unsigned mask;        /* bit v: variant v runs */
    int splits;             /* --splits, 0: the plan's                */
    const char *layer_list; /* --layers text, NULL: the default layers */
    layer custom[16];       /* --layers parsed */
    size_t n_custom;
} options;

typedef struct row {
    layer L;
    int op, variant;
    long M, N, K;
    char status[16];  /* ok | FAIL | error */
    double err;       /* max |gpu - ref| / max |ref| (NaN: not checked) */
    double us, gflops, pct;
    int inner, repeats;
    char note[160];
} row;

typedef struct kernels_run {
    ffnn_bench_run run;
    const options *o;
    char gpu_desc[320];
    int sampled_any; /* a layer was checked on sampled outputs */
} kernels_run;

#if FFNN_HAVE_CUDA

/* The layers measured: the seed's MLP layers at three batch sizes, then two squares. */
static const layer layers[] = {
    {64, 784, 256},  {64, 256, 10},     {256, 784, 256},   {256, 256, 10},
    {1024, 784, 256}, {1024, 256, 10},  {1024, 1024, 1024}, {4096, 4096, 4096},
};
enum { N_LAYERS = sizeof layers / sizeof layers[0] };

/* ------------------------------------------------------------ reference */

/* The expected values of one op: want[i] at flat output index idx[i] (idx NULL:
 * i itself), n of them. */
typedef struct reference {
    size_t n;
    size_t *idx;
    float *want;
} reference;

static void ref_free(reference *r)
{
    free(r->idx);
    free(r->want);
    memset(r, 0, sizeof *r);
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 11;
}

/* Output (r, c) of op in the reference's order (k ascending, product rounded, then
 * added: dense.c's expressions). x [B,in], W [out,in], dz [B,out]. */
static float ref_one(int op, const layer *L, const float *x, const float *W, const float *dz,
                     size_t r, size_t c)
{
    float sum = 0.0f;
    switch (op) {
    case FFNN_MM_FORWARD: /* z[r,c] = sum_k x[r,k] W[c,k] */
        for (size_t k = 0; k < L->in; k++) sum += x[r * L->in + k] * W[c * L->in + k];
        break;
    case FFNN_MM_DW: /* dW[r,c] = sum_b dz[b,r] x[b,c] */
        for (size_t b = 0; b < L->batch; b++) sum += dz[b * L->out + r] * x[b * L->in + c];
        break;
    default: /* dx[r,c] = sum_o dz[r,o] W[o,c] */
        for (size_t o = 0; o < L->out; o++) sum += dz[r * L->out + o] * W[o * L->in + c];
        break;
    }
    return sum;
}

/* The plain matmul result of op: every output through the CPU reference when the
 * layer is small enough, else REF_SAMPLES random ones. 0 on success. */
static int ref_build(kernels_run *k, int op, const layer *L, const float *x, const float *W,
                     const float *dz, reference *ref, uint64_t seed)
{
    memset(ref, 0, sizeof *ref);
    const size_t M = op == FFNN_MM_DW ? L->out : L->batch;
    const size_t N = op == FFNN_MM_FORWARD ? L->out : L->in;
    const double mnk = (double)L->batch * (double)L->in * (double)L->out;
    if (mnk <= REF_FULL_MAX) {
        ref->n = M * N;
        ref->want = malloc(ref->n * sizeof(float));
        if (ref->want == NULL) return -1;
        if (op == FFNN_MM_FORWARD) {
            ffnn_cpu_dense_forward(x, W, NULL, ref->want, L->batch, L->in, L->out);
        } else {
            float *dW = op == FFNN_MM_DW ? ref->want : malloc(L->out * L->in * sizeof(float));
            float *dx = op == FFNN_MM_DX ? ref->want : NULL;
            if (dW == NULL) return -1;
            ffnn_cpu_dense_backward(x, W, dz, dx, dW, NULL, L->batch, L->in, L->out);
            if (op == FFNN_MM_DX) free(dW);
        }
        return 0;
    }
    k->sampled_any = 1;
    ref->n = REF_SAMPLES;
    ref->idx = malloc(ref->n * sizeof(size_t));
    ref->want = malloc(ref->n * sizeof(float));
    if (ref->idx == NULL || ref->want == NULL) return -1;
    for (size_t i = 0; i < ref->n; i++) {
        const size_t r = (size_t)(lcg(&seed) % M), c = (size_t)(lcg(&seed) % N);
        ref->idx[i] = r * N + c;
        ref->want[i] = ref_one(op, L, x, W, dz, r, c);
    }
    return 0;
}

/* The host copies of a layer's inputs, for the epilogues' expected values. */
typedef struct epi_ctx {
    const layer *L;
    const float *b, *x, *W;
} epi_ctx;

/* turns the plain matmul value at flat output index `flat` into a variant's one */
typedef float (*expect_fn)(size_t flat, float want, const epi_ctx *e);

/* fused forward: relu(z + b[col]) (dense.c's sum + b, then relu) */
static float expect_forward(size_t flat, float want, const epi_ctx *e)
{
    const float v = want + e->b[flat % e->L->out];
    return v > 0.0f ? v : 0.0f;
}

/* fused input_grad: dx * relu'(x), f' through x (x > 0) */
static float expect_dx(size_t flat, float want, const epi_ctx *e)
{
    return want * (e->x[flat] > 0.0f ? 1.0f : 0.0f);
}

/* fused weight_grad's W after SGD: W - lr dW (update.c's expression) */
static float expect_sgd(size_t flat, float want, const epi_ctx *e)
{
    return e->W[flat] - LR * want;
}

/* Check got against ref (each value through expect unless NULL; tmp: ref->n floats)
 * with tolerance tol; returns its error (INFINITY on a fault) as rel ? normwise
 * relative : absolute. */
static double check(const char *what, const reference *ref, const float *got,
                    expect_fn expect, const epi_ctx *e, float *tmp, double atol, double rtol)
{
    const float *want = ref->want;
    if (expect != NULL) {
        for (size_t i = 0; i < ref->n; i++)
            tmp[i] = expect(ref->idx != NULL ? ref->idx[i] : i, ref->want[i], e);
        want = tmp;
    }
    const ffnn_lab_tolerance tol = {atol, rtol, 1.0, 0.0};
    ffnn_lab_check_result res;
    if (ffnn_lab_check(what, got, want, ref->idx, ref->n, &tol, &res) != 0) return INFINITY;
    return rtol > 0.0 ? res.max_rel : res.max_abs;
}

/* ------------------------------------------------------------ one layer */

typedef struct bufs {
    float *x, *W, *b, *dz, *C, *db, *Wp, *bp, *scratch, *dWs;
} bufs;

static void bufs_free(bufs *d)
{
    float **p = (float **)d;
    for (size_t i = 0; i < sizeof *d / sizeof(float *); i++) ffnn_lab_free(p[i]);
    memset(d, 0, sizeof *d);
}

static row *new_row(kernels_run *k, const layer *L, int op, int variant)
{
    row *r = ffnn_bench_add_row(&k->run);
    r->L = *L;
    r->op = op;
    r->variant = variant;
    r->M = (long)(op == FFNN_MM_DW ? L->out : L->batch);
    r->N = (long)(op == FFNN_MM_FORWARD ? L->out : L->in);
    r->K = (long)(op == FFNN_MM_FORWARD ? L->in : op == FFNN_MM_DW ? L->batch : L->out);
    r->err = r->us = r->gflops = r->pct = NAN;
    return r;
}

/* One variant's call, for ffnn_lab_time. */
typedef struct lab_call {
    void *lab;
    int variant;
    const ffnn_matmul_lab_args *a;
} lab_call;

static ffnn_status lab_launch(void *arg)
{
    const lab_call *c = arg;
    return ffnn_matmul_lab_run(c->lab, c->variant, c->a, NULL);
}

/* The host side of one layer: its inputs (as on the device), their reference db,
 * and buffers for the results read back. */
typedef struct host_bufs {
    float *x, *W, *b, *dz, *got, *db, *ref_db, *gotW, *tmp;
    float *ax, *aW, *adz; /* |x|, |W|, |dz|: the S reference of the tensor-core bound */
} host_bufs;

/* Check fused weight_grad's epilogue beyond dW: db, and W, b after SGD; returns the
 * largest error (INFINITY on a fault or a failed read-back). */
static double check_sgd_epilogue(const layer *L, const bufs *d, host_bufs *h,
                                 const reference *ref, const epi_ctx *e)
{
    double err = INFINITY;
    const reference rdb = {L->out, NULL, h->ref_db}, rbp = {L->out, NULL, h->tmp};
    if (ffnn_lab_download(h->db, d->db, L->out * 4) != FFNN_OK) return err;
    err = check("db", &rdb, h->db, NULL, e, h->tmp, 0.0, TOL);
    if (ffnn_lab_download(h->gotW, d->Wp, L->out * L->in * 4) != FFNN_OK) return INFINITY;
    err = fmax(err, check("W after SGD", ref, h->gotW, expect_sgd, e, h->tmp, 0.0, TOL));
    if (ffnn_lab_download(h->got, d->bp, L->out * 4) != FFNN_OK) return INFINITY;
    for (size_t o = 0; o < L->out; o++) h->tmp[o] = h->b[o] - LR * h->ref_db[o];
    return fmax(err, check("b after SGD", &rbp, h->got, NULL, e, NULL, TOL, 0.0));
}

/* TFLOP/s ceiling of variant v's arithmetic. */
static double variant_ceiling(int v)
{
    const int p = ffnn_matmul_lab_variant_precision(v);
    return p == 1 ? CEILING_TF32 : p == 2 ? CEILING_BF16 : CEILING_TFLOPS;
}

/* A tensor-core result against its bound: |got - want| <= 2^e S + 1e-5 (1 + sqrt K)
 * per output (e = -9 tf32, -7 bf16; S from sref at the same outputs); prints the
 * first faults; returns the largest |got - want| / S (INFINITY on a fault). */
static double check_scaled(const char *what, const reference *ref, const reference *sref,
                           const float *got, int precision, long K)
{
    const double frac = ldexp(1.0, precision == 2 ? -7 : -9);
    const double atol = 1e-5 * (1.0 + sqrt((double)K));
    double worst = 0.0;
    size_t bad = 0;
    for (size_t i = 0; i < ref->n; i++) {
        const double g = got[ref->idx != NULL ? ref->idx[i] : i];
        const double err = fabs(g - (double)ref->want[i]), S = (double)sref->want[i];
        if (!(err <= frac * S + atol)) {
            if (bad++ < 10)
                fprintf(stderr, "    %s[%zu]: got %.9g, want %.9g (S %.4g)\n", what,
                        ref->idx != NULL ? ref->idx[i] : i, g, (double)ref->want[i], S);
        } else if (S > 0.0 && err / S > worst) {
            worst = err / S;
        }
    }
    return bad ? INFINITY : worst;
}

/* Check then time variant v of op (its row r); dw_us: the variants' dW-only times. */
static void run_variant(kernels_run *k, void *lab, const layer *L, const bufs *d,
                        host_bufs *h, ffnn_matmul_lab_args *a, const reference *ref,
                        const reference *sref, int v, double *dw_us, row *r)
{
    const int op = a->op, fused = v == FFNN_MM_FUSED;
    const epi_ctx ectx = {L, h->b, h->x, h->W};
    const size_t nout = (size_t)r->M * (size_t)r->N;
    void *stream = ffnn_matmul_lab_stream(lab);
    if (v == FFNN_MM_REGBLOCK || fused)
        snprintf(r->note, sizeof r->note, "tile %s",
                 ffnn_matmul_lab_config(lab, op, L->batch, L->in, L->out));
    if (v == FFNN_MM_TRANSPOSED)
        snprintf(r->note, sizeof r->note, "%s",
                 op == FFNN_MM_FORWARD ? "W transposed first (time included)"
                                       : "operands already coalesced: no transpose");
    /* check: poisoned outputs, fresh SGD targets, one call. The lab's stream is
     * non-blocking: the synchronous copies and memsets (legacy stream) do not wait
     * for it, so sync it around the call */
    int with_dw = 0;
    ffnn_status st = ffnn_lab_stream_sync(stream);
    if (st == FFNN_OK) st = ffnn_lab_memset(d->C, 0xFF, nout * 4);
    if (st == FFNN_OK) st = ffnn_lab_memset(d->db, 0xFF, L->out * 4);
    if (st == FFNN_OK) st = ffnn_lab_upload(d->Wp, h->W, L->out * L->in * 4);
    if (st == FFNN_OK) st = ffnn_lab_upload(d->bp, h->b, L->out * 4);
    if (st == FFNN_OK) st = ffnn_matmul_lab_run(lab, v, a, &with_dw);
    if (st == FFNN_OK) st = ffnn_lab_stream_sync(stream);
    if (st == FFNN_OK) st = ffnn_lab_download(h->got, d->C, nout * 4);
    if (st != FFNN_OK) {
        snprintf(r->status, sizeof r->status, "error");
        snprintf(r->note, sizeof r->note, "%.150s", ffnn_last_error());
        fprintf(stderr, "    %s: %s\n", ffnn_matmul_lab_variant_name(v), r->note);
        return;
    }
    const expect_fn expect = fused && op == FFNN_MM_FORWARD ? expect_forward
                             : fused && op == FFNN_MM_DX    ? expect_dx
                                                            : NULL;
    const int prec = ffnn_matmul_lab_variant_precision(v);
    double err;
    if (prec != 0) { /* tensor cores: per output within 2^-9 / 2^-7 S (+ atol) */
        err = check_scaled(ffnn_matmul_lab_op_name(op), ref, sref, h->got, prec, r->K);
    } else {
        err = check(ffnn_matmul_lab_op_name(op), ref, h->got, expect, &ectx, h->tmp, 0.0, TOL);
        if (fused && op == FFNN_MM_DW) err = fmax(err, check_sgd_epilogue(L, d, h, ref, &ectx));
    }
    r->err = err;
    const double bound = prec == 0 ? TOL : ldexp(1.0, prec == 2 ? -7 : -9);
    if (!(err <= bound)) {
        snprintf(r->status, sizeof r->status, "FAIL");
        fprintf(stderr, "    %s: FAIL, error %.3g > %.3g\n", ffnn_matmul_lab_variant_name(v),
                err, bound);
        return;
    }
    /* time */
    lab_call call = {lab, v, a};
    const ffnn_lab_timing timing = {3, k->o->repeats, 0, TARGET_US, MAX_INNER, SPIN_US};
    ffnn_lab_times t;
    if (ffnn_lab_time(stream, lab_launch, &call, &timing, &t) != FFNN_OK) {
        snprintf(r->status, sizeof r->status, "error");
        snprintf(r->note, sizeof r->note, "%.150s", ffnn_last_error());
        return;
    }
    r->inner = t.inner;
    r->repeats = k->o->repeats;
    r->us = t.median_us;
    if (op == FFNN_MM_DW) dw_us[v] = t.median_us;
    if (with_dw) {
        r->us = t.median_us - dw_us[v];
        snprintf(r->note, sizeof r->note,
                 "dense_backward(dW+dx) %.1f us minus its dW-only %.1f us", t.median_us,
                 dw_us[v]);
    }
    const double flop = 2.0 * (double)r->M * (double)r->N * (double)r->K;
    r->gflops = ffnn_lab_rate(flop, r->us * 1e3); /* FLOP per ns = GFLOP/s */
    r->pct = ffnn_lab_pct(r->gflops, variant_ceiling(v) * 1e3);
    fprintf(stderr, "    %-12s %10.2f us %9.1f GFLOP/s %5.1f%%  err %.2g\n",
            ffnn_matmul_lab_variant_name(v), r->us, r->gflops, r->pct, err);
}

/* Device buffers of layer L filled with fresh random values, read back into h. */
static ffnn_status layer_setup(const layer *L, uint64_t seed, bufs *d, host_bufs *h)
{
    const size_t nx = L->batch * L->in, nw = L->out * L->in, nz = L->batch * L->out;
    size_t nc = nx > nw ? nx : nw;
    if (nz > nc) nc = nz;
    h->x = malloc(nx * sizeof(float)), h->W = malloc(nw * sizeof(float));
    h->b = malloc(L->out * sizeof(float)), h->dz = malloc(nz * sizeof(float));
    h->got = malloc(nc * sizeof(float)), h->db = malloc(L->out * sizeof(float));
    h->ref_db = malloc(L->out * sizeof(float)), h->gotW = malloc(nw * sizeof(float));
    h->tmp = malloc((nc > REF_SAMPLES ? nc : REF_SAMPLES) * sizeof(float));
    if (!h->x || !h->W || !h->b || !h->dz || !h->got || !h->db || !h->ref_db || !h->gotW ||
        !h->tmp)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of host memory");
    float **const dst[] = {&d->x, &d->W, &d->b, &d->dz, &d->C, &d->db, &d->Wp, &d->bp,
                           &d->scratch, &d->dWs};
    const size_t n[] = {nx, nw, L->out, nz, nc, L->out, nw, L->out, nw, nw};
    ffnn_status st = FFNN_OK;
    for (size_t i = 0; i < sizeof n / sizeof n[0] && st == FFNN_OK; i++)
        st = ffnn_lab_malloc((void **)dst[i], n[i] * 4);
    /* x, W, b, dz: the first four, random in [-1, 1], read back */
    float *const host[] = {h->x, h->W, h->b, h->dz};
    for (size_t i = 0; i < 4 && st == FFNN_OK; i++) {
        st = ffnn_lab_fill_uniform(*dst[i], n[i], seed * 4 + i, -1.0f, 1.0f);
        if (st == FFNN_OK) st = ffnn_lab_download(host[i], *dst[i], n[i] * 4);
    }
    h->ax = malloc(nx * sizeof(float)), h->aW = malloc(nw * sizeof(float));
    h->adz = malloc(nz * sizeof(float));
    if (st == FFNN_OK && (!h->ax || !h->aW || !h->adz))
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of host memory");
    if (st == FFNN_OK) {
        for (size_t i = 0; i < nx; i++) h->ax[i] = fabsf(h->x[i]);
        for (size_t i = 0; i < nw; i++) h->aW[i] = fabsf(h->W[i]);
        for (size_t i = 0; i < nz; i++) h->adz[i] = fabsf(h->dz[i]);
    }
    for (size_t o = 0; o < L->out; o++) { /* db: dense.c's order */
        float s = 0.0f;
        for (size_t b = 0; b < L->batch; b++) s += h->dz[b * L->out + o];
        h->ref_db[o] = s;
    }
    return st;
}

/* Check and time every variant of every op of layer L; 0, or -1 on an error that
 * stops the suite (memory). */
static int run_layer(kernels_run *k, void *lab, const layer *L, uint64_t seed)
{
    bufs d;
    host_bufs h;
    memset(&d, 0, sizeof d);
    memset(&h, 0, sizeof h);
    int rc = -1;
    if (layer_setup(L, seed, &d, &h) != FFNN_OK) {
        fprintf(stderr, "%s: %s\n", k->run.prog, ffnn_last_error());
        goto done;
    }
    ffnn_matmul_lab_args a;
    memset(&a, 0, sizeof a);
    a.batch = L->batch, a.in = L->in, a.out = L->out;
    a.x = d.x, a.W = d.W, a.b = d.b, a.dz = d.dz, a.C = d.C, a.db = d.db;
    a.Wp = d.Wp, a.bp = d.bp, a.lr = LR, a.scratch = d.scratch, a.dW_scratch = d.dWs;
    double dw_us[FFNN_MM_VARIANTS];
    for (int v = 0; v < FFNN_MM_VARIANTS; v++) dw_us[v] = NAN;

    for (int op = 0; op < FFNN_MM_OPS; op++) {
        a.op = op;
        reference ref;
        const double t0 = ffnn_bench_now_s();
        if (ref_build(k, op, L, h.x, h.W, h.dz, &ref, seed * 7 + (uint64_t)op) != 0) {
            ref_free(&ref);
            goto done;
        }
        /* S = sum |products| at the same outputs (same seed: same samples), for the
         * tensor-core variants' bound */
        reference sref;
        memset(&sref, 0, sizeof sref);
        if ((k->o->mask >> FFNN_MM_WMMA_TF32) != 0 &&
            ref_build(k, op, L, h.ax, h.aW, h.adz, &sref, seed * 7 + (uint64_t)op) != 0) {
            ref_free(&ref);
            ref_free(&sref);
            goto done;
        }
        fprintf(stderr, "  %zux%zu->%zu %s: reference %s (%.2f s)\n", L->batch, L->in, L->out,
                ffnn_matmul_lab_op_name(op), ref.idx ? "sampled" : "full",
                ffnn_bench_now_s() - t0);
        for (int v = 0; v < FFNN_MM_VARIANTS; v++)
            if (k->o->mask & (1u << v))
                run_variant(k, lab, L, &d, &h, &a, &ref, &sref, v, dw_us, new_row(k, L, op, v));
        ref_free(&ref);
        ref_free(&sref);
    }
    rc = 0;
done:
    bufs_free(&d);
    float **p = (float **)&h;
    for (size_t i = 0; i < sizeof h / sizeof(float *); i++) free(p[i]);
    return rc;
}

/* ------------------------------------------------------------ output */

/* The CSV file's columns (the harness adds the last, "date"). */
static const char *csv_header =
    "batch,in,out,op,M,N,K,variant,status,max_rel_err,us_median,gflops,pct_fp32_ceiling,"
    "inner,repeats,note,device";

static void csv_row(FILE *f, const void *vr, const void *vk)
{
    const kernels_run *k = vk;
    const row *r = vr;
    fprintf(f, "%zu,%zu,%zu,%s,%ld,%ld,%ld,%s,%s,", r->L.batch, r->L.in, r->L.out,
            ffnn_matmul_lab_op_name(r->op), r->M, r->N, r->K,
            ffnn_matmul_lab_variant_name(r->variant), r->status);
    FFNN_BENCH_CSV_NUMS(f, r->err, r->us, r->gflops, r->pct);
    fprintf(f, "%d,%d,", r->inner, r->repeats);
    ffnn_bench_csv_field(f, r->note);
    fputc(',', f);
    ffnn_bench_csv_field(f, k->gpu_desc);
}

static void write_table(FILE *f, const void *vk)
{
    const kernels_run *k = vk;
    ffnn_bench_md_heading(f, &k->run, "Kernel lab: the matmuls of a dense layer, side by side");
    fprintf(f, " GPU: %s.\n\n", k->gpu_desc);
    fprintf(f, "forward z = x W^T (M = batch, N = out, K = in); weight_grad dW = dz^T x "
               "(M = out, N = in, K = batch); input_grad dx = dz W (M = batch, N = in, "
               "K = out). Each variant was checked against the CPU reference on fresh "
               "random data first (max |gpu - ref| / max |ref| <= %.0e%s); fused includes "
               "its epilogue (forward: + b, relu; weight_grad: db and SGD on W, b; "
               "input_grad: * relu'(x)). Times: median of the repeats, CUDA events around "
               "back-to-back copies queued behind a spin kernel; %% of the %.0f TFLOP/s FP32 "
               "ceiling (the project's figure, ~1.5 GHz sustained; at the 1.98 GHz maximum "
               "SM clock the FP32 peak is 67 TFLOP/s, so a kernel can show > 100%%). "
               "naive/tiled input_grad: dense_backward(dW + dx) minus its dW-only "
               "time. Tensor-core variants (wmma_tf32, mma_*, cublas_tf32/bf16): plain "
               "matmuls, each output within 2^-9 S (tf32) or 2^-7 S (bf16) + 1e-5 (1 + "
               "sqrt K), S = sum of |products| (max rel err column: the largest "
               "|err| / S); %% of the %.0f (TF32) / %.0f (BF16) TFLOP/s ceilings.\n\n",
            TOL, k->sampled_any ? "; layers above 3e8 multiply-adds: 4096 sampled outputs" : "",
            CEILING_TFLOPS, CEILING_TF32, CEILING_BF16);
    /* summary: one line per (layer, op), us and % ceiling per variant */
    fprintf(f, "| layer | op | M x N x K |");
    size_t nv = 0; /* the variants run, in order: one group of rows per (layer, op) */
    for (int v = 0; v < FFNN_MM_VARIANTS; v++)
        if (k->o->mask & (1u << v)) {
            fprintf(f, " %s us (%% ceil) |", ffnn_matmul_lab_variant_name(v));
            nv++;
        }
    fprintf(f, "\n|---|---|---|");
    for (size_t v = 0; v < nv; v++) fprintf(f, "---:|");
    fputc('\n', f);
    for (size_t i = 0; nv > 0 && i < k->run.n_rows; i += nv) {
        const row *r0 = FFNN_BENCH_ROW(&k->run, const row, i);
        fprintf(f, "| %zux%zu->%zu | %s | %ldx%ldx%ld |", r0->L.batch, r0->L.in, r0->L.out,
                ffnn_matmul_lab_op_name(r0->op), r0->M, r0->N, r0->K);
        for (size_t j = i; j < i + nv && j < k->run.n_rows; j++) {
            const row *r = FFNN_BENCH_ROW(&k->run, const row, j);
            if (strcmp(r->status, "ok") != 0)
                fprintf(f, " **%s** |", r->status);
            else
                fprintf(f, " %.1f (%.1f%%) |", r->us, r->pct);
        }
        fputc('\n', f);
    }
    fprintf(f, "\n### All rows\n\n");
    fprintf(f, "| layer | op | variant | status | max rel err | us | GFLOP/s | %% ceiling | "
               "inner x repeats | note |\n");
    fprintf(f, "|---|---|---|---|---:|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < k->run.n_rows; i++) {
        const row *r = FFNN_BENCH_ROW(&k->run, const row, i);
        fprintf(f, "| %zux%zu->%zu | %s | %s | %s | %.2g | %.2f | %.1f | %.2f | %dx%d | %s |\n",
                r->L.batch, r->L.in, r->L.out, ffnn_matmul_lab_op_name(r->op),
                ffnn_matmul_lab_variant_name(r->variant), r->status, r->err, r->us, r->gflops,
                r->pct, r->inner, r->repeats, r->note);
    }
}

/* The suite once the options are read: the layers of o on the GPU. */
static int run_suite(kernels_run *k)
{
    const options *o = k->o;
    ffnn_lab_gpu_info gi;
    if (ffnn_cuda_device_count() < 1 || ffnn_lab_gpu_query(&gi) != FFNN_OK) {
        fprintf(stderr, "%s: no CUDA GPU found; the kernel lab needs one\n", k->run.prog);
        return 1;
    }
    snprintf(k->gpu_desc, sizeof k->gpu_desc, "%s (sm_%d%d, %d SMs)", gi.name, gi.cc_major,
             gi.cc_minor, gi.sm_count);
    void *lab = NULL;
    if (ffnn_matmul_lab_create(&lab) != FFNN_OK) {
        fprintf(stderr, "%s: %s\n", k->run.prog, ffnn_last_error());
        return 1;
    }
    ffnn_matmul_lab_set_splits(lab, o->splits);
    int rc = 0;
    uint64_t seed = 1000; /* one per layer measured */
    const layer *list = o->n_custom > 0 ? o->custom : layers;
    const size_t n_list = o->n_custom > 0 ? o->n_custom : N_LAYERS;
    for (size_t i = 0; i < n_list && rc == 0; i++) {
        const layer *L = &list[i];
        const int square = L->in == L->out && L->in >= 1024;
        if (o->n_custom == 0 &&
            ((o->quick && L->batch != 64 && !square) || (L->in == 4096 && (o->quick || !o->big))))
            continue;
        fprintf(stderr, "layer %zux%zu->%zu\n", L->batch, L->in, L->out);
        if (run_layer(k, lab, L, seed++) != 0) rc = 1;
    }
    ffnn_matmul_lab_destroy(lab);
    for (size_t i = 0; i < k->run.n_rows; i++)
        if (!ffnn_bench_ok(ffnn_bench_row_status(&k->run, i))) rc = 1;
    if (ffnn_bench_save(&k->run, o->out, csv_header, csv_row, write_table, k, rc,
                        "SOME VARIANTS FAILED") != 0)
        rc = 1;
    return rc;
}

#endif /* FFNN_HAVE_CUDA */

/* --variants: comma-separated variant names -> *mask (NULL: all). 0, or -1 after
 * printing the unknown name and the known ones. */
static int parse_variants(const char *prog, const char *list, unsigned *mask)
{
    *mask = 0;
    if (list == NULL) {
        *mask = (1u << FFNN_MM_VARIANTS) - 1u;
        return 0;
    }
    const char *p = list;
    while (*p != 0) {
        const char *end = strchr(p, ',');
        const size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        int found = -1;
        for (int v = 0; v < FFNN_MM_VARIANTS; v++) {
            const char *name = ffnn_matmul_lab_variant_name(v);
            if (strlen(name) == len && strncmp(name, p, len) == 0) found = v;
        }
        if (found < 0) {
            fprintf(stderr, "%s: --variants: unknown variant '%.*s' at character %zu; known:",
                    prog, (int)len, p, (size_t)(p - list) + 1);
            for (int v = 0; v < FFNN_MM_VARIANTS; v++)
                fprintf(stderr, " %s", ffnn_matmul_lab_variant_name(v));
            fputc('\n', stderr);
            return -1;
        }
        *mask |= 1u << found;
        p += len;
        if (*p == ',') p++;
    }
    if (*mask == 0) {
        fprintf(stderr, "%s: --variants: no variant named\n", prog);
        return -1;
    }
    return 0;
}

/* --layers: comma-separated BATCHxINxOUT -> o->custom. 0, or -1 after printing
 * what is wrong and where. */
static int parse_layers(const char *prog, options *o)
{
    o->n_custom = 0;
    if (o->layer_list == NULL) return 0;
    const char *p = o->layer_list;
    while (*p != 0) {
        unsigned long d[3];
        const char *start = p;
        for (int j = 0; j < 3; j++) {
            char *end = NULL;
            d[j] = (*p >= '0' && *p <= '9') ? strtoul(p, &end, 10) : 0;
            if (end == NULL || d[j] < 1 || d[j] > 65536 ||
                (j < 2 ? *end != 'x' : (*end != ',' && *end != 0))) {
                fprintf(stderr,
                        "%s: --layers: expected BATCHxINxOUT (each 1..65536) at character "
                        "%zu of '%s'\n",
                        prog, (size_t)(start - o->layer_list) + 1, o->layer_list);
                return -1;
            }
            p = end + (j < 2 || *end == ',');
        }
        if (o->n_custom == sizeof o->custom / sizeof o->custom[0]) {
            fprintf(stderr, "%s: --layers: at most %zu layers\n", prog,
                    sizeof o->custom / sizeof o->custom[0]);
            return -1;
        }
        o->custom[o->n_custom++] = (layer){d[0], d[1], d[2]};
    }
    if (o->n_custom == 0) {
        fprintf(stderr, "%s: --layers: no layer named\n", prog);
        return -1;
    }
    return 0;
}

int ffnn_bench_kernels(int argc, char **argv)
{
    options o;
    memset(&o, 0, sizeof o);
    o.repeats = -1;
    o.big = 1;
    kernels_run k;
    memset(&k, 0, sizeof k);
    ffnn_bench_begin(&k.run, "kernels", sizeof(row), offsetof(row, status));
    k.o = &o;
    const ffnn_bench_option opts[] = {
        FFNN_BENCH_OPT_FLAG("quick", &o.quick, 1),
        FFNN_BENCH_OPT_TEXT("out", &o.out),
        FFNN_BENCH_OPT_INT("repeats", &o.repeats, 1, MAX_REPEATS),
        FFNN_BENCH_OPT_FLAG("no-big", &o.big, 0),
        FFNN_BENCH_OPT_TEXT("variants", &o.variants),
        FFNN_BENCH_OPT_TEXT("layers", &o.layer_list),
        FFNN_BENCH_OPT_INT("splits", &o.splits, 0, 16),
        FFNN_BENCH_OPT_END,
    };
    const int parsed = ffnn_bench_parse_options(&k.run, usage, opts, argc, argv);
    if (parsed != 0) return parsed == 1 ? 0 : 2;
    if (parse_variants(k.run.prog, o.variants, &o.mask) != 0) return 2;
    if (parse_layers(k.run.prog, &o) != 0) return 2;
    if (o.repeats < 0) o.repeats = o.quick ? 5 : 20;
    if (o.out == NULL) o.out = o.quick ? "build/bench-quick" : "build/bench";
#if FFNN_HAVE_CUDA
    const int rc = run_suite(&k);
#else
    fprintf(stderr, "%s: this build has no CUDA (nvcc was not found); the kernel lab needs a "
                    "CUDA GPU\n", k.run.prog);
    const int rc = 1;
#endif
    ffnn_bench_end(&k.run);
    return rc;
}
