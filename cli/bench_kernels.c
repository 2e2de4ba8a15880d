/*
 * bench_kernels.c - `ffnn bench kernels`: the matmul kernel lab. For each dense
 * layer (batch x in -> out) the three matmuls
 *
 *   forward      z  = x W^T   M = batch, N = out, K = in
 *   weight_grad  dW = dz^T x  M = out,   N = in,  K = batch
 *   input_grad   dx = dz W    M = batch, N = in,  K = out
 *
 * run in six variants (src/cuda/matmul_lab.cu: naive, tiled, transposed, regblock,
 * fused, cublas). Every variant is first checked on fresh random inputs in [-1, 1]
 * (device-side generator) against the CPU reference (src/cpu/dense.c, every
 * output) - or, for layers above REF_FULL_MAX multiply-adds, against REF_SAMPLES
 * outputs at random positions summed on the host in the reference's order - as
 * max |gpu - ref| / max |ref| <= TOL; fused also checks its epilogue (relu(z + b);
 * dW, db and W, b after SGD; dx * relu'(x)). A variant that fails is reported as
 * FAIL and not timed. Timing: CUDA events on the lab's stream; a spin kernel keeps
 * the GPU busy while `inner` copies of the call are queued (inner: enough copies
 * for ~200 us, at most 20), so the events time the GPU running them back to back;
 * warm-up 3 calls, then the median over the repeats of (elapsed / inner).
 * naive / tiled input_grad: dense.cu launches dx only together with dW, so its time
 * is the median of dense_backward(dW + dx) minus that variant's dW-only median.
 * GFLOP/s = 2 M N K / time; % of the project's FP32 CUDA-core ceiling of the H200,
 * 51 TFLOP/s (docs/RESULTS.md, src/cuda/dense.cu: 132 SMs x 128 lanes x 2 FLOP per
 * FMA at about 1.5 GHz sustained).
 */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_kernels.h"
#include "bench_util.h"
#include "backend/cpu/cpu_ops.h"
#include "core/error.h"
#include "ffnn.h"

#define TOL 1e-5              /* max |gpu - ref| / max |ref| */
#define CEILING_TFLOPS 51.0   /* FP32 CUDA-core ceiling of the H200 (datasheet) */
#define REF_FULL_MAX 3.0e8    /* M N K up to this: every output checked */
#define REF_SAMPLES 4096      /* else: this many outputs at random positions */
#define MAX_REPEATS 1001
#define MAX_LAYERS 16
#define SPIN_US 300.0
#define TARGET_US 200.0       /* inner copies per timed sample: ~this much GPU time */
#define MAX_INNER 20
#define LR 0.01f

const char *ffnn_bench_kernels_usage =
    "usage: ffnn bench kernels [options]\n"
    "\n"
    "The matmul kernel lab: for each dense layer (batch x in -> out) its forward\n"
    "z = x W^T, weight gradient dW = dz^T x and input gradient dx = dz W, each in six\n"
    "variants side by side - naive and tiled (src/cuda/dense.cu), transposed (operand\n"
    "made coalesced first, one thread per output), regblock (register-blocked float4\n"
    "SGEMM, src/cuda/gemm.cu), fused (regblock with the layer's epilogue: relu + bias;\n"
    "db + SGD; relu') and cublas (cublasSgemm, FP32). Every variant is checked against\n"
    "the CPU reference on fresh random data first (FAIL rows are not timed), then\n"
    "timed with CUDA events: median us, GFLOP/s and % of the 51 TFLOP/s FP32 ceiling.\n"
    "Writes DIR/kernels.csv and DIR/kernels_table.md. Needs a CUDA GPU.\n"
    "\n"
    "layers: batch 64, 256, 1024 x (784 -> 256, 256 -> 10), then 1024^3 and 4096^3\n"
    "\n"
    "options:\n"
    "  --quick       batch 64 layers and 1024^3 only, 5 repeats;\n"
    "                default --out build/bench-quick\n"
    "  --repeats N   timed samples per variant, median reported (default 20)\n"
    "  --no-big      skip the 4096^3 layer\n"
    "  --out DIR     where the CSV and the table go (default bench/results)\n"
    "  -h, --help    this help\n";

typedef struct layer {
    size_t batch, in, out;
} layer;

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

static row rows[MAX_LAYERS * FFNN_MM_OPS * FFNN_MM_VARIANTS];
static size_t n_rows;
static char date_utc[32], command_line[512], gpu_desc[320];
static int sampled_any;

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

/* The plain matmul result of op: every output through src/cpu/dense.c when the
 * layer is small enough, else REF_SAMPLES random ones. 0 on success. */
static int ref_build(int op, const layer *L, const float *x, const float *W, const float *dz,
                     reference *ref, uint64_t seed)
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
    sampled_any = 1;
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

/* max |got[idx] - want| / max |want| over the reference's outputs; expect(i, want)
 * turns the plain matmul value into the variant's expected one (NULL: itself). */
typedef float (*expect_fn)(size_t flat, float want, const void *ctx);

static double ref_error(const reference *ref, const float *got, expect_fn expect,
                        const void *ctx)
{
    double worst = 0.0, scale = 0.0;
    for (size_t i = 0; i < ref->n; i++) {
        const size_t flat = ref->idx != NULL ? ref->idx[i] : i;
        const float w = expect != NULL ? expect(flat, ref->want[i], ctx) : ref->want[i];
        const double d = fabs((double)got[flat] - (double)w);
        if (d != d) return INFINITY; /* NaN: an unwritten or broken output */
        if (d > worst) worst = d;
        if (fabs((double)w) > scale) scale = fabs((double)w);
    }
    return scale > 0.0 ? worst / scale : worst;
}

typedef struct epi_ctx {
    const layer *L;
    const float *b, *x, *W;
} epi_ctx;

/* fused forward: relu(z + b[col]) (dense.c's sum + b, then relu) */
static float expect_forward(size_t flat, float want, const void *vctx)
{
    const epi_ctx *e = vctx;
    const float v = want + e->b[flat % e->L->out];
    return v > 0.0f ? v : 0.0f;
}

/* fused input_grad: dx * relu'(x), f' through x (x > 0) */
static float expect_dx(size_t flat, float want, const void *vctx)
{
    const epi_ctx *e = vctx;
    return want * (e->x[flat] > 0.0f ? 1.0f : 0.0f);
}

/* fused weight_grad's W after SGD: W - lr dW (update.c's expression) */
static float expect_sgd(size_t flat, float want, const void *vctx)
{
    const epi_ctx *e = vctx;
    return e->W[flat] - LR * want;
}

/* ------------------------------------------------------------ timing */

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median microseconds of one call (run `inner` times between two events after a
 * spin), over `repeats` samples; -1 on error (message in ffnn_last_error). */
static double time_call(void *lab, int variant, const ffnn_matmul_lab_args *a, int repeats,
                        int *inner_out)
{
    void *stream = ffnn_matmul_lab_stream(lab);
    void *e0 = NULL, *e1 = NULL;
    double *samples = malloc((size_t)repeats * sizeof(double));
    double result = -1.0;
    if (samples == NULL || ffnn_bench_event_create(&e0) != FFNN_OK ||
        ffnn_bench_event_create(&e1) != FFNN_OK)
        goto done;
    for (int w = 0; w < 3; w++) /* warm-up */
        if (ffnn_matmul_lab_run(lab, variant, a, NULL) != FFNN_OK) goto done;
    /* one call alone, to size inner */
    float ms = 0.0f;
    if (ffnn_bench_event_record(e0, stream) != FFNN_OK ||
        ffnn_matmul_lab_run(lab, variant, a, NULL) != FFNN_OK ||
        ffnn_bench_event_record(e1, stream) != FFNN_OK ||
        ffnn_bench_event_elapsed_ms(e0, e1, &ms) != FFNN_OK)
        goto done;
    int inner = (int)ceil(TARGET_US / fmax(1e3 * (double)ms, 1.0));
    if (inner < 1) inner = 1;
    if (inner > MAX_INNER) inner = MAX_INNER;
    for (int rep = 0; rep < repeats; rep++) {
        if (inner > 1 && ffnn_bench_gpu_spin(stream, SPIN_US) != FFNN_OK) goto done;
        if (ffnn_bench_event_record(e0, stream) != FFNN_OK) goto done;
        for (int i = 0; i < inner; i++)
            if (ffnn_matmul_lab_run(lab, variant, a, NULL) != FFNN_OK) goto done;
        if (ffnn_bench_event_record(e1, stream) != FFNN_OK ||
            ffnn_bench_event_elapsed_ms(e0, e1, &ms) != FFNN_OK)
            goto done;
        samples[rep] = 1e3 * (double)ms / inner;
    }
    qsort(samples, (size_t)repeats, sizeof(double), cmp_double);
    result = repeats % 2 ? samples[repeats / 2]
                         : 0.5 * (samples[repeats / 2 - 1] + samples[repeats / 2]);
    *inner_out = inner;
done:
    ffnn_bench_event_destroy(e0);
    ffnn_bench_event_destroy(e1);
    free(samples);
    return result;
}

/* ------------------------------------------------------------ one layer */

typedef struct bufs {
    float *x, *W, *b, *dz, *C, *db, *Wp, *bp, *scratch, *dWs;
} bufs;

static void bufs_free(bufs *d)
{
    float **p = (float **)d;
    for (size_t i = 0; i < sizeof *d / sizeof(float *); i++) ffnn_bench_free(p[i]);
    memset(d, 0, sizeof *d);
}

static row *new_row(const layer *L, int op, int variant)
{
    row *r = &rows[n_rows++];
    memset(r, 0, sizeof *r);
    r->L = *L;
    r->op = op;
    r->variant = variant;
    r->M = (long)(op == FFNN_MM_DW ? L->out : L->batch);
    r->N = (long)(op == FFNN_MM_FORWARD ? L->out : L->in);
    r->K = (long)(op == FFNN_MM_FORWARD ? L->in : op == FFNN_MM_DW ? L->batch : L->out);
    r->err = r->us = r->gflops = r->pct = NAN;
    return r;
}

/* Check and time every variant of every op of layer L; 0, or -1 on an error that
 * stops the suite (memory). */
static int run_layer(void *lab, const layer *L, int repeats, uint64_t seed)
{
    const size_t nx = L->batch * L->in, nw = L->out * L->in, nz = L->batch * L->out;
    size_t nc = nx > nw ? nx : nw;
    if (nz > nc) nc = nz;
    bufs d;
    memset(&d, 0, sizeof d);
    float *hx = malloc(nx * sizeof(float)), *hW = malloc(nw * sizeof(float));
    float *hb = malloc(L->out * sizeof(float)), *hdz = malloc(nz * sizeof(float));
    float *got = malloc(nc * sizeof(float)), *hdb = malloc(L->out * sizeof(float));
    float *ref_db = malloc(L->out * sizeof(float)), *gotW = malloc(nw * sizeof(float));
    int rc = -1;
    if (!hx || !hW || !hb || !hdz || !got || !hdb || !ref_db || !gotW) goto done;
    if (ffnn_bench_malloc((void **)&d.x, nx * 4) != FFNN_OK ||
        ffnn_bench_malloc((void **)&d.W, nw * 4) != FFNN_OK ||
        ffnn_bench_malloc((void **)&d.b, L->out * 4) != FFNN_OK ||
        ffnn_bench_malloc((void **)&d.dz, nz * 4) != FFNN_OK ||
        ffnn_bench_malloc((void **)&d.C, nc * 4) != FFNN_OK ||
        ffnn_bench_malloc((void **)&d.db, L->out * 4) != FFNN_OK ||
        ffnn_bench_malloc((void **)&d.Wp, nw * 4) != FFNN_OK ||
        ffnn_bench_malloc((void **)&d.bp, L->out * 4) != FFNN_OK ||
        ffnn_bench_malloc((void **)&d.scratch, nw * 4) != FFNN_OK ||
        ffnn_bench_malloc((void **)&d.dWs, nw * 4) != FFNN_OK) {
        fprintf(stderr, "ffnn bench kernels: %s\n", ffnn_last_error());
        goto done;
    }
    if (ffnn_bench_fill_uniform(d.x, nx, seed * 4 + 0, -1.0f, 1.0f) != FFNN_OK ||
        ffnn_bench_fill_uniform(d.W, nw, seed * 4 + 1, -1.0f, 1.0f) != FFNN_OK ||
        ffnn_bench_fill_uniform(d.b, L->out, seed * 4 + 2, -1.0f, 1.0f) != FFNN_OK ||
        ffnn_bench_fill_uniform(d.dz, nz, seed * 4 + 3, -1.0f, 1.0f) != FFNN_OK ||
        ffnn_bench_download(hx, d.x, nx * 4) != FFNN_OK ||
        ffnn_bench_download(hW, d.W, nw * 4) != FFNN_OK ||
        ffnn_bench_download(hb, d.b, L->out * 4) != FFNN_OK ||
        ffnn_bench_download(hdz, d.dz, nz * 4) != FFNN_OK) {
        fprintf(stderr, "ffnn bench kernels: %s\n", ffnn_last_error());
        goto done;
    }
    for (size_t o = 0; o < L->out; o++) { /* db: dense.c's order */
        float s = 0.0f;
        for (size_t b = 0; b < L->batch; b++) s += hdz[b * L->out + o];
        ref_db[o] = s;
    }

    ffnn_matmul_lab_args a;
    memset(&a, 0, sizeof a);
    a.batch = L->batch, a.in = L->in, a.out = L->out;
    a.x = d.x, a.W = d.W, a.b = d.b, a.dz = d.dz, a.C = d.C, a.db = d.db;
    a.Wp = d.Wp, a.bp = d.bp, a.lr = LR, a.scratch = d.scratch, a.dW_scratch = d.dWs;
    const epi_ctx ectx = {L, hb, hx, hW};
    void *stream = ffnn_matmul_lab_stream(lab);
    double dw_us[FFNN_MM_VARIANTS];
    for (int v = 0; v < FFNN_MM_VARIANTS; v++) dw_us[v] = NAN;

    for (int op = 0; op < FFNN_MM_OPS; op++) {
        a.op = op;
        reference ref;
        const double t0 = ffnn_bench_now_s();
        if (ref_build(op, L, hx, hW, hdz, &ref, seed * 7 + (uint64_t)op) != 0) {
            ref_free(&ref);
            goto done;
        }
        fprintf(stderr, "  %zux%zu->%zu %s: reference %s (%.2f s)\n", L->batch, L->in, L->out,
                ffnn_matmul_lab_op_name(op), ref.idx ? "sampled" : "full",
                ffnn_bench_now_s() - t0);
        const size_t nout = op == FFNN_MM_FORWARD ? nz : op == FFNN_MM_DW ? nw : nx;
        for (int v = 0; v < FFNN_MM_VARIANTS; v++) {
            row *r = new_row(L, op, v);
            snprintf(r->status, sizeof r->status, "ok");
            const int fused = v == FFNN_MM_FUSED;
            if (v == FFNN_MM_REGBLOCK || fused)
                snprintf(r->note, sizeof r->note, "tile %s",
                         ffnn_matmul_lab_config(lab, op, L->batch, L->in, L->out));
            if (v == FFNN_MM_TRANSPOSED)
                snprintf(r->note, sizeof r->note, "%s",
                         op == FFNN_MM_FORWARD ? "W transposed first (time included)"
                                               : "operands already coalesced: no transpose");
            /* check: poisoned outputs, fresh SGD targets, one call */
            /* the lab's stream is non-blocking: the synchronous copies and memsets
             * (legacy stream) do not wait for it, so sync it around the call */
            int with_dw = 0;
            ffnn_status st = ffnn_bench_stream_sync(stream);
            if (st == FFNN_OK) st = ffnn_bench_memset(d.C, 0xFF, nout * 4);
            if (st == FFNN_OK) st = ffnn_bench_memset(d.db, 0xFF, L->out * 4);
            if (st == FFNN_OK) st = ffnn_bench_upload(d.Wp, hW, nw * 4);
            if (st == FFNN_OK) st = ffnn_bench_upload(d.bp, hb, L->out * 4);
            if (st == FFNN_OK) st = ffnn_matmul_lab_run(lab, v, &a, &with_dw);
            if (st == FFNN_OK) st = ffnn_bench_stream_sync(stream);
            if (st == FFNN_OK) st = ffnn_bench_download(got, d.C, nout * 4);
            if (st != FFNN_OK) {
                snprintf(r->status, sizeof r->status, "error");
                snprintf(r->note, sizeof r->note, "%.150s", ffnn_last_error());
                fprintf(stderr, "    %s: %s\n", ffnn_matmul_lab_variant_name(v), r->note);
                continue;
            }
            double err = ref_error(&ref, got, fused && op == FFNN_MM_FORWARD ? expect_forward
                                              : fused && op == FFNN_MM_DX  ? expect_dx
                                                                           : NULL,
                                   &ectx);
            if (fused && op == FFNN_MM_DW) { /* db, W and b after SGD */
                double e2 = INFINITY, e3 = INFINITY, e4 = INFINITY;
                if (ffnn_bench_download(hdb, d.db, L->out * 4) == FFNN_OK) {
                    reference rdb = {L->out, NULL, ref_db};
                    e2 = ref_error(&rdb, hdb, NULL, NULL);
                }
                if (ffnn_bench_download(gotW, d.Wp, nw * 4) == FFNN_OK)
                    e3 = ref_error(&ref, gotW, expect_sgd, &ectx);
                if (ffnn_bench_download(got, d.bp, L->out * 4) == FFNN_OK) {
                    double worst = 0.0;
                    for (size_t o = 0; o < L->out; o++) {
                        double dd = fabs((double)got[o] - (double)(hb[o] - LR * ref_db[o]));
                        if (dd != dd) dd = INFINITY; /* NaN: unwritten */
                        if (dd > worst) worst = dd;
                    }
                    e4 = worst;
                }
                err = fmax(fmax(err, e2), fmax(e3, e4));
                if (!(e2 == e2) || !(e3 == e3) || !(e4 == e4)) err = INFINITY;
            }
            r->err = err;
            if (!(err <= TOL)) {
                snprintf(r->status, sizeof r->status, "FAIL");
                fprintf(stderr, "    %s: FAIL, error %.3g > %.1g\n",
                        ffnn_matmul_lab_variant_name(v), err, TOL);
                continue;
            }
            /* time */
            const double us = time_call(lab, v, &a, repeats, &r->inner);
            if (us < 0) {
                snprintf(r->status, sizeof r->status, "error");
                snprintf(r->note, sizeof r->note, "%.150s", ffnn_last_error());
                continue;
            }
            r->repeats = repeats;
            r->us = us;
            if (op == FFNN_MM_DW) dw_us[v] = us;
            if (with_dw) {
                r->us = us - dw_us[v];
                snprintf(r->note, sizeof r->note,
                         "dense_backward(dW+dx) %.1f us minus its dW-only %.1f us", us,
                         dw_us[v]);
            }
            const double flop = 2.0 * (double)r->M * (double)r->N * (double)r->K;
            r->gflops = r->us > 0 ? flop / (r->us * 1e3) : NAN;
            r->pct = 100.0 * r->gflops / (CEILING_TFLOPS * 1e3);
            fprintf(stderr, "    %-10s %10.2f us %9.1f GFLOP/s %5.1f%%  err %.2g\n",
                    ffnn_matmul_lab_variant_name(v), r->us, r->gflops, r->pct, err);
        }
        ref_free(&ref);
    }
    rc = 0;
done:
    bufs_free(&d);
    free(hx), free(hW), free(hb), free(hdz), free(got), free(hdb), free(ref_db), free(gotW);
    return rc;
}

/* ------------------------------------------------------------ output */

static int write_csv(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) return -1;
    fputs("batch,in,out,op,M,N,K,variant,status,max_rel_err,us_median,gflops,pct_fp32_ceiling,"
          "inner,repeats,note,device,date\n",
          f);
    for (size_t i = 0; i < n_rows; i++) {
        const row *r = &rows[i];
        fprintf(f, "%zu,%zu,%zu,%s,%ld,%ld,%ld,%s,%s,", r->L.batch, r->L.in, r->L.out,
                ffnn_matmul_lab_op_name(r->op), r->M, r->N, r->K,
                ffnn_matmul_lab_variant_name(r->variant), r->status);
        ffnn_bench_csv_num(f, r->err);
        ffnn_bench_csv_num(f, r->us);
        ffnn_bench_csv_num(f, r->gflops);
        ffnn_bench_csv_num(f, r->pct);
        fprintf(f, "%d,%d,", r->inner, r->repeats);
        ffnn_bench_csv_field(f, r->note);
        fputc(',', f);
        ffnn_bench_csv_field(f, gpu_desc);
        fprintf(f, ",%s\n", date_utc);
    }
    return fclose(f) == 0 ? 0 : -1;
}

static void write_table(FILE *f, const void *vctx)
{
    (void)vctx;
    fprintf(f, "## Kernel lab: the matmuls of a dense layer, six variants\n\n");
    fprintf(f, "Command: `%s`, %s UTC. GPU: %s.\n\n", command_line, date_utc, gpu_desc);
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
               "time.\n\n",
            TOL, sampled_any ? "; layers above 3e8 multiply-adds: 4096 sampled outputs" : "",
            CEILING_TFLOPS);
    /* summary: one line per (layer, op), us and % ceiling per variant */
    fprintf(f, "| layer | op | M x N x K |");
    for (int v = 0; v < FFNN_MM_VARIANTS; v++)
        fprintf(f, " %s us (%% ceil) |", ffnn_matmul_lab_variant_name(v));
    fprintf(f, "\n|---|---|---|");
    for (int v = 0; v < FFNN_MM_VARIANTS; v++) fprintf(f, "---:|");
    fputc('\n', f);
    for (size_t i = 0; i < n_rows; i += FFNN_MM_VARIANTS) {
        const row *r0 = &rows[i];
        fprintf(f, "| %zux%zu->%zu | %s | %ldx%ldx%ld |", r0->L.batch, r0->L.in, r0->L.out,
                ffnn_matmul_lab_op_name(r0->op), r0->M, r0->N, r0->K);
        for (size_t j = i; j < i + FFNN_MM_VARIANTS && j < n_rows; j++) {
            const row *r = &rows[j];
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
    for (size_t i = 0; i < n_rows; i++) {
        const row *r = &rows[i];
        fprintf(f, "| %zux%zu->%zu | %s | %s | %s | %.2g | %.2f | %.1f | %.2f | %dx%d | %s |\n",
                r->L.batch, r->L.in, r->L.out, ffnn_matmul_lab_op_name(r->op),
                ffnn_matmul_lab_variant_name(r->variant), r->status, r->err, r->us, r->gflops,
                r->pct, r->inner, r->repeats, r->note);
    }
}

/* ------------------------------------------------------------ main */

enum { OPT_QUICK = 256, OPT_OUT, OPT_REPEATS, OPT_NOBIG };
static const struct option long_options[] = {
    {"quick", no_argument, NULL, OPT_QUICK},
    {"out", required_argument, NULL, OPT_OUT},
    {"repeats", required_argument, NULL, OPT_REPEATS},
    {"no-big", no_argument, NULL, OPT_NOBIG},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int ffnn_bench_kernels(int argc, char **argv)
{
    int quick = 0, repeats = -1, big = 1;
    const char *out = NULL;
    argv[0] = "ffnn bench kernels";
    snprintf(command_line, sizeof command_line, "%s", argv[0]);
    for (int i = 1; i < argc; i++) {
        size_t used = strlen(command_line);
        snprintf(command_line + used, sizeof command_line - used, " %s", argv[i]);
    }
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
        switch (c) {
        case 'h': fputs(ffnn_bench_kernels_usage, stdout); return 0;
        case OPT_QUICK: quick = 1; break;
        case OPT_OUT: out = optarg; break;
        case OPT_NOBIG: big = 0; break;
        case OPT_REPEATS:
            if (ffnn_bench_parse_int("kernels", "--repeats", optarg, 1, MAX_REPEATS, &repeats))
                return 2;
            break;
        default: return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ffnn bench kernels: unexpected argument '%s' (see --help)\n",
                argv[optind]);
        return 2;
    }
    if (repeats < 0) repeats = quick ? 5 : 20;
    if (out == NULL) out = quick ? "build/bench-quick" : "bench/results";

    if (!ffnn_has_cuda()) {
        fprintf(stderr, "ffnn bench kernels: this build has no CUDA (nvcc was not found); "
                        "the kernel lab needs a CUDA GPU\n");
        return 1;
    }
    ffnn_bench_gpu_info gi;
    if (ffnn_cuda_device_count() < 1 || ffnn_bench_gpu_query(&gi) != FFNN_OK) {
        fprintf(stderr, "ffnn bench kernels: no CUDA GPU found; the kernel lab needs one\n");
        return 1;
    }
    snprintf(gpu_desc, sizeof gpu_desc, "%s (sm_%d%d, %d SMs)", gi.name, gi.cc_major,
             gi.cc_minor, gi.sm_count);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(date_utc, sizeof date_utc, "%Y-%m-%dT%H:%M:%SZ", &tm);

    layer layers[MAX_LAYERS];
    size_t n_layers = 0;
    static const size_t batches_full[] = {64, 256, 1024}, batches_quick[] = {64};
    const size_t *batches = quick ? batches_quick : batches_full;
    const size_t nb = quick ? 1 : 3;
    for (size_t i = 0; i < nb; i++) {
        layers[n_layers++] = (layer){batches[i], 784, 256};
        layers[n_layers++] = (layer){batches[i], 256, 10};
    }
    layers[n_layers++] = (layer){1024, 1024, 1024};
    if (!quick && big) layers[n_layers++] = (layer){4096, 4096, 4096};

    void *lab = NULL;
    if (ffnn_matmul_lab_create(&lab) != FFNN_OK) {
        fprintf(stderr, "ffnn bench kernels: %s\n", ffnn_last_error());
        return 1;
    }
    const double t_start = ffnn_bench_now_s();
    int rc = 0;
    n_rows = 0;
    for (size_t i = 0; i < n_layers && rc == 0; i++) {
        fprintf(stderr, "layer %zux%zu->%zu\n", layers[i].batch, layers[i].in, layers[i].out);
        if (run_layer(lab, &layers[i], repeats, 1000 + i) != 0) rc = 1;
    }
    ffnn_matmul_lab_destroy(lab);
    for (size_t i = 0; i < n_rows; i++)
        if (strcmp(rows[i].status, "ok") != 0) rc = 1;
    if (ffnn_bench_save("kernels", out, write_csv, write_table, NULL,
                        ffnn_bench_now_s() - t_start, rc, "SOME VARIANTS FAILED") != 0)
        rc = 1;
    return rc;
}
