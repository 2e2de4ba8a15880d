/*
 * test_ops.c - suite "ops" (tests ops_table_*): one table of op x backend x variant x
 * precision, every entry against the cpu reference backend (ffnn_cpu_backend) on
 * fresh random inputs, through the ffnn_backend_ops table only (alloc, upload, the
 * op, download), in the manner of ggml's test-backend-ops.
 *
 *   ops        (dense_ops and the local1d group here; the element-wise groups and
 *              the bf16 ops in test_ops_elementwise.c; the harness op_table.h)
 *              dense forward/backward, fused dense+activation, local1d
 *              forward/backward, every activation forward/backward, every loss,
 *              every optimizer, clip, dropout, ema, gather, the packed dense
 *              forward, the bf16 conversions and ops, with their shapes (odd and
 *              tall-skinny ones: 1, 3, 17, 33, 257 ..., batch 1 and batch >> width)
 *   targets    (op_table.c op_targets_make) omp: each kernel set FFNN_OMP_ISA this
 *              CPU runs (avx512, avx2, baseline) x 1, 2, 3 threads; cuda: each matmul
 *              variant (naive, tiled, cublas, cublaslt: backend.h
 *              ffnn_matmul_variant) x precision (fp32, tf32, tf32x3, bf16) that a
 *              strategy runs (the strategy table's matmul and precisions) and the
 *              backend's capabilities allow. The matmul ops run on every target (the
 *              plain dense ops of the own kernels, fp32 in every precision, once per
 *              variant; local1d on the own kernels), the others (one kind of kernel
 *              per backend) on one target per backend (omp 2 threads, cuda tiled),
 *              the bf16 ops on cublaslt bf16.
 *   lines      one per entry compared: op, backend, variant, precision, shape, FLOPs,
 *              the largest absolute and relative error, the worst error as a
 *              fraction of its bound, and the tolerance; a target or op a machine
 *              lacks (no GPU, an ISA the CPU cannot run, an optional op a backend
 *              has not) is one "skip" line per group naming why.
 *   seeds      each group's generator seed is printed; FFNN_TEST_SEED=N mixes N in.
 *
 * Every output buffer is filled with 0xFF bytes (NaN) before the op runs, so an
 * element the op forgets to write fails.
 *
 * Tolerances, per output value: |got - want| <= atol + rtol |want| + srel S, with
 * S = the same op on |inputs| (sum of |terms|, computed by the reference):
 *   fp32 matmul   atol = 1e-5 (1 + sqrt K), rtol = 1e-4 (K the summed length: in
 *                 for z, batch for dW and db, out for dx, R for local1d): both sides
 *                 sum fp32 products in fp32 in another order or with one fma per
 *                 term; the difference grows like eps sqrt K (measured at 64 x 784
 *                 x 256: 1.1e-5 on sums of ~7, the bound there 2.9e-4).
 *   tf32          the fp32 bound + 2^-9 S: TF32 keeps 10 mantissa bits, an input is
 *                 off by at most 2^-10 of itself (rounded or truncated), a product by
 *                 2^-9 (+2^-20).
 *   tf32x3        the fp32 bound + 2^-20 S: each input split into two TF32 parts to
 *                 within 2^-22, the small x small product dropped (cuda/cublas.cu).
 *   bf16          the fp32 bound + 2^-7 S: 8 significant bits, 2^-8 per input,
 *                 2^-7 (+2^-16) per product; the bf16 ops take bf16 inputs (the
 *                 reference runs on the same values, products exact): fp32 bound,
 *                 + 2^-8 |want| for an output rounded to bf16 (half an ulp, twice).
 *   element-wise  (activations, losses, gather, optimizers, dropout, ema) on the host
 *                 backends: the same bits (one formula, cpu/cpu_math.h, the same libm
 *                 calls, db and the norm summed in the reference's order); on cuda
 *                 activations 1e-6 + 1e-5 |want| (CUDA's expf, erff, tanhf, log1pf
 *                 may differ from glibc's by an ulp or two), row_loss 1e-5 + 1e-5,
 *                 dout 1e-6 + 1e-5, row_correct exactly, optimizer parameters
 *                 1e-7 + 1e-6 and state 1e-12 + 1e-6 (the same operations in the
 *                 same order: an ulp of slack), dropout the same bits (one integer
 *                 mask), ema 1e-12 + 1e-6, uint8 features 1e-6 relative (x / 255).
 *   clip          1e-6 relative on the norm and the clipped values on every backend
 *                 (the double sum runs in chunks), + 1e-12 on cuda.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "check.h"
#include "core/activation.h"
#include "core/dropout.h"
#include "ffnn.h"
#include "op_table.h"
#include "test_numeric.h"

/* ------------------------------------------------------------------ dense */

/* The inputs of one dense shape in [-1, 1] and the reference's outputs, with the
 * sums of |terms| S where a target runs a low precision. */
typedef struct dense_case {
    dense_shape s;
    float *x, *W, *b, *dz;           /* [batch, in], [out, in], [out], [batch, out] */
    float *z, *zb, *Sz;              /* x W^T, + b, |x| |W|^T + |b|  [batch, out]   */
    float *dx, *dW, *db, *Sdx, *SdW; /* the backward, and its S                     */
} dense_case;

static void dense_make(pool *hp, rng *r, dense_case *c, int with_S, int backward)
{
    const dense_shape s = c->s;
    const size_t nx = s.batch * s.in, nw = s.out * s.in, nz = s.batch * s.out;
    c->x = op_hf32(hp, nx), c->W = op_hf32(hp, nw), c->b = op_hf32(hp, s.out),
    c->dz = op_hf32(hp, nz);
    c->z = op_hf32(hp, nz), c->zb = op_hf32(hp, nz);
    c->dx = op_hf32(hp, nx), c->dW = op_hf32(hp, nw), c->db = op_hf32(hp, s.out);
    c->Sz = with_S ? op_hf32(hp, nz) : NULL;
    c->Sdx = with_S ? op_hf32(hp, nx) : NULL, c->SdW = with_S ? op_hf32(hp, nw) : NULL;
    if (hp->failed)
        return;
    fill_uniform(r, c->x, nx, -1.0f, 1.0f);
    fill_uniform(r, c->W, nw, -1.0f, 1.0f);
    fill_uniform(r, c->b, s.out, -1.0f, 1.0f);
    fill_uniform(r, c->dz, nz, -1.0f, 1.0f);
    const ffnn_backend_ops *cpu = &ffnn_cpu_backend;
    cpu->dense_forward(NULL, c->x, c->W, NULL, c->z, s.batch, s.in, s.out);
    cpu->dense_forward(NULL, c->x, c->W, c->b, c->zb, s.batch, s.in, s.out);
    if (backward)
        cpu->dense_backward(NULL, c->x, c->W, c->dz, c->dx, c->dW, c->db, s.batch, s.in, s.out);
    if (with_S) {
        float *ax = op_hf32(hp, nx), *aW = op_hf32(hp, nw), *ab = op_hf32(hp, s.out),
              *adz = op_hf32(hp, nz);
        float *junk = op_hf32(hp, s.out);
        if (hp->failed)
            return;
        abs_copy(ax, c->x, nx), abs_copy(aW, c->W, nw), abs_copy(ab, c->b, s.out);
        abs_copy(adz, c->dz, nz);
        cpu->dense_forward(NULL, ax, aW, ab, c->Sz, s.batch, s.in, s.out);
        if (backward)
            cpu->dense_backward(NULL, ax, aW, adz, c->Sdx, c->SdW, junk, s.batch, s.in, s.out);
    }
}

/* The inputs of a dense case on a target, and the entry's buffers (host and device). */
typedef struct dense_dev {
    const void *x, *W, *b, *dz;
    size_t nx, nw, nz;
} dense_dev;

typedef void (*dense_body)(const target *t, const dense_case *c, const dense_dev *d, pool *p,
                           result *r);

/* One entry: c's inputs uploaded to t, body's comparisons, one line (flops: per
 * multiply-add of batch x in x out). */
static void dense_entry(group *g, const target *t, const dense_case *c, const char *op,
                        ffnn_precision prec, double flops, dense_body body)
{
    const dense_shape s = c->s;
    pool p = {.t = t};
    result r;
    op_result_init(&r);
    dense_dev d = {.nx = s.batch * s.in, .nw = s.out * s.in, .nz = s.batch * s.out};
    d.x = op_dbuf(&p, c->x, d.nx * 4), d.W = op_dbuf(&p, c->W, d.nw * 4);
    d.b = op_dbuf(&p, c->b, s.out * 4), d.dz = op_dbuf(&p, c->dz, d.nz * 4);
    op_pool_check(&r, &p);
    if (r.ok)
        body(t, c, &d, &p, &r);
    op_pool_free(&p);
    char sh[40];
    op_shape_text(sh, sizeof sh, s);
    op_entry_line(g, op, t, prec, sh, flops * d.nz * s.in, &r);
}

/* z = x W^T (+ b): with and without bias. */
static void dense_forward_body(const target *t, const dense_case *c, const dense_dev *d, pool *p,
                               result *r)
{
    const dense_shape s = c->s;
    void *z0 = op_dbuf(p, NULL, d->nz * 4), *z1 = op_dbuf(p, NULL, d->nz * 4);
    op_pool_check(r, p);
    const tol tl = op_matmul_tol(t->plain, s.in);
    if (r->ok &&
        op_call_ok(r, "dense_forward",
                   t->ops->dense_forward(t->ctx, d->x, d->W, NULL, z0, s.batch, s.in, s.out)) &&
        op_call_ok(r, "dense_forward (bias)",
                   t->ops->dense_forward(t->ctx, d->x, d->W, d->b, z1, s.batch, s.in, s.out))) {
        op_compare(r, "z", op_fetch_f32(p, z0, d->nz), c->z, c->Sz, d->nz, tl);
        op_compare(r, "z (bias)", op_fetch_f32(p, z1, d->nz), c->zb, c->Sz, d->nz, tl);
    }
}

/* dW, db, dx; then dW alone (dx and db NULL: a first layer without bias). */
static void dense_backward_body(const target *t, const dense_case *c, const dense_dev *d, pool *p,
                                result *r)
{
    const dense_shape s = c->s;
    void *dx = op_dbuf(p, NULL, d->nx * 4), *dW = op_dbuf(p, NULL, d->nw * 4);
    void *db = op_dbuf(p, NULL, s.out * 4), *dW2 = op_dbuf(p, NULL, d->nw * 4);
    op_pool_check(r, p);
    if (r->ok &&
        op_call_ok(
            r, "dense_backward",
            t->ops->dense_backward(t->ctx, d->x, d->W, d->dz, dx, dW, db, s.batch, s.in, s.out)) &&
        op_call_ok(r, "dense_backward (dx, db NULL)",
                   t->ops->dense_backward(t->ctx, d->x, d->W, d->dz, NULL, dW2, NULL, s.batch, s.in,
                                          s.out))) {
        const tol tw = op_matmul_tol(t->plain, s.batch);
        op_compare(r, "dW", op_fetch_f32(p, dW, d->nw), c->dW, c->SdW, d->nw, tw);
        /* db: the backends' own bias-gradient sum in every precision; the host
         * backends sum in the reference's order */
        op_compare(r, "db", op_fetch_f32(p, db, s.out), c->db, NULL, s.out,
                   t->host ? OP_BITS : op_matmul_tol(FFNN_PRECISION_FP32, s.batch));
        op_compare(r, "dx", op_fetch_f32(p, dx, d->nx), c->dx, c->Sdx, d->nx,
                   op_matmul_tol(t->plain, s.out));
        op_compare(r, "dW (dx, db NULL)", op_fetch_f32(p, dW2, d->nw), c->dW, c->SdW, d->nw, tw);
    }
}

/* a = act(x W^T (+ b)) for each of op_fused_acts, with and without bias. */
static void dense_act_body(const target *t, const dense_case *c, const dense_dev *d, pool *p,
                           result *r)
{
    const dense_shape s = c->s;
    float *want = op_hf32(p, d->nz);
    void *a = op_dbuf(p, NULL, d->nz * 4);
    op_pool_check(r, p);
    for (size_t ai = 0; ai < 4 && r->ok; ai++)
        for (int bias = 0; bias <= 1 && r->ok; bias++) {
            const ffnn_activation act = op_fused_acts[ai];
            ffnn_cpu_backend.activation_forward(NULL, act, 0.0f, bias ? c->zb : c->z, want, d->nz);
            if (op_call_ok(r, ffnn_activation_name(act),
                           t->ops->fused->dense_act_forward(t->ctx, d->x, d->W, bias ? d->b : NULL, a,
                                                     s.batch, s.in, s.out, act)))
                op_compare(r, ffnn_activation_name(act), op_fetch_f32(p, a, d->nz), want, c->Sz,
                           d->nz, op_matmul_tol(t->precision, s.in));
        }
}

/* dense_backward_fused without sgd: dx = (dz W) * f'(x) with x the output of each
 * of op_fused_acts (drawn in its range, so |f'| <= 1), dW = dz^T x, db; dx_db, xt
 * and dw_side unused. */
static void dense_backward_fused_body(const target *t, const dense_case *c, const dense_dev *d,
                                      pool *p, result *r)
{
    const dense_shape s = c->s;
    const size_t nx = d->nx, nw = d->nw, nz = d->nz;
    float *xa = op_hf32(p, nx), *dx = op_hf32(p, nx), *dW = op_hf32(p, nw), *db = op_hf32(p, s.out);
    float *ax = op_hf32(p, nx), *adz = op_hf32(p, nz), *aW = op_hf32(p, nw), *Sdx = op_hf32(p, nx);
    float *SdW = op_hf32(p, nw), *junk = op_hf32(p, s.out);
    void *dx_ = op_dbuf(p, NULL, nx * 4), *dW_ = op_dbuf(p, NULL, nw * 4),
         *db_ = op_dbuf(p, NULL, s.out * 4);
    void *x_ = op_dbuf(p, NULL, nx * 4);
    op_pool_check(r, p);
    if (r->ok)
        abs_copy(adz, c->dz, nz), abs_copy(aW, c->W, nw);
    for (size_t ai = 0; ai < 4 && r->ok; ai++) {
        const ffnn_activation act = op_fused_acts[ai];
        for (size_t i = 0; i < nx; i++) {
            const float u = c->x[i];
            xa[i] = act == FFNN_ACT_RELU      ? (u > 0 ? u : 0)
                    : act == FFNN_ACT_SIGMOID ? 0.5f + 0.5f * u
                                              : u;
        }
        ffnn_cpu_backend.dense_backward(NULL, xa, c->W, c->dz, dx, dW, db, s.batch, s.in, s.out);
        ffnn_cpu_backend.activation_backward(NULL, act, 0.0f, xa, dx, dx, nx);
        abs_copy(ax, xa, nx);
        ffnn_cpu_backend.dense_backward(NULL, ax, aW, adz, Sdx, SdW, junk, s.batch, s.in, s.out);
        if (t->ops->upload(t->ctx, x_, xa, nx * 4) != FFNN_OK)
            p->failed = 1;
        op_pool_check(r, p);
        if (r->ok && op_call_ok(r, ffnn_activation_name(act),
                                t->ops->fused->dense_backward_fused(t->ctx, x_, (float *)d->W, NULL, d->dz,
                                                             dx_, dW_, db_, NULL, s.batch, s.in,
                                                             s.out, act, NULL, NULL, 0))) {
            op_compare(r, "dx", op_fetch_f32(p, dx_, nx), dx, Sdx, nx,
                       op_matmul_tol(t->precision, s.out));
            op_compare(r, "dW", op_fetch_f32(p, dW_, nw), dW, SdW, nw,
                       op_matmul_tol(t->precision, s.batch));
            /* db: summed in fp32 from dz, except by cuBLASLt in bf16, whose
             * bias-gradient epilogue (BGRADB) sums the bf16 dz its matmul reads
             * (measured on an H200: up to 3e-3 relative at batch 1): there the bf16
             * bound with S = sum_b |dz| */
            const int lt_rounds = !strcmp(t->variant, "cublaslt") &&
                                  t->precision == FFNN_PRECISION_BF16;
            op_compare(r, "db", op_fetch_f32(p, db_, s.out), db, lt_rounds ? junk : NULL, s.out,
                       op_matmul_tol(lt_rounds ? t->precision : FFNN_PRECISION_FP32, s.batch));
        }
    }
}

/* packed [dense_pack_floats] = W; dense_forward_packed: the reference's z within
 * the matmul bound and the bits of the target's own dense_forward; its parts
 * (3, on this thread) together: the same bits again. */
static void dense_packed_body(const target *t, const dense_case *c, const dense_dev *d, pool *p,
                              result *r)
{
    const dense_shape s = c->s;
    const size_t nz = d->nz, np = t->ops->packed->dense_pack_floats(t->ctx, s.in, s.out);
    void *packed = op_dbuf(p, NULL, np * 4), *z = op_dbuf(p, NULL, nz * 4),
         *zp = op_dbuf(p, NULL, nz * 4);
    void *zparts = op_dbuf(p, NULL, nz * 4);
    op_pool_check(r, p);
    if (!r->ok ||
        !op_call_ok(r, "dense_pack", t->ops->packed->dense_pack(t->ctx, d->W, s.in, s.out, packed)) ||
        !op_call_ok(r, "dense_forward",
                    t->ops->dense_forward(t->ctx, d->x, d->W, d->b, z, s.batch, s.in, s.out)) ||
        !op_call_ok(
            r, "dense_forward_packed",
            t->ops->packed->dense_forward_packed(t->ctx, d->x, packed, d->b, zp, s.batch, s.in, s.out)))
        return;
    for (int part = 0; part < 3 && r->ok && t->ops->packed; part++) {
        size_t j0 = 0, j1 = 0;
        op_call_ok(r, "dense_forward_packed_part",
                   t->ops->packed->dense_forward_packed_part(t->ctx, d->x, packed, d->b, zparts, s.batch,
                                                     s.in, s.out, part, 3, &j0, &j1));
    }
    const float *gz = op_fetch_f32(p, z, nz), *gzp = op_fetch_f32(p, zp, nz);
    op_compare(r, "z (packed)", gzp, c->zb, c->Sz, nz, op_matmul_tol(t->plain, s.in));
    if (gz && gzp)
        op_compare(r, "z (packed) vs dense_forward", gzp, gz, NULL, nz, OP_BITS);
    if (gzp && t->ops->packed)
        op_compare(r, "z (3 parts) vs packed", op_fetch_f32(p, zparts, nz), gzp, NULL, nz, OP_BITS);
}

/* Which targets run a dense op: the plain ops once per variant (the own kernels'
 * stay fp32 in every precision), the optional ones where the backend has them. */
static int runs_plain(const target *t) { return t->precision == t->plain; }
static int has_dense_act(const target *t) { return t->ops->fused != NULL; }
static int has_dense_fused(const target *t) { return t->ops->fused != NULL; }
static int has_dense_packed(const target *t)
{
    return t->ops->packed != NULL;
}

/* The dense ops of the table: name, seed, FLOPs per multiply-add of batch x in x
 * out, the precision its line names (1: the context's, 0: the plain ops'), which
 * targets run it, the reference's backward wanted, the entry. */
typedef struct dense_op {
    const char *name;
    uint64_t seed;
    double flops;
    int context_precision;
    int (*runs)(const target *t);
    int backward;
    dense_body body;
} dense_op;

static const dense_op dense_ops[] = {
    {"dense_forward", 0x9E3779B97F4A7C15ULL, 2.0, 0, runs_plain, 0, dense_forward_body},
    {"dense_backward", 0xD1B54A32D192ED03ULL, 4.0, 0, runs_plain, 1, dense_backward_body},
    {"dense_act_forward", 0x5EED0F05EDULL, 2.0, 1, has_dense_act, 0, dense_act_body},
    {"dense_forward_packed", 0x2545F4914F6CDD1DULL, 2.0, 0, has_dense_packed, 0, dense_packed_body},
    {"dense_backward_fused", 0x853C49E6748FEA9BULL, 4.0, 1, has_dense_fused, 0,
     dense_backward_fused_body},
};

static test_result dense_group(char *why, size_t why_size, size_t which)
{
    const dense_op *op = &dense_ops[which];
    group g;
    op_group_begin(&g, op->name, op->seed);
    op_say_missing(&g, op->runs);
    const int with_S = op_any_low_precision(&g.T);
    int any = 0; /* a target runs the op (else no reference to compute) */
    FOR_TARGETS(&g, t, op->runs(t))
        any = 1;
    /* the forward also on a batch taller than 65535 row tiles of 64 (and 65535 row
     * blocks of 16 in cuda's naive kernel): the grids' row-tile stride */
    const size_t count = test_dense_count + (op->body == dense_forward_body);
    for (size_t i = 0; i < count && any; i++) {
        dense_case c = {.s = i < test_dense_count ? test_dense_shape(&g.r, i)
                                                  : (dense_shape){4300000, 2, 3}};
        pool hp = {.t = NULL};
        dense_make(&hp, &g.r, &c, with_S, op->backward);
        if (hp.failed) {
            fprintf(stderr, "    host buffers for %zux%zu->%zu\n", c.s.batch, c.s.in, c.s.out);
            g.failed++;
        }
        FOR_TARGETS(&g, t, !hp.failed && op->runs(t))
            dense_entry(&g, t, &c, op->name, op->context_precision ? t->precision : t->plain,
                        op->flops, op->body);
        op_pool_free(&hp);
    }
    return op_group_end(&g, why, why_size);
}

TEST_WITH("ops_table_dense_forward", test_dense_forward, dense_group, 0);
TEST_WITH("ops_table_dense_backward", test_dense_backward, dense_group, 1);
TEST_WITH("ops_table_dense_act_forward", test_dense_act_forward, dense_group, 2);
TEST_WITH("ops_table_dense_forward_packed", test_dense_packed, dense_group, 3);
TEST_WITH("ops_table_dense_backward_fused", test_dense_backward_fused, dense_group, 4);

/* ------------------------------------------------------------------ local1d */

/* local1d runs on the variants with their own kernels (cuda naive = global memory,
 * tiled = shared tiles; omp on 1..3 threads); precision does not apply. */
static int l1d_target(const target *t)
{
    return t->precision == FFNN_PRECISION_FP32 &&
           (t->host || !strcmp(t->variant, "naive") || !strcmp(t->variant, "tiled"));
}

static test_result local1d_group(char *why, size_t why_size, int backward)
{
    const ffnn_activation *acts = op_fused_acts;
    group g;
    op_group_begin(&g, backward ? "local1d_backward" : "local1d_forward",
                   backward ? 0x5EED0002ULL : 0xD1B54A32D192ED05ULL);
    for (size_t i = 0; i < test_l1d_count; i++) {
        const l1d_shape s = test_l1d_shape(&g.r, i);
        const size_t M = ffnn_local1d_output_size(s.N, s.R, s.padding);
        const size_t nx = s.batch * s.N, nw = M * s.R, nz = s.batch * M;
        pool hp = {.t = NULL};
        float *x = op_hf32(&hp, nx), *W = op_hf32(&hp, nw), *b = op_hf32(&hp, M),
              *dz = op_hf32(&hp, nz);
        float *z[8], *dx = op_hf32(&hp, nx), *dW = op_hf32(&hp, nw), *db = op_hf32(&hp, M);
        for (int k = 0; k < 8; k++)
            z[k] = op_hf32(&hp, nz);
        if (hp.failed || M == 0) {
            fprintf(stderr, "    local1d %zu %zu %zu: host buffers or M = 0\n", s.batch, s.N, s.R);
            g.failed++;
            op_pool_free(&hp);
            continue;
        }
        fill_uniform(&g.r, x, nx, -1.0f, 1.0f);
        fill_uniform(&g.r, W, nw, -1.0f, 1.0f);
        fill_uniform(&g.r, b, M, -1.0f, 1.0f);
        fill_uniform(&g.r, dz, nz, -1.0f, 1.0f);
        const ffnn_backend_ops *cpu = &ffnn_cpu_backend;
        for (int k = 0; k < 8; k++) /* act k / 2, bias k % 2 */
            cpu->local1d_forward(NULL, x, W, k % 2 ? b : NULL, z[k], s.batch, s.N, s.R, s.padding,
                                 acts[k / 2]);
        cpu->local1d_backward(NULL, x, W, dz, dx, dW, db, s.batch, s.N, s.R, s.padding);
        char sh[48];
        snprintf(sh, sizeof sh, "%zux%zu R%zu %s", s.batch, s.N, s.R,
                 s.padding == FFNN_LOCAL1D_SAME ? "same" : "valid");
        FOR_TARGETS(&g, t, l1d_target(t)) {
            pool p = {.t = t};
            result r = RESULT_INIT;
            const void *dxi = op_dbuf(&p, x, nx * 4), *dWi = op_dbuf(&p, W, nw * 4);
            const void *dbi = op_dbuf(&p, b, M * 4), *ddz = op_dbuf(&p, dz, nz * 4);
            void *o1 = op_dbuf(&p, NULL, (backward ? nx : nz) * 4), *o2 = op_dbuf(&p, NULL, nw * 4);
            void *o3 = op_dbuf(&p, NULL, M * 4), *o4 = op_dbuf(&p, NULL, nw * 4);
            op_pool_check(&r, &p);
            /* host: the reference's bits; cuda: the sums' bound (+1e-6 after a
             * non-identity activation: its libm) */
            const tol sum_R = t->host ? OP_BITS : op_matmul_tol(FFNN_PRECISION_FP32, s.R);
            const tol sum_B = t->host ? OP_BITS : op_matmul_tol(FFNN_PRECISION_FP32, s.batch);
            for (int a = 0; a < 8 && r.ok && !backward; a++) {
                tol tl = sum_R;
                if (!t->host && acts[a / 2] != FFNN_ACT_IDENTITY)
                    tl.atol += 1e-6;
                if (op_call_ok(&r, "local1d_forward",
                               t->ops->local1d_forward(t->ctx, dxi, dWi, a % 2 ? dbi : NULL, o1,
                                                       s.batch, s.N, s.R, s.padding, acts[a / 2])))
                    op_compare(&r, ffnn_activation_name(acts[a / 2]), op_fetch_f32(&p, o1, nz),
                               z[a], NULL, nz, tl);
            }
            if (r.ok && backward &&
                op_call_ok(&r, "local1d_backward",
                           t->ops->local1d_backward(t->ctx, dxi, dWi, ddz, o1, o2, o3, s.batch, s.N,
                                                    s.R, s.padding)) &&
                op_call_ok(&r, "local1d_backward (dW only)",
                           t->ops->local1d_backward(t->ctx, dxi, dWi, ddz, NULL, o4, NULL, s.batch,
                                                    s.N, s.R, s.padding))) {
                op_compare(&r, "dx", op_fetch_f32(&p, o1, nx), dx, NULL, nx, sum_R);
                op_compare(&r, "dW", op_fetch_f32(&p, o2, nw), dW, NULL, nw, sum_B);
                op_compare(&r, "db", op_fetch_f32(&p, o3, M), db, NULL, M, sum_B);
                op_compare(&r, "dW (dx, db NULL)", op_fetch_f32(&p, o4, nw), dW, NULL, nw, sum_B);
            }
            op_pool_free(&p);
            op_entry_line(&g, g.op, t, FFNN_PRECISION_FP32, sh, (backward ? 4.0 : 2.0) * nz * s.R,
                          &r);
        }
        op_pool_free(&hp);
    }
    return op_group_end(&g, why, why_size);
}

TEST_WITH("ops_table_local1d_forward", test_local1d_forward, local1d_group, 0);
TEST_WITH("ops_table_local1d_backward", test_local1d_backward, local1d_group, 1);
