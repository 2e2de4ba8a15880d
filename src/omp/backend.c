/* backend.c - the omp table: the cpu backend's host memory, with every op split
 * over OpenMP threads (schedule(static), a fixed number of threads per context).
 *
 * Work split and determinism: the matmuls split C into micro-tiles, the
 * element-wise ops into fixed chunks of elements, the loss and the gather into
 * rows, db into columns. Every output value is computed by one thread, in an
 * order that does not depend on which thread or how many (no atomics, no
 * reductions across threads), so a run gives the same bits for any thread count
 * on the same machine (same instruction set: omp_kernels.h). Against the
 * reference, only the matmuls differ (fma and the reference's own summation
 * order): tests/test_omp.c states the tolerances. Ops smaller than a threshold
 * run on the calling thread (a parallel region costs a few microseconds).
 *
 * Built without OpenMP (make OMP_CFLAGS=), the same code runs on one thread.
 */
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../backend.h"
#include "../error.h"
#include "omp_kernels.h"

/* Below these sizes an op runs on the calling thread. */
enum {
    ELEMENTWISE_CHUNK = 16384,  /* floats per chunk of an element-wise op              */
    GEMM_MIN_PARALLEL = 65536,  /* multiply-adds (M*N*P) of a matmul worth a team      */
    ROWS_MIN_PARALLEL = 16384,  /* values (rows * width) of a gather or loss worth one */
};

typedef struct omp_ctx {
    int threads;                   /* team size of every parallel region */
    const ffnn_omp_gemm_isa *isa;  /* matmul kernels                      */
    float *pack;                   /* packed B panels (64-byte aligned)   */
    size_t pack_floats;            /* capacity of pack                    */
} omp_ctx;

ffnn_status ffnn_omp_create_with(int threads, const ffnn_omp_gemm_isa *isa, void **out)
{
    if (!out)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "omp create: out is NULL");
    if (threads < 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "omp create: threads must be 0 (all cores) or positive, found %d",
                         threads);
    omp_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "omp create: out of memory");
#ifdef _OPENMP
    ctx->threads = threads == 0 ? omp_get_max_threads() : threads;
#else
    ctx->threads = 1;
#endif
    if (ctx->threads < 1)
        ctx->threads = 1;
    ctx->isa = isa ? isa : ffnn_omp_gemm_best();
    *out = ctx;
    return FFNN_OK;
}

int ffnn_omp_threads(const void *ctx) { return ((const omp_ctx *)ctx)->threads; }
const ffnn_omp_gemm_isa *ffnn_omp_isa(const void *ctx) { return ((const omp_ctx *)ctx)->isa; }

static ffnn_status ompb_create(ffnn_kernels kernels, int threads, void **ctx)
{
    (void)kernels; /* one strategy */
    return ffnn_omp_create_with(threads, NULL, ctx);
}

static void ompb_destroy(void *vctx)
{
    omp_ctx *ctx = vctx;
    if (!ctx)
        return;
    free(ctx->pack);
    free(ctx);
}

/* 64-byte aligned blocks (whole vectors, whole cache lines). */
static ffnn_status ompb_alloc(void *ctx, size_t bytes, void **ptr)
{
    (void)ctx;
    size_t rounded = (bytes + 63) / 64 * 64;
    if (rounded < bytes)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "omp backend: %zu bytes is too large", bytes);
    *ptr = aligned_alloc(64, rounded ? rounded : 64);
    if (!*ptr)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "omp backend: allocation of %zu bytes failed",
                         bytes);
    return FFNN_OK;
}

static void ompb_release(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

static ffnn_status ompb_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    (void)ctx;
    if (bytes)
        memcpy(dst, src, bytes);
    return FFNN_OK;
}

static ffnn_status ompb_synchronize(void *ctx)
{
    (void)ctx;
    return FFNN_OK;
}

/* The packing buffer, at least `floats` long. */
static ffnn_status reserve_pack(omp_ctx *ctx, size_t floats)
{
    if (floats <= ctx->pack_floats)
        return FFNN_OK;
    if (floats > SIZE_MAX / sizeof(float) - 64)
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "omp backend: packing buffer too large");
    float *p = aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64);
    if (!p)
        return ffnn_fail(FFNN_ERR_NO_MEMORY,
                         "omp backend: out of memory for a %zu-float packing buffer", floats);
    free(ctx->pack);
    ctx->pack = p;
    ctx->pack_floats = floats;
    return FFNN_OK;
}

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

/* Team size for `work` units of which `min_parallel` are worth a team. */
static int team(const omp_ctx *ctx, size_t work, size_t min_parallel)
{
    return work >= min_parallel ? ctx->threads : 1;
}

/* ------------------------------------------------------------------ ops */

static ffnn_status ompb_gather(void *vctx, const ffnn_gather_source *src, const int32_t *index,
                              size_t batch, float *x, uint8_t *y, float *t)
{
    const omp_ctx *ctx = vctx;
    if (!src || (!src->images == !src->values) || (src->labels && !y) || (src->targets && !t))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "omp gather: expected one of images/values, and y (t) with labels "
                         "(targets)");
    const long rows = (long)batch;
    const int nt = team(ctx, batch * src->features, ROWS_MIN_PARALLEL);
    (void)nt;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long b = 0; b < rows; b++)
        ffnn_omp_gather_rows(src, index, x, y, t, (size_t)b, (size_t)b + 1);
    return FFNN_OK;
}

/* Tiles of g, numbered panel by panel (consecutive tiles share a panel of B). */
static void gemm_tiles(const omp_ctx *ctx, const ffnn_omp_gemm *g, size_t t)
{
    const size_t mb = ceil_div(g->M, ctx->isa->mr);
    ctx->isa->tile(g, (t % mb) * ctx->isa->mr, (t / mb) * ctx->isa->nr);
}

static size_t tile_count(const omp_ctx *ctx, const ffnn_omp_gemm *g)
{
    return ceil_div(g->M, ctx->isa->mr) * ceil_div(g->N, ctx->isa->nr);
}

static ffnn_status ompb_dense_forward(void *vctx, const float *x, const float *W,
                                     const float *b, float *z, size_t batch, size_t in,
                                     size_t out)
{
    omp_ctx *ctx = vctx;
    const ffnn_omp_gemm_isa *isa = ctx->isa;
    const size_t panels = ceil_div(out, isa->nr);
    ffnn_status st = reserve_pack(ctx, panels * in * isa->nr);
    if (st != FFNN_OK)
        return st;
    /* z [batch, out] = x [batch, in] . W^T, W^T packed into panels [in][nr] */
    const ffnn_omp_gemm g = {
        .M = batch, .N = out, .P = in,
        .A = x, .a_row = in, .a_col = 1,
        .B = ctx->pack, .ldb = isa->nr, .b_panel_stride = in * isa->nr, .B_edge = NULL,
        .bias = b,
        .C = z, .ldc = out,
    };
    float *pack = ctx->pack;
    const long np = (long)panels, tiles = (long)tile_count(ctx, &g);
    const int nt = team(ctx, batch * in * out, GEMM_MIN_PARALLEL);
    (void)nt;
#pragma omp parallel num_threads(nt)
    {
#pragma omp for schedule(static)
        for (long q = 0; q < np; q++)
            isa->pack_transposed(W, out, in, (size_t)q * isa->nr, pack + (size_t)q * in * isa->nr);
#pragma omp for schedule(static)
        for (long t = 0; t < tiles; t++)
            gemm_tiles(ctx, &g, (size_t)t);
    }
    return FFNN_OK;
}

static ffnn_status ompb_dense_backward(void *vctx, const float *x, const float *W,
                                      const float *dz, float *dx, float *dW, float *db,
                                      size_t batch, size_t in, size_t out)
{
    omp_ctx *ctx = vctx;
    const ffnn_omp_gemm_isa *isa = ctx->isa;
    const size_t nr = isa->nr;
    const int edge = in % nr != 0; /* dW and dx have `in` columns */
    /* the packing buffer: x's edge panel [batch][nr], then W's [out][nr] */
    ffnn_status st = reserve_pack(ctx, edge ? (batch + out) * nr : 0);
    if (st != FFNN_OK)
        return st;
    float *x_edge = edge ? ctx->pack : NULL, *w_edge = edge ? ctx->pack + batch * nr : NULL;
    const size_t edge_j0 = in / nr * nr;
    /* dW [out, in] = dz^T [out, batch] . x [batch, in] */
    const ffnn_omp_gemm gw = {
        .M = out, .N = in, .P = batch,
        .A = dz, .a_row = 1, .a_col = out,
        .B = x, .ldb = in, .b_panel_stride = nr, .B_edge = x_edge,
        .bias = NULL,
        .C = dW, .ldc = in,
    };
    /* dx [batch, in] = dz [batch, out] . W [out, in] */
    const ffnn_omp_gemm gx = {
        .M = batch, .N = in, .P = out,
        .A = dz, .a_row = out, .a_col = 1,
        .B = W, .ldb = in, .b_panel_stride = nr, .B_edge = w_edge,
        .bias = NULL,
        .C = dx, .ldc = in,
    };
    const long tiles_w = (long)tile_count(ctx, &gw), tiles_x = dx ? (long)tile_count(ctx, &gx) : 0;
    const long db_chunks = db ? (long)ceil_div(out, ELEMENTWISE_CHUNK / 16) : 0;
    const int nt = team(ctx, batch * in * out, GEMM_MIN_PARALLEL);
    (void)nt;
#pragma omp parallel num_threads(nt)
    {
        if (edge) {
#pragma omp single nowait
            isa->pack_edge(x, batch, in, in, edge_j0, x_edge);
            if (dx) {
#pragma omp single nowait
                isa->pack_edge(W, out, in, in, edge_j0, w_edge);
            }
#pragma omp barrier
        }
        /* one loop over the tiles of both products and the chunks of db */
#pragma omp for schedule(static)
        for (long t = 0; t < tiles_w + tiles_x + db_chunks; t++) {
            if (t < tiles_w) {
                gemm_tiles(ctx, &gw, (size_t)t);
            } else if (t < tiles_w + tiles_x) {
                gemm_tiles(ctx, &gx, (size_t)(t - tiles_w));
            } else {
                const size_t c = (size_t)(t - tiles_w - tiles_x), per = ELEMENTWISE_CHUNK / 16;
                const size_t end = (c + 1) * per < out ? (c + 1) * per : out;
                ffnn_omp_column_sum(dz, batch, out, db, c * per, end);
            }
        }
    }
    return FFNN_OK;
}

static ffnn_status ompb_activation_forward(void *vctx, ffnn_activation act, const float *z,
                                          float *a, size_t n)
{
    const omp_ctx *ctx = vctx;
    const long chunks = (long)ceil_div(n, ELEMENTWISE_CHUNK);
    const int nt = team(ctx, (size_t)chunks, 2);
    (void)nt;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long c = 0; c < chunks; c++) {
        const size_t begin = (size_t)c * ELEMENTWISE_CHUNK;
        ffnn_omp_activation_forward(act, z, a, begin,
                                    n - begin < ELEMENTWISE_CHUNK ? n : begin + ELEMENTWISE_CHUNK);
    }
    return FFNN_OK;
}

static ffnn_status ompb_activation_backward(void *vctx, ffnn_activation act, const float *a,
                                           const float *da, float *dz, size_t n)
{
    const omp_ctx *ctx = vctx;
    const long chunks = (long)ceil_div(n, ELEMENTWISE_CHUNK);
    const int nt = team(ctx, (size_t)chunks, 2);
    (void)nt;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long c = 0; c < chunks; c++) {
        const size_t begin = (size_t)c * ELEMENTWISE_CHUNK;
        ffnn_omp_activation_backward(
            act, a, da, dz, begin, n - begin < ELEMENTWISE_CHUNK ? n : begin + ELEMENTWISE_CHUNK);
    }
    return FFNN_OK;
}

static ffnn_status ompb_loss(void *vctx, ffnn_loss loss, const float *out, const uint8_t *y,
                            const float *targets, size_t batch, size_t width, float *dout,
                            float *row_loss, uint8_t *row_correct)
{
    if (targets && loss == FFNN_LOSS_SOFTMAX_CE)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "omp loss: softmax_ce takes class labels, not float targets");
    if (!targets && !y)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "omp loss: neither labels nor targets");
    const omp_ctx *ctx = vctx;
    /* chunks of rows, about ELEMENTWISE_CHUNK / 4 values each */
    const size_t per = width >= ELEMENTWISE_CHUNK / 4 ? 1 : ELEMENTWISE_CHUNK / 4 / width;
    const long chunks = (long)ceil_div(batch, per);
    const int nt = team(ctx, batch * width, ROWS_MIN_PARALLEL);
    (void)nt;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long c = 0; c < chunks; c++) {
        const size_t begin = (size_t)c * per;
        ffnn_omp_loss_rows(loss, out, y, targets, batch, width, dout, row_loss, row_correct,
                           begin, batch - begin < per ? batch : begin + per);
    }
    return FFNN_OK;
}

static ffnn_status ompb_optimizer_update(void *vctx, const ffnn_optimizer_step *step,
                                        float *params, const float *grads, float *state,
                                        size_t n)
{
    const omp_ctx *ctx = vctx;
    if (step->kind != FFNN_OPT_SGD && step->kind != FFNN_OPT_MOMENTUM &&
        step->kind != FFNN_OPT_ADAM)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "omp optimizer_update: unknown optimizer %d", (int)step->kind);
    const long chunks = (long)ceil_div(n, ELEMENTWISE_CHUNK);
    const int nt = team(ctx, (size_t)chunks, 2);
    (void)nt;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long c = 0; c < chunks; c++) {
        const size_t begin = (size_t)c * ELEMENTWISE_CHUNK;
        ffnn_omp_optimizer_update(step, params, grads, state, n, begin,
                                  n - begin < ELEMENTWISE_CHUNK ? n : begin + ELEMENTWISE_CHUNK);
    }
    return FFNN_OK;
}

const ffnn_backend_ops ffnn_omp_backend = {
    .name = "omp",
    .create = ompb_create,
    .destroy = ompb_destroy,
    .alloc = ompb_alloc,
    .release = ompb_release,
    .upload = ompb_copy,
    .download = ompb_copy,
    .synchronize = ompb_synchronize,
    .gather = ompb_gather,
    .dense_forward = ompb_dense_forward,
    .dense_backward = ompb_dense_backward,
    .activation_forward = ompb_activation_forward,
    .activation_backward = ompb_activation_backward,
    .loss = ompb_loss,
    .optimizer_update = ompb_optimizer_update,
};
