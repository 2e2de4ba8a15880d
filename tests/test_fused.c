/*
 * test_fused.c - suite "fused": the CUDA backend's fused dense ops (backend.h
 * dense_act_forward, dense_backward_fused; src/backend/cuda/fused.cu on gemm.cu's
 * register-blocked SGEMM) against the CPU reference backend (ffnn_cpu_backend),
 * on fresh random inputs in [-1, 1] per shape.
 *
 * Shapes (batch x in -> out): the seeds' 64x784->256 and 64x256->10, 1024x1024->1024,
 * odd 37x129->65 and 1x1->1, 1536x33->1536 and 1536x132->1536 (the 128x128 block
 * tile: scalar and float4 loads), 5x7->3, split-K ones (1024x128->128, 1024x784->128,
 * 1000x130->10) and random ones. The GPU output buffers
 * are NaN-poisoned first, so an unwritten element fails.
 *
 * Tolerances: |got - want| <= atol + rtol |want| with
 *   matmul results   atol = 1e-5 (1 + sqrt(K)), rtol = 1e-5 (K: the summed length:
 *                    in for a, batch for dW, out for dx). The GPU sums one fmaf chain
 *                    in k order, the CPU rounds each product then adds; with inputs
 *                    in [-1, 1] the difference grows like eps sqrt(K), far below this.
 *   after sigmoid / tanh / f'   the same (their derivatives are <= 1).
 *   db               bit-identical to the CPU's order where K (the batch) is not
 *                    split, else to the plan's order (backend/gemm_plan.h: the
 *                    CPU's order within each chunk of the batch, the chunk sums
 *                    added in ascending order; db_plan_order).
 *   W, b after sgd   bit-identical to the CPU update applied to the GPU's own
 *                    dW / db (update.cu's rounding), and within the matmul tolerance
 *                    of the CPU's W - lr dW (times lr, + 1e-6). cuBLASLt updates W
 *                    in its matmul's epilogue and writes no dW: W within that
 *                    tolerance only; b bit-identical as above.
 *   dx_db            (the sums of dx over the batch, the layer below's db; asked
 *                    in the cases without sgd) against the double-precision sum
 *                    of the GPU's own dx: |got - sum| <= 1e-5 sum |dx| + 1e-30
 *                    (fp32 sums of at most 1536 terms in a fixed order of chunks;
 *                    the bound is 20x the worst case of 55 additions in a row at
 *                    eps 6e-8), and bit-identical on a rerun.
 *   reruns           bit-identical (determinism).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lab/harness.h"
#include "backend/backend.h"
#include "backend/gemm_plan.h"
#include "check.h"
#include "test_fixtures.h"
#include "test_backend_ctx.h"
#include "test_parity.h"
#include "backend/cpu/cpu_ops.h"
#include "ffnn.h"
#include "test_numeric.h"

#define RTOL 1e-5
static double mm_atol(size_t K) { return 1e-5 * (1.0 + sqrt((double)K)); }

/* ------------------------------------------------------------------ split-K */

/* The SMs of device 0 (the fixture's GPU; the plan's input), 1 if unknown or in a
 * build without CUDA (whose GPU tests are skipped). */
static int gpu_sm_count(void)
{
#if FFNN_HAVE_CUDA
    ffnn_lab_gpu_info gi;
    return ffnn_lab_gpu_query(&gi) == FFNN_OK && gi.sm_count > 0 ? gi.sm_count : 1;
#else
    return 1;
#endif
}

/* db [out] as the GPU sums it: the weight gradient dW = dz^T x is M = out, N = in,
 * K = batch; the plan (backend/gemm_plan.h) cuts the batch into chunks, each summed
 * in the CPU's order (from 0, rows ascending), the chunk sums added in ascending
 * order. One chunk: ffnn_cpu_dense_backward's db, bit for bit. Returns the chunks. */
static int db_plan_order(const float *dz, size_t batch, size_t in, size_t out,
                         int tensor_cores, float *db)
{
    const ffnn_gemm_plan p = ffnn_gemm_plan_for(gpu_sm_count(), (int)out, (int)in, (int)batch,
                                                FFNN_GEMM_AUTO, tensor_cores, 0);
    for (size_t o = 0; o < out; o++) {
        float total = 0.0f;
        for (int z = 0; z < p.splits; z++) {
            float sum = 0.0f;
            const size_t end = (size_t)(z + 1) * p.k_chunk < batch ? (size_t)(z + 1) * p.k_chunk
                                                                   : batch;
            for (size_t n = (size_t)z * p.k_chunk; n < end; n++) sum += dz[n * out + o];
            total = z == 0 ? sum : total + sum;
        }
        db[o] = total;
    }
    return p.splits;
}

/* ------------------------------------------------------------------ fixture */

enum { MAX_DEV = 32 };
typedef struct fixture {
    const ffnn_backend_ops *gpu;
    void *ctx;
    int lt; /* the context runs the fused ops on cuBLASLt (--strategy cublaslt) */
    void *dev[MAX_DEV];
    size_t ndev;
} fixture;

static void fx_reset(fixture *fx)
{
    for (size_t i = 0; i < fx->ndev; ++i) fx->gpu->release(fx->ctx, fx->dev[i]);
    fx->ndev = 0;
}

/* Device copy of n floats of src (NaN-poisoned when src is NULL); NULL on error. */
static float *dev_f32(fixture *fx, const float *src, size_t n)
{
    if (fx->ndev == MAX_DEV) return NULL;
    void *d = NULL;
    if (fx->gpu->alloc(fx->ctx, n * sizeof(float), &d) != FFNN_OK) return NULL;
    fx->dev[fx->ndev++] = d;
    float *tmp = src == NULL ? poisoned(n) : NULL;
    if (src == NULL && tmp == NULL) return NULL;
    ffnn_status st = fx->gpu->upload(fx->ctx, d, src != NULL ? src : tmp, n * sizeof(float));
    free(tmp);
    return st == FFNN_OK ? (float *)d : NULL;
}

static int get_f32(fixture *fx, float *dst, const float *dev, size_t n)
{
    return fx->gpu->download(fx->ctx, dst, dev, n * sizeof(float)) == FFNN_OK;
}

typedef test_result (*fx_body)(fixture *fx);

static test_result with_strategy(char *why, size_t why_size, fx_body body,
                                 ffnn_strategy strategy)
{
    SKIP_WITHOUT_GPU();
    fixture fx;
    memset(&fx, 0, sizeof fx);
    fx.gpu = ffnn_cuda_backend();
    CHECK(fx.gpu != NULL && fx.gpu->fused != NULL &&
              fx.gpu->fused != NULL,
          "the cuda table lacks the fused ops");
    CHECK_OK(test_ctx(fx.gpu, strategy, 1, &fx.ctx));
    fx.lt = strategy == FFNN_STRATEGY_CUBLASLT;
    test_result r = body(&fx);
    fx_reset(&fx);
    fx.gpu->destroy(fx.ctx);
    return r;
}

static test_result with_gpu(char *why, size_t why_size, fx_body body)
{
    return with_strategy(why, why_size, body, FFNN_STRATEGY_FUSED);
}

static test_result with_lt(char *why, size_t why_size, fx_body body)
{
    return with_strategy(why, why_size, body, FFNN_STRATEGY_CUBLASLT);
}

/* dx_db [in] against the double sums over the batch of the GPU's dx [batch, in]
 * (the tolerance in the header). */
static int dx_db_close(const float *dx_db, const float *dx, size_t batch, size_t in)
{
    for (size_t c = 0; c < in; ++c) {
        double sum = 0.0, asum = 0.0;
        for (size_t b = 0; b < batch; ++b) {
            sum += dx[b * in + c];
            asum += fabs(dx[b * in + c]);
        }
        if (!(fabs(dx_db[c] - sum) <= 1e-5 * asum + 1e-30)) {
            fprintf(stderr, "    dx_db[%zu] = %.9g, the sum of dx is %.9g (sum |dx| %.3g)\n", c,
                    (double)dx_db[c], sum, asum);
            return 0;
        }
    }
    return 1;
}

/* ------------------------------------------------------------------ shapes */

typedef struct shape {
    size_t batch, in, out;
} shape;

static const shape fixed_shapes[] = {
    {64, 784, 256}, {64, 256, 10}, {1024, 1024, 1024}, {37, 129, 65}, {1, 1, 1},
    {1536, 33, 1536}, {1536, 132, 1536}, {5, 7, 3},
    /* split K on 132 SMs (backend/gemm_plan.h): dW of 128 -> 128 at batch 1024 in 16
     * chunks, of 784 -> 128 in 6; dW of 130 -> 10 (batch 1000) with odd columns */
    {1024, 128, 128}, {1024, 784, 128}, {1000, 130, 10},
};
enum { N_FIXED = sizeof fixed_shapes / sizeof fixed_shapes[0], N_RANDOM = 3 };

/* FFNN_TEST_QUICK (test_parity.h): the small fixed shapes only, an odd one included */
static const size_t quick_shapes[] = {1, 3, 7};
#define N_QUICK (sizeof quick_shapes / sizeof quick_shapes[0])
static size_t shape_count(void) { return test_quick() ? N_QUICK : N_FIXED + N_RANDOM; }

static shape shape_at(rng *r, size_t i)
{
    if (test_quick()) return fixed_shapes[quick_shapes[i]];
    if (i < N_FIXED) return fixed_shapes[i];
    shape s = {rng_between(r, 1, 300), rng_between(r, 1, 600), rng_between(r, 1, 300)};
    return s;
}

static const ffnn_activation acts[] = {FFNN_ACT_IDENTITY, FFNN_ACT_RELU, FFNN_ACT_SIGMOID,
                                       FFNN_ACT_TANH};

/* ------------------------------------------------------------------ forward */

/* a = act(x W^T (+ b)) for every activation, with and without bias, on one shape;
 * with pointer offset `off` floats (1: unaligned, the scalar paths). */
static test_result act_forward_shape(fixture *fx, rng *r, shape s, size_t off)
{
    const size_t nx = s.batch * s.in, nw = s.out * s.in, nz = s.batch * s.out;
    float *x = malloc((nx + off) * sizeof(float)), *W = malloc((nw + off) * sizeof(float));
    float *b = malloc(s.out * sizeof(float)), *z = malloc(nz * sizeof(float));
    float *want = malloc(nz * sizeof(float)), *got = malloc(nz * sizeof(float));
    float *again = malloc(nz * sizeof(float));
    test_result res = TEST_FAIL;
    if (!x || !W || !b || !z || !want || !got || !again) goto done;
    fill_uniform(r, x, nx + off, -1.0f, 1.0f);
    fill_uniform(r, W, nw + off, -1.0f, 1.0f);
    fill_uniform(r, b, s.out, -1.0f, 1.0f);
    ffnn_cpu_dense_forward(x + off, W + off, NULL, z, s.batch, s.in, s.out);

    fx_reset(fx);
    const float *dx_ = dev_f32(fx, x, nx + off), *dW_ = dev_f32(fx, W, nw + off);
    const float *db_ = dev_f32(fx, b, s.out);
    float *da = dev_f32(fx, NULL, nz);
    if (!dx_ || !dW_ || !db_ || !da) {
        fprintf(stderr, "    device buffers: %s\n", ffnn_last_error());
        goto done;
    }
    for (int with_bias = 0; with_bias <= 1; ++with_bias) {
        for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ++ai) {
            /* the CPU reference: sum + b (dense_forward's expression), then act */
            for (size_t i = 0; i < nz; ++i) want[i] = with_bias ? z[i] + b[i % s.out] : z[i];
            ffnn_cpu_activation_forward(acts[ai], 0.0f, want, want, nz);
            ffnn_status st = fx->gpu->fused->dense_act_forward(fx->ctx, dx_ + off, dW_ + off,
                                                        with_bias ? db_ : NULL, da, s.batch,
                                                        s.in, s.out, acts[ai]);
            CHECK(st == FFNN_OK, "dense_act_forward: %s", ffnn_last_error());
            CHECK(get_f32(fx, got, da, nz), "download: %s", ffnn_last_error());
            char what[160];
            snprintf(what, sizeof what, "a %zux%zu->%zu %s%s off %zu", s.batch, s.in, s.out,
                     ffnn_activation_name(acts[ai]), with_bias ? " +b" : "", off);
            if (!close_f32(what, got, want, nz, mm_atol(s.in), RTOL)) goto done;
            /* a rerun gives the same bits */
            CHECK_OK(fx->gpu->fused->dense_act_forward(fx->ctx, dx_ + off, dW_ + off,
                                                with_bias ? db_ : NULL, da, s.batch, s.in,
                                                s.out, acts[ai]));
            CHECK(get_f32(fx, again, da, nz), "download: %s", ffnn_last_error());
            if (!same_f32(what, again, got, nz)) goto done;
        }
    }
    res = TEST_PASS;
done:
    free(x), free(W), free(b), free(z), free(want), free(got), free(again);
    return res;
}

static test_result act_forward_body(fixture *fx)
{
    rng r = {0x5eed0f05edULL};
    for (size_t i = 0; i < shape_count(); ++i) {
        test_result t = act_forward_shape(fx, &r, shape_at(&r, i), 0);
        if (t != TEST_PASS) return t;
    }
    /* unaligned operands with otherwise float4-friendly sizes */
    const shape un[] = {{64, 784, 256}, {128, 64, 132}};
    for (size_t i = 0; i < 2; ++i) {
        test_result t = act_forward_shape(fx, &r, un[i], 1);
        if (t != TEST_PASS) return t;
    }
    return TEST_PASS;
}

TEST_WITH("fused_act_forward", fused_act_forward, with_gpu, act_forward_body);

/* ------------------------------------------------------------------ backward */

/* dense_backward_fused on one shape, for every x_act, with and without bias and
 * sgd, dx wanted or not. */
static test_result backward_shape(fixture *fx, rng *r, shape s)
{
    const size_t nx = s.batch * s.in, nw = s.out * s.in, nz = s.batch * s.out;
    const float lr = 0.05f;
    float *x = malloc(nx * sizeof(float)), *W = malloc(nw * sizeof(float));
    float *b = malloc(s.out * sizeof(float)), *dz = malloc(nz * sizeof(float));
    float *dx_c = malloc(nx * sizeof(float)), *dW_c = malloc(nw * sizeof(float));
    float *db_c = malloc(s.out * sizeof(float)), *want = malloc(nx * sizeof(float));
    float *db_g = malloc(s.out * sizeof(float)); /* db in the GPU's order */
    float *got = malloc((nx > nw ? nx : nw) * sizeof(float));
    float *got2 = malloc((nx > nw ? nx : nw) * sizeof(float));
    float *gdW = malloc(nw * sizeof(float)), *gdb = malloc(s.out * sizeof(float));
    float *Wn = malloc(nw * sizeof(float)), *bn = malloc(s.out * sizeof(float));
    float *gxdb = malloc(s.in * sizeof(float)), *gxdb2 = malloc(s.in * sizeof(float));
    test_result res = TEST_FAIL;
    if (!x || !W || !b || !dz || !dx_c || !dW_c || !db_c || !db_g || !want || !got || !got2 || !gdW ||
        !gdb || !Wn || !bn || !gxdb || !gxdb2)
        goto done;
    fill_uniform(r, x, nx, -1.0f, 1.0f);
    fill_uniform(r, W, nw, -1.0f, 1.0f);
    fill_uniform(r, b, s.out, -1.0f, 1.0f);
    fill_uniform(r, dz, nz, -1.0f, 1.0f);
    ffnn_cpu_dense_backward(x, W, dz, dx_c, dW_c, db_c, s.batch, s.in, s.out);
    const int db_chunks = db_plan_order(dz, s.batch, s.in, s.out, 0, db_g);

    char what[192];
    for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ++ai) {
        const ffnn_activation act = acts[ai];
        for (int variant = 0; variant < 4; ++variant) {
            const int with_sgd = variant & 1, with_bias = (variant >> 1) & 1;
            /* no-bias layers ask for no db; dx skipped in one case per shape */
            const int want_dx = !(ai == 0 && variant == 3);
            const int want_dx_db = want_dx && !with_sgd; /* the layer below's db */
            fx_reset(fx);
            const float *d_x = dev_f32(fx, x, nx), *d_dz = dev_f32(fx, dz, nz);
            float *d_W = dev_f32(fx, W, nw), *d_b = with_bias ? dev_f32(fx, b, s.out) : NULL;
            float *d_dx = want_dx ? dev_f32(fx, NULL, nx) : NULL;
            float *d_dW = dev_f32(fx, NULL, nw);
            float *d_db = with_bias ? dev_f32(fx, NULL, s.out) : NULL;
            float *d_xdb = want_dx_db ? dev_f32(fx, NULL, s.in) : NULL;
            if (!d_x || !d_dz || !d_W || (with_bias && (!d_b || !d_db)) ||
                (want_dx && !d_dx) || !d_dW || (want_dx_db && !d_xdb)) {
                fprintf(stderr, "    device buffers: %s\n", ffnn_last_error());
                goto done;
            }
            ffnn_optimizer_step step;
            memset(&step, 0, sizeof step);
            step.kind = FFNN_OPT_SGD;
            step.lr = lr;
            ffnn_status st = fx->gpu->fused->dense_backward_fused(
                fx->ctx, d_x, d_W, d_b, d_dz, d_dx, d_dW, d_db, d_xdb, s.batch, s.in, s.out,
                act, with_sgd ? &step : NULL, NULL, 0);
            CHECK(st == FFNN_OK, "dense_backward_fused: %s", ffnn_last_error());
            snprintf(what, sizeof what, "%zux%zu->%zu x_act %s%s%s", s.batch, s.in, s.out,
                     ffnn_activation_name(act), with_sgd ? " sgd" : "", with_bias ? " +b" : "");

            if (want_dx) { /* dx = (dz W) * f'(x), f' through x as activation_backward */
                ffnn_cpu_activation_backward(act, 0.0f, x, dx_c, want, nx);
                CHECK(get_f32(fx, got, d_dx, nx), "download: %s", ffnn_last_error());
                if (!close_f32("dx", got, want, nx, mm_atol(s.out), RTOL)) goto fail;
            }
            if (want_dx_db) { /* the sums of the dx written */
                CHECK(get_f32(fx, gxdb, d_xdb, s.in), "download: %s", ffnn_last_error());
                if (!dx_db_close(gxdb, got, s.batch, s.in)) goto fail;
            }
            /* cuBLASLt with sgd updates W in the matmul and leaves dW unwritten */
            const int dW_written = !(fx->lt && with_sgd);
            if (dW_written) {
                CHECK(get_f32(fx, gdW, d_dW, nw), "download: %s", ffnn_last_error());
                if (!close_f32("dW", gdW, dW_c, nw, mm_atol(s.batch), RTOL)) goto fail;
            }
            if (with_bias) {
                CHECK(get_f32(fx, gdb, d_db, s.out), "download: %s", ffnn_last_error());
                if (fx->lt ? !close_f32("db (cuBLASLt BGRADB)", gdb, db_c, s.out,
                                        mm_atol(s.batch), RTOL)
                           : !same_f32(db_chunks > 1 ? "db (the plan's chunked order)"
                                                      : "db (the CPU's summation order)",
                                        gdb, db_g, s.out))
                    goto fail;
            }
            /* W (and b) after the step: the CPU update on the GPU's own gradients gives
             * the same bits; against the CPU's gradients within the matmul tolerance */
            CHECK(get_f32(fx, got, d_W, nw), "download: %s", ffnn_last_error());
            memcpy(Wn, W, nw * sizeof(float));
            if (with_sgd && dW_written) ffnn_cpu_optimizer_update_sgd(Wn, gdW, nw, lr);
            if ((!with_sgd || dW_written) &&
                !same_f32(with_sgd ? "W after sgd (on the GPU's dW)" : "W untouched", got, Wn,
                           nw))
                goto fail;
            if (with_sgd) {
                memcpy(Wn, W, nw * sizeof(float));
                ffnn_cpu_optimizer_update_sgd(Wn, dW_c, nw, lr);
                if (!close_f32("W after sgd (CPU dW)", got, Wn, nw,
                               (double)lr * mm_atol(s.batch) + 1e-6, RTOL))
                    goto fail;
            }
            if (with_bias) {
                CHECK(get_f32(fx, got, d_b, s.out), "download: %s", ffnn_last_error());
                memcpy(bn, b, s.out * sizeof(float));
                /* cuBLASLt's db is its own sum: the update applied to it */
                if (with_sgd) ffnn_cpu_optimizer_update_sgd(bn, fx->lt ? gdb : db_g, s.out, lr);
                if (!same_f32(with_sgd ? "b after sgd" : "b untouched", got, bn, s.out))
                    goto fail;
            }
            /* a rerun (no sgd: same inputs) gives the same bits */
            if (!with_sgd && want_dx) {
                CHECK(get_f32(fx, got, d_dx, nx), "download: %s", ffnn_last_error());
                CHECK_OK(fx->gpu->fused->dense_backward_fused(fx->ctx, d_x, d_W, d_b, d_dz, d_dx,
                                                       d_dW, d_db, d_xdb, s.batch, s.in, s.out,
                                                       act, NULL, NULL, 0));
                CHECK(get_f32(fx, got2, d_dx, nx), "download: %s", ffnn_last_error());
                if (!same_f32("dx rerun", got2, got, nx)) goto fail;
                CHECK(get_f32(fx, gxdb2, d_xdb, s.in), "download: %s", ffnn_last_error());
                if (!same_f32("dx_db rerun", gxdb2, gxdb, s.in)) goto fail;
                CHECK(get_f32(fx, got2, d_dW, nw), "download: %s", ffnn_last_error());
                if (!same_f32("dW rerun", got2, gdW, nw)) goto fail;
            }
        }
    }
    res = TEST_PASS;
    goto done;
fail:
    fprintf(stderr, "    (case %s)\n", what);
done:
    free(x), free(W), free(b), free(dz), free(dx_c), free(dW_c), free(db_c), free(db_g), free(want);
    free(got), free(got2), free(gdW), free(gdb), free(Wn), free(bn), free(gxdb), free(gxdb2);
    return res;
}

static test_result backward_body(fixture *fx)
{
    rng r = {0xbac4f05edULL};
    for (size_t i = 0; i < shape_count(); ++i) {
        test_result t = backward_shape(fx, &r, shape_at(&r, i));
        if (t != TEST_PASS) return t;
    }
    return TEST_PASS;
}

TEST_WITH("fused_backward", fused_backward, with_gpu, backward_body);

/* ------------------------------------------------------------------ arguments */

/* A NULL context is refused before any CUDA call: no GPU needed. */
TEST("fused_null_context", fused_null_context)
{
    if (!ffnn_has_cuda()) SKIP("build has no CUDA");
    const ffnn_backend_ops *gpu = ffnn_cuda_backend();
    CHECK(gpu != NULL, "ffnn_cuda_backend() is NULL");
    float dummy[4] = {0};
    CHECK(gpu->fused->dense_act_forward(NULL, dummy, dummy, NULL, dummy, 1, 1, 1, FFNN_ACT_RELU) ==
              FFNN_ERR_INVALID_ARGUMENT,
          "NULL context accepted");
    CHECK(strstr(ffnn_last_error(), "dense_act_forward") != NULL, "message: %s",
          ffnn_last_error());
    CHECK(gpu->fused->dense_backward_fused(NULL, dummy, dummy, NULL, dummy, NULL, dummy, NULL, NULL,
                                    1, 1, 1, FFNN_ACT_RELU, NULL,
                                    NULL, 0) == FFNN_ERR_INVALID_ARGUMENT,
          "NULL context accepted");
    CHECK(strstr(ffnn_last_error(), "dense_backward_fused") != NULL, "message: %s",
          ffnn_last_error());
    return TEST_PASS;
}

/* Refused calls on a GPU context: NULL pointers, zero dimensions, an unknown
 * activation, a non-SGD optimizer step; the context keeps working. */
TEST("fused_arguments", fused_arguments)
{
    SKIP_WITHOUT_GPU();
    const ffnn_backend_ops *gpu = ffnn_cuda_backend();
    CHECK(gpu != NULL, "ffnn_cuda_backend() is NULL");
    void *ctx = NULL;
    CHECK_OK(test_ctx(gpu, FFNN_STRATEGY_FUSED, 1, &ctx));
    void *d = NULL;
    ffnn_status st = gpu->alloc(ctx, 64 * sizeof(float), &d);
    if (st != FFNN_OK) {
        gpu->destroy(ctx);
        CHECK(0, "alloc: %s", ffnn_last_error());
    }
    float *p = (float *)d;
    /* defined values: the valid call below reads them (compute-sanitizer initcheck) */
    float host[64];
    for (int i = 0; i < 64; i++)
        host[i] = (float)(i % 7) * 0.25f - 0.5f;
    if ((st = gpu->upload(ctx, p, host, sizeof host)) != FFNN_OK ||
        (st = gpu->synchronize(ctx)) != FFNN_OK) {
        gpu->release(ctx, d);
        gpu->destroy(ctx);
        CHECK(0, "upload: %s", ffnn_last_error());
    }
    ffnn_optimizer_step mom;
    memset(&mom, 0, sizeof mom);
    mom.kind = FFNN_OPT_MOMENTUM;
    struct {
        const char *what;
        ffnn_status got;
    } cases[] = {
        {"forward x NULL", gpu->fused->dense_act_forward(ctx, NULL, p, NULL, p, 2, 2, 2, FFNN_ACT_RELU)},
        {"forward batch 0", gpu->fused->dense_act_forward(ctx, p, p, NULL, p, 0, 2, 2, FFNN_ACT_RELU)},
        {"forward act 9",
         gpu->fused->dense_act_forward(ctx, p, p, NULL, p, 2, 2, 2, (ffnn_activation)9)},
        {"backward dW NULL", gpu->fused->dense_backward_fused(ctx, p, p, NULL, p, p, NULL, NULL, NULL,
                                                      2, 2, 2, FFNN_ACT_RELU, NULL, NULL, 0)},
        {"backward W NULL with dx", gpu->fused->dense_backward_fused(ctx, p, NULL, NULL, p, p, p,
                                                             NULL, NULL, 2, 2, 2, FFNN_ACT_RELU,
                                                             NULL, NULL, 0)},
        {"backward out 0", gpu->fused->dense_backward_fused(ctx, p, p, NULL, p, p, p, NULL, NULL, 2, 2, 0,
                                                    FFNN_ACT_RELU, NULL, NULL, 0)},
        {"backward momentum", gpu->fused->dense_backward_fused(ctx, p, p, NULL, p, NULL, p, NULL, NULL,
                                                       2, 2, 2, FFNN_ACT_RELU, &mom, NULL, 0)},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        if (cases[i].got != FFNN_ERR_INVALID_ARGUMENT) {
            fprintf(stderr, "    %s: returned %d, expected invalid argument\n", cases[i].what,
                    (int)cases[i].got);
            bad = 1;
        }
    /* the context still works afterwards */
    st = gpu->fused->dense_act_forward(ctx, p, p, NULL, p + 32, 2, 2, 2, FFNN_ACT_RELU);
    gpu->release(ctx, d);
    gpu->destroy(ctx);
    CHECK(!bad, "an invalid call was accepted");
    CHECK(st == FFNN_OK, "a valid call after the refused ones failed: %s", ffnn_last_error());
    return TEST_PASS;
}

/* ------------------------------------------------------------------ tf32 */

/* bound_exp: the bound is 2^bound_exp S + mm_atol(K) (scaled_close), S = the sum
 * of |products| of the output: -9 for tf32 (TF32 keeps 10 of float's 23 mantissa
 * bits: each input is off by at most 2^-11 relative, a product by ~2^-10), -7 for
 * bf16 (8 mantissa bits: each input off by 2^-9 relative, a product by ~2^-8) */
static int bound_exp = -9;
/* bound_exp's check with a per-output S (n values; the mode-on check only when
 * require_differ). */
static int scaled_close(const char *what, const float *got, const float *want,
                        const float *S, size_t n, size_t K, int require_differ)
{
    size_t bad = 0, differs = 0;
    for (size_t i = 0; i < n; ++i) {
        const double err = fabs((double)got[i] - (double)want[i]);
        if (!(err <= ldexp(S[i], bound_exp) + mm_atol(K))) {
            if (bad++ == 0)
                fprintf(stderr, "    %s: [%zu] got %.9g want %.9g (S %.4g)\n", what, i,
                        (double)got[i], (double)want[i], (double)S[i]);
        }
        if (err > 1e-6 * S[i]) differs++;
    }
    if (bad) fprintf(stderr, "    %s: %zu of %zu outside 2^%d S\n", what, bad, n, bound_exp);
    if (require_differ && !differs)
        fprintf(stderr, "    %s: equal to fp32 everywhere: tensor cores not in use?\n", what);
    return bad == 0 && (differs > 0 || !require_differ);
}

/* Forward (+ bias, relu) and backward (dx, dW, db) with --precision tf32 (or bf16,
 * within 2^-7 S; or tf32x3 on cublaslt, within 2^-20 S; the fused context runs
 * gemm_mma.cu, cublaslt cuBLASLt) against the fp32 cpu reference: both kernel tiles (1536 x 1536 outputs take 128 x 128
 * tiles, the others 64 x 64) and all four transpose cases; db (fp32 row sums)
 * to the reference's tolerance. */
static test_result precision_body(fixture *fx, ffnn_precision precision)
{
    static const shape shapes[] = {{1536, 64, 1536}, {256, 784, 256}, {37, 129, 65}};
    rng r = {0x7f32ULL};
    /* tf32x3: each product within ~3 2^-22 relative (cublas.cu), so 2^-20 S; TF32's
     * own errors (~2^-12 S and more at these K) exceed that: the split is really on.
     * It may equal fp32 everywhere (no "differs" check) */
    const int x3 = precision == FFNN_PRECISION_TF32X3;
    bound_exp = precision == FFNN_PRECISION_BF16 ? -7 : x3 ? -20 : -9;
    CHECK_OK(fx->gpu->device->set_precision(fx->ctx, precision));
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
        const shape s = shapes[si];
        const size_t nx = s.batch * s.in, nw = s.out * s.in, nz = s.batch * s.out;
        const size_t big = nx > nw ? (nx > nz ? nx : nz) : (nw > nz ? nw : nz);
        float *x = malloc(nx * 4), *W = malloc(nw * 4), *b = malloc(s.out * 4);
        float *dz = malloc(nz * 4), *ax = malloc(nx * 4), *aW = malloc(nw * 4);
        float *adz = malloc(nz * 4), *want = malloc(big * 4), *S = malloc(big * 4);
        float *got = malloc(big * 4), *wdb = malloc(s.out * 4), *gdb = malloc(s.out * 4);
        float *tmp = malloc(big * 4);
        test_result res = TEST_FAIL;
        char what[120];
        if (!x || !W || !b || !dz || !ax || !aW || !adz || !want || !S || !got || !wdb ||
            !gdb || !tmp)
            goto done;
        fill_uniform(&r, x, nx, -1.0f, 1.0f);
        fill_uniform(&r, W, nw, -1.0f, 1.0f);
        fill_uniform(&r, b, s.out, -1.0f, 1.0f);
        fill_uniform(&r, dz, nz, -1.0f, 1.0f);
        abs_copy(ax, x, nx), abs_copy(aW, W, nw), abs_copy(adz, dz, nz);
        fx_reset(fx);
        const float *dx_ = dev_f32(fx, x, nx), *dW_ = dev_f32(fx, W, nw);
        const float *db_ = dev_f32(fx, b, s.out), *ddz = dev_f32(fx, dz, nz);
        float *da = dev_f32(fx, NULL, nz), *gdx = dev_f32(fx, NULL, nx);
        float *gdW = dev_f32(fx, NULL, nw), *gdbd = dev_f32(fx, NULL, s.out);
        CHECK(dx_ && dW_ && db_ && ddz && da && gdx && gdW && gdbd, "device buffers: %s",
              ffnn_last_error());
        /* forward: relu(x W^T + b); S = |x| |W|^T + |b| */
        ffnn_cpu_dense_forward(x, W, b, want, s.batch, s.in, s.out);
        ffnn_cpu_activation_forward(FFNN_ACT_RELU, 0.0f, want, want, nz);
        abs_copy(tmp, b, s.out);
        ffnn_cpu_dense_forward(ax, aW, tmp, S, s.batch, s.in, s.out);
        CHECK_OK(fx->gpu->fused->dense_act_forward(fx->ctx, dx_, dW_, db_, da, s.batch, s.in, s.out,
                                            FFNN_ACT_RELU));
        CHECK(get_f32(fx, got, da, nz), "download: %s", ffnn_last_error());
        snprintf(what, sizeof what, "tf32 forward %zux%zu->%zu", s.batch, s.in, s.out);
        if (!scaled_close(what, got, want, S, nz, s.in, !x3)) goto done;
        /* backward: dx = dz W, dW = dz^T x, db = column sums of dz */
        CHECK_OK(fx->gpu->fused->dense_backward_fused(fx->ctx, dx_, (float *)dW_, NULL, ddz, gdx, gdW,
                                               gdbd, NULL, s.batch, s.in, s.out, FFNN_ACT_IDENTITY,
                                               NULL, NULL, 0));
        ffnn_cpu_dense_backward(x, W, dz, want, tmp, wdb, s.batch, s.in, s.out);
        ffnn_cpu_dense_backward(ax, aW, adz, S, got, gdb, s.batch, s.in, s.out);
        CHECK(get_f32(fx, got, gdx, nx), "download: %s", ffnn_last_error());
        snprintf(what, sizeof what, "tf32 dx %zux%zu->%zu", s.batch, s.in, s.out);
        if (!scaled_close(what, got, want, S, nx, s.out, !x3)) goto done;
        /* dW: reference in tmp, its S from |dz|^T |x| (the second call's dW) */
        ffnn_cpu_dense_backward(ax, aW, adz, want, S, gdb, s.batch, s.in, s.out);
        CHECK(get_f32(fx, got, gdW, nw), "download: %s", ffnn_last_error());
        snprintf(what, sizeof what, "tf32 dW %zux%zu->%zu", s.batch, s.in, s.out);
        if (!scaled_close(what, got, tmp, S, nw, s.batch, !x3)) goto done;
        memcpy(tmp, gdb, s.out * sizeof(float)); /* column sums of |dz| */
        CHECK(get_f32(fx, gdb, gdbd, s.out), "download: %s", ffnn_last_error());
        snprintf(what, sizeof what, "tf32 db %zu", s.out);
        if (!fx->lt) {
            if (!close_f32(what, gdb, wdb, s.out, mm_atol(s.batch), RTOL)) goto done;
        } else { /* cuBLASLt's BGRADB sums the GEMM's (tf32 / bf16-rounded) operand */
            size_t bad = 0;
            for (size_t i = 0; i < s.out; ++i)
                if (!(fabs((double)gdb[i] - (double)wdb[i]) <=
                      ldexp(tmp[i], bound_exp) + mm_atol(s.batch)))
                    bad++;
            CHECK(bad == 0, "%s: %zu of %zu outside 2^%d sum|dz| + atol", what, bad, s.out,
                  bound_exp);
        }
        res = TEST_PASS;
    done:
        free(x), free(W), free(b), free(dz), free(ax), free(aW), free(adz), free(want);
        free(S), free(got), free(wdb), free(gdb), free(tmp);
        if (res != TEST_PASS) return res;
    }
    return TEST_PASS;
}

static test_result tf32_body(fixture *fx) { return precision_body(fx, FFNN_PRECISION_TF32); }
static test_result tf32x3_body(fixture *fx) { return precision_body(fx, FFNN_PRECISION_TF32X3); }
static test_result bf16_body(fixture *fx) { return precision_body(fx, FFNN_PRECISION_BF16); }

TEST_WITH("fused_tf32_tensor_cores_vs_cpu", fused_tf32, with_gpu, tf32_body);

/* The tensor-core kernel (gemm_mma.cu) on the fused context, every epilogue: per
 * shape and activation f in {identity, relu, sigmoid, tanh}: a = f(x W^T + b)
 * (within 2^e S: |f'| <= 1), then dense_backward_fused with x_act f, bias and sgd:
 * dx = (dz W) * f'(x) within 2^e S |f'(x)| (f' through x as activation_backward),
 * dW within 2^e S, db bit-identical to the CPU (fp32 row sums of dz, its order;
 * where the plan splits the batch, per chunk in that order, chunks added in
 * ascending order), W and b after sgd bit-identical to the CPU update on the GPU's
 * dW and that db;
 * a forward rerun gives the same bits. e = -9 (tf32) or -7 (bf16), + mm_atol(K).
 * Shapes: both block tiles in each of the three matmuls (1536 x 64 -> 1536: the
 * forward on the 128 tile; 1536 x 1536 -> 64: dx; 64 x 1536 -> 1536: dW), K not a
 * multiple of 4 or of the 32-deep k tile (129, 33, 20), K below one tile (3, 20),
 * tiny (1 x 1 -> 1, 5 x 3 -> 7) and unaligned float4 rows (37 x 129 -> 65); on an
 * H200 (132 SMs) the plan splits K in 1536 x 1536 -> 64's and 256 x 784 -> 256's
 * forward and 1536 x 64 -> 1536's weight gradient. */
static test_result mma_epilogues_body(fixture *fx, ffnn_precision precision)
{
    static const shape shapes[] = {{1536, 64, 1536}, {1536, 1536, 64}, {64, 1536, 1536},
                                   {37, 129, 65},    {130, 20, 70},    {64, 33, 130},
                                   {5, 3, 7},        {1, 1, 1},        {256, 784, 256}};
    static const ffnn_activation fs[] = {FFNN_ACT_IDENTITY, FFNN_ACT_RELU, FFNN_ACT_SIGMOID,
                                         FFNN_ACT_TANH};
    rng r = {0x3a3aULL + (uint64_t)precision};
    const float lr = 0.05f;
    bound_exp = precision == FFNN_PRECISION_BF16 ? -7 : -9;
    CHECK_OK(fx->gpu->device->set_precision(fx->ctx, precision));
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
        const shape s = shapes[si];
        const size_t nx = s.batch * s.in, nw = s.out * s.in, nz = s.batch * s.out;
        const size_t big = nx > nw ? (nx > nz ? nx : nz) : (nw > nz ? nw : nz);
        float *x = malloc(nx * 4), *W = malloc(nw * 4), *b = malloc(s.out * 4);
        float *dz = malloc(nz * 4), *ax = malloc(nx * 4), *aW = malloc(nw * 4);
        float *adz = malloc(nz * 4), *ab = malloc(s.out * 4), *want = malloc(big * 4);
        float *S = malloc(big * 4), *got = malloc(big * 4), *got2 = malloc(big * 4);
        float *dx_c = malloc(nx * 4), *dW_c = malloc(nw * 4), *db_c = malloc(s.out * 4);
        float *Sdx = malloc(nx * 4), *SdW = malloc(nw * 4), *tmp = malloc(big * 4);
        float *gdW = malloc(nw * 4), *Wn = malloc(nw * 4), *bn = malloc(s.out * 4);
        test_result res = TEST_FAIL;
        char what[160];
        if (!x || !W || !b || !dz || !ax || !aW || !adz || !ab || !want || !S || !got ||
            !got2 || !dx_c || !dW_c || !db_c || !Sdx || !SdW || !tmp || !gdW || !Wn || !bn)
            goto done;
        fill_uniform(&r, x, nx, -1.0f, 1.0f);
        fill_uniform(&r, W, nw, -1.0f, 1.0f);
        fill_uniform(&r, b, s.out, -1.0f, 1.0f);
        fill_uniform(&r, dz, nz, -1.0f, 1.0f);
        abs_copy(ax, x, nx), abs_copy(aW, W, nw), abs_copy(adz, dz, nz), abs_copy(ab, b, s.out);
        ffnn_cpu_dense_forward(ax, aW, ab, S, s.batch, s.in, s.out); /* S of the forward */
        ffnn_cpu_dense_backward(x, W, dz, dx_c, dW_c, db_c, s.batch, s.in, s.out);
        /* db in the GPU's order (the plan may split the batch: db_plan_order) */
        const int db_chunks = db_plan_order(dz, s.batch, s.in, s.out, 1, db_c);
        ffnn_cpu_dense_backward(ax, aW, adz, Sdx, SdW, tmp, s.batch, s.in, s.out);
        for (size_t fi = 0; fi < sizeof fs / sizeof fs[0]; ++fi) {
            const ffnn_activation f = fs[fi];
            const int differ = nz >= 64; /* tiny outputs may all round back */
            snprintf(what, sizeof what, "%s %zux%zu->%zu %s", ffnn_precision_name(precision),
                     s.batch, s.in, s.out, ffnn_activation_name(f));
            fx_reset(fx);
            const float *d_x = dev_f32(fx, x, nx), *d_dz = dev_f32(fx, dz, nz);
            float *d_W = dev_f32(fx, W, nw), *d_b = dev_f32(fx, b, s.out);
            float *d_a = dev_f32(fx, NULL, nz), *d_dx = dev_f32(fx, NULL, nx);
            float *d_dW = dev_f32(fx, NULL, nw), *d_db = dev_f32(fx, NULL, s.out);
            CHECK(d_x && d_dz && d_W && d_b && d_a && d_dx && d_dW && d_db,
                  "device buffers: %s", ffnn_last_error());
            /* forward: f(x W^T + b), twice (same bits) */
            CHECK_OK(fx->gpu->fused->dense_act_forward(fx->ctx, d_x, d_W, d_b, d_a, s.batch, s.in,
                                                s.out, f));
            CHECK(get_f32(fx, got, d_a, nz), "download: %s", ffnn_last_error());
            ffnn_cpu_dense_forward(x, W, b, want, s.batch, s.in, s.out);
            ffnn_cpu_activation_forward(f, 0.0f, want, want, nz);
            if (!scaled_close("forward", got, want, S, nz, s.in, differ)) goto fail;
            CHECK_OK(fx->gpu->fused->dense_act_forward(fx->ctx, d_x, d_W, d_b, d_a, s.batch, s.in,
                                                s.out, f));
            CHECK(get_f32(fx, got2, d_a, nz), "download: %s", ffnn_last_error());
            if (!same_f32("forward rerun", got2, got, nz)) goto fail;
            /* backward with x_act f, bias, sgd */
            ffnn_optimizer_step step;
            memset(&step, 0, sizeof step);
            step.kind = FFNN_OPT_SGD;
            step.lr = lr;
            CHECK_OK(fx->gpu->fused->dense_backward_fused(fx->ctx, d_x, d_W, d_b, d_dz, d_dx, d_dW,
                                                   d_db, NULL, s.batch, s.in, s.out, f, &step,
                                                   NULL, 0));
            ffnn_cpu_activation_backward(f, 0.0f, x, dx_c, want, nx);
            ffnn_cpu_activation_backward(f, 0.0f, x, Sdx, tmp, nx); /* S |f'(x)| */
            abs_copy(tmp, tmp, nx);
            CHECK(get_f32(fx, got, d_dx, nx), "download: %s", ffnn_last_error());
            if (!scaled_close("dx", got, want, tmp, nx, s.out, differ && nx >= 64)) goto fail;
            CHECK(get_f32(fx, gdW, d_dW, nw), "download: %s", ffnn_last_error());
            if (!scaled_close("dW", gdW, dW_c, SdW, nw, s.batch, differ && nw >= 64))
                goto fail;
            CHECK(get_f32(fx, got, d_db, s.out), "download: %s", ffnn_last_error());
            if (!same_f32(db_chunks > 1 ? "db (the plan's chunked order)"
                                         : "db (the CPU's summation order)",
                           got, db_c, s.out))
                goto fail;
            CHECK(get_f32(fx, got, d_W, nw), "download: %s", ffnn_last_error());
            memcpy(Wn, W, nw * sizeof(float));
            ffnn_cpu_optimizer_update_sgd(Wn, gdW, nw, lr);
            if (!same_f32("W after sgd (on the GPU's dW)", got, Wn, nw)) goto fail;
            CHECK(get_f32(fx, got, d_b, s.out), "download: %s", ffnn_last_error());
            memcpy(bn, b, s.out * sizeof(float));
            ffnn_cpu_optimizer_update_sgd(bn, db_c, s.out, lr);
            if (!same_f32("b after sgd", got, bn, s.out)) goto fail;
        }
        res = TEST_PASS;
        goto done;
    fail:
        fprintf(stderr, "    (case %s)\n", what);
    done:
        free(x), free(W), free(b), free(dz), free(ax), free(aW), free(adz), free(ab);
        free(want), free(S), free(got), free(got2), free(dx_c), free(dW_c), free(db_c);
        free(Sdx), free(SdW), free(tmp), free(gdW), free(Wn), free(bn);
        if (res != TEST_PASS) return res;
    }
    return TEST_PASS;
}

static test_result mma_tf32_body(fixture *fx)
{
    return mma_epilogues_body(fx, FFNN_PRECISION_TF32);
}
static test_result mma_bf16_body(fixture *fx)
{
    return mma_epilogues_body(fx, FFNN_PRECISION_BF16);
}
TEST_WITH("fused_bf16_tensor_cores_vs_cpu", fused_bf16, with_gpu, bf16_body);
TEST_WITH("fused_tf32_mma_epilogues_shapes_vs_cpu", fused_mma_tf32, with_gpu, mma_tf32_body);
TEST_WITH("fused_bf16_mma_epilogues_shapes_vs_cpu", fused_mma_bf16, with_gpu, mma_bf16_body);

/* The same checks on the cublaslt strategy's context (the fused ops on cuBLASLt
 * epilogues, src/backend/cuda/cublas.cu): the tolerances above, except db (its
 * own summation order: the matmul tolerance) and b after sgd (bit-identical to
 * the CPU update of cuBLASLt's db). */
TEST_WITH("cublaslt_act_forward_vs_cpu", lt_act_forward, with_lt, act_forward_body);
TEST_WITH("cublaslt_backward_vs_cpu", lt_backward, with_lt, backward_body);
TEST_WITH("cublaslt_tf32_vs_cpu", lt_tf32, with_lt, tf32_body);
TEST_WITH("cublaslt_bf16_vs_cpu", lt_bf16, with_lt, bf16_body);
TEST_WITH("cublaslt_tf32x3_vs_cpu", lt_tf32x3, with_lt, tf32x3_body);

/* ---------------------------------------------- cuBLASLt tf32 dW through x^T */

/* Integers in [-2, 2]: TF32 holds them exactly. */
static void fill_small_ints(rng *r, float *v, size_t n)
{
    for (size_t i = 0; i < n; ++i) v[i] = (float)rng_between(r, 0, 4) - 2.0f;
}

/* One shape of lt_dw_transposed_exact: x, W, dz integers in [-2, 2], b too; every
 * product and every partial sum is an integer below 2^24, exact in TF32 products and
 * the fp32 accumulator in any order, so the GPU must give the cpu reference's bits:
 * dW, db and dx = dz W (x_act identity); then with sgd (lr 0.5): W - 0.5 dW and
 * b - 0.5 db, exact too. A misplaced element of x^T changes a sum by an integer:
 * caught. transposes: what gemm_plan.h's rule must say for the shape. */
static test_result lt_dw_transposed_shape(fixture *fx, rng *r, shape s, int transposes,
                                          int given_xt)
{
    const size_t nx = s.batch * s.in, nw = s.out * s.in, nz = s.batch * s.out;
    test_result res = TEST_FAIL;
    float *x = malloc(nx * 4), *W = malloc(nw * 4), *b = malloc(s.out * 4), *dz = malloc(nz * 4);
    float *dx_c = malloc(nx * 4), *dW_c = malloc(nw * 4), *db_c = malloc(s.out * 4);
    float *got = malloc((nx > nw ? nx : nw) * 4);
    char what[160];
    snprintf(what, sizeof what, "%zux%zu->%zu tf32%s", s.batch, s.in, s.out,
             given_xt ? ", x^T given" : "");
    if (ffnn_lt_dw_transposes_x(1, s.batch, s.in, s.out) != transposes ||
        fx->gpu->xt->dense_backward_wants_xt(fx->ctx, s.batch, s.in, s.out) !=
            ffnn_lt_xt_from_gather(1, s.batch, s.in, s.out)) {
        fprintf(stderr, "    %s: ffnn_lt_dw_transposes_x is not %d or dense_backward_wants_xt "
                "not gemm_plan.h's rule\n", what, transposes);
        goto done;
    }
    if (!x || !W || !b || !dz || !dx_c || !dW_c || !db_c || !got) goto done;
    fill_small_ints(r, x, nx);
    fill_small_ints(r, W, nw);
    fill_small_ints(r, b, s.out);
    fill_small_ints(r, dz, nz);
    ffnn_cpu_dense_backward(x, W, dz, dx_c, dW_c, db_c, s.batch, s.in, s.out);
    float *d_x = dev_f32(fx, x, nx), *d_W = dev_f32(fx, W, nw), *d_b = dev_f32(fx, b, s.out);
    float *d_dz = dev_f32(fx, dz, nz), *d_dx = dev_f32(fx, NULL, nx);
    float *d_dW = dev_f32(fx, NULL, nw), *d_db = dev_f32(fx, NULL, s.out);
    float *d_xt = given_xt ? dev_f32(fx, NULL, nx) : NULL; /* x^T by prepare_xt */
    if (!d_x || !d_W || !d_b || !d_dz || !d_dx || !d_dW || !d_db || (given_xt && !d_xt) ||
        (given_xt && fx->gpu->xt->prepare_xt(fx->ctx, d_x, s.batch, s.in, d_xt) != FFNN_OK)) {
        fprintf(stderr, "    %s: device buffers: %s\n", what, ffnn_last_error());
        goto done;
    }
    if (fx->gpu->fused->dense_backward_fused(fx->ctx, d_x, d_W, d_b, d_dz, d_dx, d_dW, d_db, NULL,
                                      s.batch, s.in, s.out, FFNN_ACT_IDENTITY,
                                      NULL, d_xt, 0) != FFNN_OK) {
        fprintf(stderr, "    %s: %s\n", what, ffnn_last_error());
        goto done;
    }
    int ok = get_f32(fx, got, d_dW, nw) && same_f32("dW", got, dW_c, nw);
    ok = ok && get_f32(fx, got, d_db, s.out) && same_f32("db", got, db_c, s.out);
    ok = ok && get_f32(fx, got, d_dx, nx) && same_f32("dx", got, dx_c, nx);
    ffnn_optimizer_step step;
    memset(&step, 0, sizeof step);
    step.kind = FFNN_OPT_SGD;
    step.lr = 0.5f;
    if (ok && fx->gpu->fused->dense_backward_fused(fx->ctx, d_x, d_W, d_b, d_dz, NULL, d_dW, d_db,
                                            NULL, s.batch, s.in, s.out, FFNN_ACT_IDENTITY,
                                            &step, d_xt, 0) != FFNN_OK) {
        fprintf(stderr, "    %s sgd: %s\n", what, ffnn_last_error());
        goto done;
    }
    for (size_t i = 0; i < nw; ++i) W[i] -= 0.5f * dW_c[i];
    for (size_t i = 0; i < s.out; ++i) b[i] -= 0.5f * db_c[i];
    ok = ok && get_f32(fx, got, d_W, nw) && same_f32("W after sgd", got, W, nw);
    ok = ok && get_f32(fx, got, d_b, s.out) && same_f32("b after sgd", got, b, s.out);
    if (!ok) fprintf(stderr, "    %s: not the cpu's bits\n", what);
    res = ok ? TEST_PASS : TEST_FAIL;
done:
    free(x), free(W), free(b), free(dz), free(dx_c), free(dW_c), free(db_c), free(got);
    fx_reset(fx);
    return res;
}

/* cuBLASLt's tf32 weight gradient through a transposed copy of x (cublas.cu,
 * gemm_plan.h ffnn_lt_dw_transposes_x) and as before, exact on integer inputs:
 * 1024 x 784 -> 1024 (the wide net's layer 0) and 1027 x 771 -> 1029 (partial
 * 32 x 32 tiles of the transpose on both edges) take x^T; 1024 x 784 -> 256 does not.
 * Each shape twice: the op making x^T itself (or not), and x^T given (xt, made by
 * prepare_xt, as the step's gather makes it), taken at every shape. */
static test_result lt_dw_transposed_body(fixture *fx)
{
    static const struct { shape s; int transposes; } cases[] = {
        {{1024, 784, 1024}, 1}, {{1027, 771, 1029}, 1}, {{1024, 784, 256}, 0}};
    rng r = {0x7a5e7a5eULL};
    CHECK_OK(fx->gpu->device->set_precision(fx->ctx, FFNN_PRECISION_TF32));
    for (size_t i = 0; i < 2 * (sizeof cases / sizeof cases[0]); ++i) {
        const test_result t =
            lt_dw_transposed_shape(fx, &r, cases[i / 2].s, cases[i / 2].transposes, i % 2);
        if (t != TEST_PASS) return t;
    }
    return TEST_PASS;
}
TEST_WITH("cublaslt_tf32_dw_transposed_x_exact", lt_dw_transposed, with_lt, lt_dw_transposed_body);

/* TF32 of v as cvt.rna.tf32.f32 rounds it (to nearest, ties away from zero; finite v). */
static float host_tf32(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    u = (u + 0x1000u) & 0xffffe000u;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* One shape of lt_tf32x3_prepared_xt: fresh uniform x, W, b, dz in [-1, 1]. */
static test_result tf32x3_xt_shape(fixture *fx, rng *r, shape s)
{
    const size_t nx = s.batch * s.in, nw = s.out * s.in, nz = s.batch * s.out;
    test_result res = TEST_FAIL;
    float *x = malloc(nx * 4), *W = malloc(nw * 4), *b = malloc(s.out * 4), *dz = malloc(nz * 4);
    const size_t nout = 2 * nw + s.out; /* dW, db, W after sgd */
    float *xt = malloc(3 * nx * 4), *ref = malloc(nout * 4);
    float *got = malloc((3 * nx > nout ? 3 * nx : nout) * 4);
    char what[160];
    snprintf(what, sizeof what, "%zux%zu->%zu tf32x3", s.batch, s.in, s.out);
    if (!x || !W || !b || !dz || !xt || !ref || !got) goto done;
    if (fx->gpu->xt->dense_backward_wants_xt(fx->ctx, s.batch, s.in, s.out) != 3) {
        fprintf(stderr, "    %s: dense_backward_wants_xt is not 3\n", what);
        goto done;
    }
    fill_uniform(r, x, nx, -1.0f, 1.0f);
    fill_uniform(r, W, nw, -1.0f, 1.0f);
    fill_uniform(r, b, s.out, -1.0f, 1.0f);
    fill_uniform(r, dz, nz, -1.0f, 1.0f);
    float *d_x = dev_f32(fx, x, nx), *d_W = dev_f32(fx, W, nw), *d_b = dev_f32(fx, b, s.out);
    float *d_dz = dev_f32(fx, dz, nz), *d_dx = dev_f32(fx, NULL, nx);
    float *d_dW = dev_f32(fx, NULL, nw), *d_db = dev_f32(fx, NULL, s.out);
    float *d_xt = dev_f32(fx, NULL, 3 * nx);
    if (!d_x || !d_W || !d_b || !d_dz || !d_dx || !d_dW || !d_db || !d_xt ||
        fx->gpu->xt->prepare_xt(fx->ctx, d_x, s.batch, s.in, d_xt) != FFNN_OK ||
        !get_f32(fx, got, d_xt, 3 * nx)) {
        fprintf(stderr, "    %s: prepare_xt: %s\n", what, ffnn_last_error());
        goto done;
    }
    /* the form: input unit i's row [small | big | big], batch values each */
    for (size_t i = 0; i < s.in; ++i)
        for (size_t n = 0; n < s.batch; ++n) {
            const float v = x[n * s.in + i], big = host_tf32(v), small = host_tf32(v - big);
            float *row = xt + i * 3 * s.batch;
            row[n] = small, row[s.batch + n] = big, row[2 * s.batch + n] = big;
        }
    int ok = same_f32("prepared xt", got, xt, 3 * nx);
    /* the same bits from the op with and without it: dx, dW, db; then W, b after sgd */
    ffnn_optimizer_step step;
    memset(&step, 0, sizeof step);
    step.kind = FFNN_OPT_SGD;
    step.lr = 0.5f;
    for (int given = 0; ok && given < 2; ++given) {
        float *out = given ? got : ref;
        const float *use = given ? d_xt : NULL;
        ok = fx->gpu->upload(fx->ctx, d_W, W, nw * 4) == FFNN_OK &&
             fx->gpu->upload(fx->ctx, d_b, b, s.out * 4) == FFNN_OK &&
             fx->gpu->fused->dense_backward_fused(fx->ctx, d_x, d_W, d_b, d_dz, d_dx, d_dW, d_db, NULL,
                                           s.batch, s.in, s.out, FFNN_ACT_IDENTITY, NULL, use,
                                           0) == FFNN_OK &&
             get_f32(fx, out, d_dW, nw) && get_f32(fx, out + nw, d_db, s.out) &&
             fx->gpu->fused->dense_backward_fused(fx->ctx, d_x, d_W, d_b, d_dz, NULL, d_dW, d_db,
                                           NULL, s.batch, s.in, s.out, FFNN_ACT_IDENTITY, &step,
                                           use, 0) == FFNN_OK &&
             get_f32(fx, out + nw + s.out, d_W, nw);
        if (!ok) fprintf(stderr, "    %s (xt %s): %s\n", what, given ? "given" : "none",
                         ffnn_last_error());
    }
    ok = ok && same_f32("dW, db, W after sgd: xt given vs none", got, ref, nout);
    res = ok ? TEST_PASS : TEST_FAIL;
done:
    free(x), free(W), free(b), free(dz), free(xt), free(ref), free(got);
    fx_reset(fx);
    return res;
}

/* backend.h prepare_xt in tf32x3 (cublas.cu "tf32x3"): its split x^T holds each
 * input unit's row [small | big | big] of the batch (checked element by element
 * against the host's TF32 rounding, as cvt.rna), and the weight gradient given it
 * (as the step's gather and forward make it) gives the bits of the op splitting x
 * itself: dW, db, and W, b after sgd (lr 0.5). The wide net's layer 0 (1024 x 784
 * -> 1024), partial 32 x 32 tiles on every edge (1027 x 771 -> 29), a short batch
 * (37 x 100 -> 10); fresh uniform inputs in [-1, 1]. */
static test_result lt_tf32x3_xt_body(fixture *fx)
{
    static const shape cases[] = {{1024, 784, 1024}, {1027, 771, 29}, {37, 100, 10}};
    rng r = {0x3f32a3a3ULL};
    CHECK(fx->gpu->xt != NULL, "the cuda table has no prepare_xt");
    CHECK_OK(fx->gpu->device->set_precision(fx->ctx, FFNN_PRECISION_TF32X3));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const test_result t = tf32x3_xt_shape(fx, &r, cases[i]);
        if (t != TEST_PASS) return t;
    }
    return TEST_PASS;
}
TEST_WITH("cublaslt_tf32x3_prepared_xt_same_bits", lt_tf32x3_prepared_xt, with_lt,
          lt_tf32x3_xt_body);

/* ------------------------------------ the weight gradient beside (dw_side) */

/* One run of lt_dw_beside_body: layer 1 (1024 -> 1024, batch 1024: dx, relu's f',
 * dx_db, dW1 - on the second stream when dw_side) then layer 0 (784 -> 1024: dW0 from
 * layer 1's dx, on the main queue) as the step queues them, then side_join; W1, W0
 * uploaded fresh first (sgd updates them). Outputs into out: dx, dx_db, then dW1
 * and dW0 (sgd: W1 and W0 after the update). */
typedef struct beside_bufs {
    float *x1, *xt1, *W1, *dz1, *dx1, *dxdb, *dW1, *x0, *xt0, *W0, *dW0;
} beside_bufs;
enum { BS_B = 1024, BS_H = 1024, BS_IN = 784 };
static int lt_beside_run(fixture *fx, const beside_bufs *d, const float *W1, const float *W0,
                         const ffnn_optimizer_step *sgd, int dw_side, float *out)
{
    const size_t nx = (size_t)BS_B * BS_H, nw1 = (size_t)BS_H * BS_H, nw0 = (size_t)BS_H * BS_IN;
    if (fx->gpu->upload(fx->ctx, d->W1, W1, nw1 * 4) != FFNN_OK ||
        fx->gpu->upload(fx->ctx, d->W0, W0, nw0 * 4) != FFNN_OK ||
        fx->gpu->fused->dense_backward_fused(fx->ctx, d->x1, d->W1, NULL, d->dz1, d->dx1, d->dW1, NULL,
                                      d->dxdb, BS_B, BS_H, BS_H, FFNN_ACT_RELU, sgd, d->xt1,
                                      dw_side) != FFNN_OK ||
        fx->gpu->fused->dense_backward_fused(fx->ctx, d->x0, d->W0, NULL, d->dx1, NULL, d->dW0, NULL,
                                      NULL, BS_B, BS_IN, BS_H, FFNN_ACT_IDENTITY, sgd, d->xt0,
                                      0) != FFNN_OK ||
        fx->gpu->side->side_join(fx->ctx) != FFNN_OK)
        return 0;
    return get_f32(fx, out, d->dx1, nx) && get_f32(fx, out + nx, d->dxdb, BS_H) &&
           get_f32(fx, out + nx + BS_H, sgd ? d->W1 : d->dW1, nw1) &&
           get_f32(fx, out + nx + BS_H + nw1, sgd ? d->W0 : d->dW0, nw0);
}

/* backend.h dense_backward_fused's dw_side on cuBLASLt: the wide net's last two
 * layers' backward (lt_beside_run) in order and with layer 1's weight gradient
 * beside (on an H200 gemm_plan.h ffnn_lt_dw_beside takes 1024 x 1024 in tf32: its
 * 64 tiles and layer 0's 56 then run at once, each matmul with its own cuBLASLt
 * workspace) give the same bits: dx, dx_db, dW1, dW0, and with sgd (lr 0.1) W1, W0
 * after the update. Fresh random inputs (x relu outputs, x^T by prepare_xt as
 * the step makes it), tf32 and fp32 (the rule keeps fp32 in order). */
static test_result lt_dw_beside_body(fixture *fx)
{
    const size_t nx1 = (size_t)BS_B * BS_H, nx0 = (size_t)BS_B * BS_IN;
    const size_t nw1 = (size_t)BS_H * BS_H, nw0 = (size_t)BS_H * BS_IN;
    const size_t nout = nx1 + BS_H + nw1 + nw0;
    rng r = {0xbe51deULL};
    float *x1 = malloc(nx1 * 4), *dz1 = malloc(nx1 * 4), *x0 = malloc(nx0 * 4);
    float *W1 = malloc(nw1 * 4), *W0 = malloc(nw0 * 4);
    float *in_order = malloc(nout * 4), *beside = malloc(nout * 4);
    test_result res = TEST_FAIL;
    if (!x1 || !dz1 || !x0 || !W1 || !W0 || !in_order || !beside) goto done;
    fill_uniform(&r, x1, nx1, -1.0f, 1.0f);
    for (size_t i = 0; i < nx1; ++i) x1[i] = x1[i] > 0.0f ? x1[i] : 0.0f; /* relu outputs */
    fill_uniform(&r, dz1, nx1, -1.0f, 1.0f);
    fill_uniform(&r, x0, nx0, 0.0f, 1.0f);
    fill_uniform(&r, W1, nw1, -0.05f, 0.05f);
    fill_uniform(&r, W0, nw0, -0.05f, 0.05f);
    beside_bufs d = {dev_f32(fx, x1, nx1), dev_f32(fx, NULL, nx1), dev_f32(fx, NULL, nw1),
                     dev_f32(fx, dz1, nx1), dev_f32(fx, NULL, nx1), dev_f32(fx, NULL, BS_H),
                     dev_f32(fx, NULL, nw1), dev_f32(fx, x0, nx0), dev_f32(fx, NULL, nx0),
                     dev_f32(fx, NULL, nw0), dev_f32(fx, NULL, nw0)};
    if (!d.x1 || !d.xt1 || !d.W1 || !d.dz1 || !d.dx1 || !d.dxdb || !d.dW1 || !d.x0 ||
        !d.xt0 || !d.W0 || !d.dW0 || fx->gpu->xt->prepare_xt(fx->ctx, d.x1, BS_B, BS_H, d.xt1) ||
        fx->gpu->xt->prepare_xt(fx->ctx, d.x0, BS_B, BS_IN, d.xt0)) {
        fprintf(stderr, "    device buffers: %s\n", ffnn_last_error());
        goto done;
    }
    ffnn_optimizer_step step;
    memset(&step, 0, sizeof step);
    step.kind = FFNN_OPT_SGD;
    step.lr = 0.1f;
    static const ffnn_precision precisions[] = {FFNN_PRECISION_TF32, FFNN_PRECISION_FP32};
    for (int pi = 0; pi < 2; ++pi)
        for (int with_sgd = 0; with_sgd < 2; ++with_sgd) {
            const ffnn_optimizer_step *sgd = with_sgd ? &step : NULL;
            const char *what = pi == 0 ? "tf32" : "fp32";
            if (fx->gpu->device->set_precision(fx->ctx, precisions[pi]) != FFNN_OK ||
                !lt_beside_run(fx, &d, W1, W0, sgd, 0, in_order) ||
                !lt_beside_run(fx, &d, W1, W0, sgd, 1, beside)) {
                fprintf(stderr, "    %s%s: %s\n", what, with_sgd ? " sgd" : "",
                        ffnn_last_error());
                goto done;
            }
            const float *a = beside, *b = in_order;
            if (!same_f32("dx", a, b, nx1) || !same_f32("dx_db", a + nx1, b + nx1, BS_H) ||
                !same_f32(with_sgd ? "W1" : "dW1", a + nx1 + BS_H, b + nx1 + BS_H, nw1) ||
                !same_f32(with_sgd ? "W0" : "dW0", a + nx1 + BS_H + nw1,
                           b + nx1 + BS_H + nw1, nw0)) {
                fprintf(stderr, "    %s%s: beside is not in order's bits\n", what,
                        with_sgd ? " sgd" : "");
                goto done;
            }
        }
    res = TEST_PASS;
done:
    free(x1), free(dz1), free(x0), free(W1), free(W0), free(in_order), free(beside);
    fx_reset(fx);
    return res;
}
TEST_WITH("cublaslt_dw_beside_same_bits", lt_dw_beside, with_lt, lt_dw_beside_body);

/* ----------------------------------------------- x^T for the weight gradient */

/* backend.h prepare_xt outside tf32x3 (this fixture's context is fp32): x^T [cols,
 * rows] of x [rows, cols] exactly, on fresh random values, shapes with partial
 * 32 x 32 tiles on both edges, a single row and column, and the wide net's batch
 * (1024 x 784). */
static test_result transpose_body(fixture *fx)
{
    static const size_t shapes[][2] = {{1, 1}, {1, 37}, {37, 1}, {33, 65}, {1027, 771},
                                       {1024, 784}};
    rng r = {0x7ea5ULL};
    CHECK(fx->gpu->xt != NULL, "the cuda table has no prepare_xt");
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        const size_t rows = shapes[i][0], cols = shapes[i][1], n = rows * cols;
        float *a = malloc(n * 4), *want = malloc(n * 4), *got = malloc(n * 4);
        int ok = a && want && got;
        if (ok) {
            fill_uniform(&r, a, n, -1.0f, 1.0f);
            for (size_t y = 0; y < rows; ++y)
                for (size_t c = 0; c < cols; ++c) want[c * rows + y] = a[y * cols + c];
            float *d_a = dev_f32(fx, a, n), *d_t = dev_f32(fx, NULL, n);
            ok = d_a && d_t && fx->gpu->xt->prepare_xt(fx->ctx, d_a, rows, cols, d_t) == FFNN_OK &&
                 get_f32(fx, got, d_t, n) && same_f32("x^T", got, want, n);
        }
        free(a), free(want), free(got);
        fx_reset(fx);
        CHECK(ok, "prepare_xt (x^T) %zu x %zu: %s", rows, cols, ffnn_last_error());
    }
    return TEST_PASS;
}
TEST_WITH("cuda_transpose_exact", cuda_transpose_exact, with_lt, transpose_body);

/* x^T given to the op on the fused strategy's own kernels: FFNN_ERR_INVALID_ARGUMENT;
 * dense_backward_wants_xt is 0 there. */
static test_result fused_xt_rejected_body(fixture *fx)
{
    float *p = dev_f32(fx, NULL, 64);
    CHECK(p != NULL, "device buffer: %s", ffnn_last_error());
    CHECK(fx->gpu->fused->dense_backward_fused(fx->ctx, p, p, NULL, p, NULL, p, NULL, NULL, 2, 2, 2,
                                        FFNN_ACT_IDENTITY, NULL, p, 0) ==
              FFNN_ERR_INVALID_ARGUMENT,
          "x^T accepted off cuBLASLt");
    CHECK(strstr(ffnn_last_error(), "cuBLASLt only") != NULL, "message: %s", ffnn_last_error());
    CHECK(!fx->gpu->xt->dense_backward_wants_xt(fx->ctx, 1024, 784, 1024),
          "the own kernels ask for x^T");
    fx_reset(fx);
    return TEST_PASS;
}
TEST_WITH("fused_xt_rejected_off_cublaslt", fused_xt_rejected, with_gpu, fused_xt_rejected_body);

/* The rule of gemm_plan.h ffnn_lt_dw_transposes_x (no GPU needed): tf32 only, and
 * only from 768 inputs, 1024 outputs and batch 1024 (where the survey measured a
 * gain); the wide net's and the 4096-wide net's layers take it, 784-256-10's not.
 * And ffnn_lt_xt_from_gather's: only up to batch 1024; ffnn_lt_dw_beside's: tensor cores,
 * at most half the SMs' worth of 128 x 128 tiles; ffnn_lt_swizzles': tf32x3, and tf32's
 * matmuls not both K-major, at outputs of 2^19..2^21 elements. */
TEST("lt_dw_transposes_x_rule", lt_dw_transposes_x_rule)
{
    CHECK(ffnn_lt_dw_transposes_x(1, 1024, 784, 1024) &&
              ffnn_lt_dw_transposes_x(1, 1024, 1024, 1024) &&
              ffnn_lt_dw_transposes_x(1, 4096, 4096, 4096),
          "the wide layers do not take x^T");
    CHECK(!ffnn_lt_dw_transposes_x(0, 1024, 1024, 1024), "fp32 / bf16 take x^T");
    CHECK(!ffnn_lt_dw_transposes_x(1, 1024, 784, 256) &&
              !ffnn_lt_dw_transposes_x(1, 256, 784, 1024) &&
              !ffnn_lt_dw_transposes_x(1, 1024, 512, 1024) &&
              !ffnn_lt_dw_transposes_x(1, 1023, 1024, 1024),
          "a shape below the thresholds takes x^T");
    /* x^T made by the gather: the wide net at batch 1024 only (measured), a subset */
    CHECK(ffnn_lt_xt_from_gather(1, 1024, 784, 1024), "the wide net's gather makes no x^T");
    CHECK(!ffnn_lt_xt_from_gather(1, 2048, 784, 1024) &&
              !ffnn_lt_xt_from_gather(1, 4096, 784, 4096) &&
              !ffnn_lt_xt_from_gather(0, 1024, 784, 1024) &&
              !ffnn_lt_xt_from_gather(1, 1024, 784, 256),
          "the gather makes x^T where it measured no gain");
    /* the weight gradient beside the layer below: tensor cores, at most half the SMs' tiles */
    CHECK(ffnn_lt_dw_beside(1, 132, 1024, 1024) && ffnn_lt_dw_beside(1, 132, 128, 64),
          "the wide net's dW1 does not go beside on 132 SMs");
    CHECK(!ffnn_lt_dw_beside(0, 132, 1024, 1024) && !ffnn_lt_dw_beside(1, 132, 4096, 4096) &&
              !ffnn_lt_dw_beside(1, 100, 1024, 1024) && !ffnn_lt_dw_beside(1, 132, 1152, 1024) &&
              !ffnn_lt_dw_beside(1, 0, 128, 128),
          "a weight gradient that fills more than half the SMs (or fp32) goes beside");
    /* CTA swizzling: the wide net's outputs in tf32x3 and tf32's backward only */
    CHECK(ffnn_lt_swizzles(1, 0, 1, 1024, 1024) && ffnn_lt_swizzles(1, 0, 1, 784, 1024) &&
              ffnn_lt_swizzles(0, 1, 0, 1024, 1024) && ffnn_lt_swizzles(0, 1, 0, 512, 1024),
          "the wide net's tf32x3 matmuls or tf32 dx / dW do not swizzle");
    CHECK(!ffnn_lt_swizzles(0, 1, 1, 1024, 1024) && !ffnn_lt_swizzles(0, 0, 0, 1024, 1024) &&
              !ffnn_lt_swizzles(1, 0, 1, 256, 256) && !ffnn_lt_swizzles(1, 0, 1, 4096, 4096) &&
              !ffnn_lt_swizzles(0, 1, 0, 2048, 1025) && !ffnn_lt_swizzles(1, 0, 1, 511, 1024),
          "tf32's forward, fp32 / bf16, or an output outside 2^19..2^21 swizzles");
    return TEST_PASS;
}

/* The split-K plan (backend/gemm_plan.h; no GPU needed) on 132 and 16 SMs over
 * random shapes, FP32 and tensor-core AUTO and a forced split: a known config; the
 * chunks cover K exactly (k_chunk a multiple of the config's BK when split, the
 * last chunk non-empty); at most FFNN_GEMM_MAX_SPLITS chunks, forced or not; the
 * workspace bound; no split when a tile fills the SMs; and the H200 cases of the
 * deep narrow net (784-128x8-10 at batch 1024) named in gemm_plan.h. */
TEST("gemm_plan_splits_cover_k", gemm_plan_splits_cover_k)
{
    rng r = {0x9a9aULL};
    for (int i = 0; i < 20000; ++i) {
        const int sms = i % 2 ? 132 : 16;
        const int M = (int)rng_between(&r, 1, 3000), N = (int)rng_between(&r, 1, 3000);
        const int K = (int)rng_between(&r, 1, 5000), tc = i % 3 == 0;
        const int force = i % 5 == 0 ? (int)rng_between(&r, 1, 40) : 0;
        const ffnn_gemm_plan p = ffnn_gemm_plan_for(sms, M, N, K, FFNN_GEMM_AUTO, tc, force);
        const int bk = ffnn_gemm_config_bk(p.config);
        CHECK(bk > 0 && (tc ? p.config >= FFNN_GEMM_MMA_128 : p.config <= FFNN_GEMM_16),
              "%dx%dx%d tc %d: config %d", M, N, K, tc, p.config);
        CHECK(p.splits >= 1 && p.splits <= FFNN_GEMM_MAX_SPLITS &&
                  (force == 0 || p.splits <= force),
              "%dx%dx%d: %d splits", M, N, K, p.splits);
        if (p.splits == 1) {
            CHECK(p.k_chunk == K, "%dx%dx%d: unsplit chunk %d", M, N, K, p.k_chunk);
        } else {
            CHECK(p.k_chunk % bk == 0 && (long long)p.k_chunk * (p.splits - 1) < K &&
                      (long long)p.k_chunk * p.splits >= K,
                  "%dx%dx%d: %d chunks of %d", M, N, K, p.splits, p.k_chunk);
            CHECK((long long)p.splits * (((long long)M * N + 3) / 4 * 4 + M) <=
                      FFNN_GEMM_SPLIT_WS_FLOATS,
                  "%dx%dx%d: %d chunks overflow the workspace", M, N, K, p.splits);
            const long long t128 = (long long)((M + 127) / 128) * ((N + 127) / 128);
            CHECK(force > 0 || t128 < sms, "%dx%dx%d: split though 128 tiles fill", M, N, K);
        }
    }
    static const struct { int M, N, K, tc, config, splits, chunk; } h200[] = {
        {128, 128, 1024, 0, FFNN_GEMM_64, 16, 64},    /* dW 128 -> 128     */
        {1024, 128, 784, 1, FFNN_GEMM_MMA_64, 5, 160}, /* forward 784 -> 128 */
        {1024, 128, 128, 1, FFNN_GEMM_MMA_32, 1, 128}, /* short K, tf32/bf16  */
        {1024, 128, 784, 0, FFNN_GEMM_32, 1, 784},    /* FP32: K < 1024      */
        {64, 256, 784, 0, FFNN_GEMM_16, 1, 784},      /* batch-64 forward    */
        {128, 128, 1024, 1, FFNN_GEMM_MMA_64, 8, 128}, /* dW in tf32/bf16    */
        {1024, 1024, 1024, 0, FFNN_GEMM_64, 1, 1024}, /* 1024 wide: unsplit */
        {1024, 128, 128, 0, FFNN_GEMM_32, 1, 128},    /* K < 512: unsplit   */
        {64, 10, 256, 0, FFNN_GEMM_16, 1, 256},
        {4096, 4096, 4096, 1, FFNN_GEMM_MMA_128W4, 1, 4096},
        {1024, 1024, 784, 1, FFNN_GEMM_MMA_64, 1, 784}, /* 1024 wide: 64, unsplit */
    };
    for (size_t i = 0; i < sizeof h200 / sizeof h200[0]; ++i) {
        const ffnn_gemm_plan p = ffnn_gemm_plan_for(132, h200[i].M, h200[i].N, h200[i].K,
                                                    FFNN_GEMM_AUTO, h200[i].tc, 0);
        CHECK(p.config == h200[i].config && p.splits == h200[i].splits &&
                  p.k_chunk == h200[i].chunk,
              "%dx%dx%d tc %d: config %d, %d x %d (expected %d, %d x %d)", h200[i].M,
              h200[i].N, h200[i].K, h200[i].tc, p.config, p.splits, p.k_chunk,
              h200[i].config, h200[i].splits, h200[i].chunk);
    }
    return TEST_PASS;
}
