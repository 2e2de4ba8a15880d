/* backend.c - the omp table: the cpu backend's host memory, with every op split
 * over OpenMP threads (static splits: schedule(static), or one contiguous range of
 * micro-tiles per thread for the matmuls; a fixed number of threads per context).
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
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend/backend.h"
#include "backend/cpu/cpu_math.h"
#include "backend/cpu/cpu_ops.h"
#include "core/error.h"
#include "omp_kernels.h"

/* Below these sizes an op runs on the calling thread. */
enum {
    ELEMENTWISE_CHUNK = 16384,   /* floats per chunk of an element-wise op (2 chunks:
                                    worth a team)                                     */
    GEMM_MIN_PARALLEL = 1 << 20, /* multiply-adds (M*N*P) of a matmul worth a team    */
    GATHER_MIN_PARALLEL = 16384, /* values (rows * features) of a gather worth a team */
    LOSS_MIN_PARALLEL = 16384,   /* values (rows * width) of a loss (expf each) worth one */
    DB_CHUNK = 1024,             /* columns of db per work item                       */
};

typedef struct omp_ctx {
    int threads;                   /* team size of every parallel region */
    const ffnn_omp_gemm_isa *isa;  /* matmul kernels                      */
    float *pack;                   /* one slot per thread for packed B panels */
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
    if (!isa) {
        ffnn_status st = ffnn_omp_gemm_select(&isa);
        if (st != FFNN_OK)
            return st;
    }
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
    ctx->isa = isa;
    *out = ctx;
    return FFNN_OK;
}

static int ompb_threads(const void *ctx) { return ((const omp_ctx *)ctx)->threads; }
const ffnn_omp_gemm_isa *ffnn_omp_isa(const void *ctx) { return ((const omp_ctx *)ctx)->isa; }

static ffnn_status ompb_create(const ffnn_backend_options *options, void **ctx)
{
    /* one kind of kernel: options.matmul and the launch shapes do not apply */
    return ffnn_omp_create_with(options ? options->threads : 0, NULL, ctx);
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

/* The end of the element-wise chunk that starts at begin (of n values). */
static size_t chunk_end(size_t n, size_t begin)
{
    return n - begin < ELEMENTWISE_CHUNK ? n : begin + ELEMENTWISE_CHUNK;
}

/* Team size for `work` units of which `min_parallel` are worth a team. */
static int team(const omp_ctx *ctx, size_t work, size_t min_parallel)
{
    return work >= min_parallel ? ctx->threads : 1;
}

/* ------------------------------------------------------------------ ops */

static ffnn_status ompb_gather(void *vctx, const ffnn_gather_source *src, const int32_t *index,
                              size_t batch, float *x, int32_t *y, float *t)
{
    const omp_ctx *ctx = vctx;
    if (!src || (!src->images == !src->values) || (src->labels && !y) || (src->targets && !t))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "omp gather: expected one of images/values, and y (t) with labels "
                         "(targets)");
    const long rows = (long)batch;
    const int nt = team(ctx, batch * src->features, GATHER_MIN_PARALLEL);
    (void)nt;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long b = 0; b < rows; b++)
        ffnn_omp_gather_rows(src, index, x, y, t, (size_t)b, (size_t)b + 1);
    return FFNN_OK;
}

static size_t tile_rows(const omp_ctx *ctx, const ffnn_omp_gemm *g)
{
    return ceil_div(g->M, ctx->isa->mr);
}

static size_t tile_count(const omp_ctx *ctx, const ffnn_omp_gemm *g)
{
    return tile_rows(ctx, g) * ceil_div(g->N, ctx->isa->nr);
}

/* This thread's number and the team's size (0 and 1 outside OpenMP). */
static size_t thread_num(void)
{
#ifdef _OPENMP
    return (size_t)omp_get_thread_num();
#else
    return 0;
#endif
}

static size_t team_size(void)
{
#ifdef _OPENMP
    return (size_t)omp_get_num_threads();
#else
    return 1;
#endif
}

/* The forward matmul z [batch, out] = x [batch, in] W^T (+ b): W^T's panels packed by
 * the caller (B = NULL). */
static ffnn_omp_gemm forward_gemm(const float *x, const float *b, float *z, size_t batch,
                                  size_t in, size_t out)
{
    const ffnn_omp_gemm g = {
        .M = batch, .N = out, .P = in,
        .A = x, .a_row = in, .a_col = 1,
        .B = NULL, .ldb = 0,
        .bias = b,
        .C = z, .ldc = out,
    };
    return g;
}

/* z [batch, out] = x [batch, in] W^T (+ b). Each thread takes a contiguous range of
 * the tiles (numbered panel by panel) and packs the panels of W^T it needs into
 * its own [in][nr] buffer as it reaches them: no barrier between packing and use. */
static ffnn_status ompb_dense_forward(void *vctx, const float *x, const float *W,
                                      const float *b, float *z, size_t batch, size_t in,
                                      size_t out)
{
    omp_ctx *ctx = vctx;
    const ffnn_omp_gemm_isa *isa = ctx->isa;
    const ffnn_omp_gemm g = forward_gemm(x, b, z, batch, in, out);
    const size_t tiles = tile_count(ctx, &g), mb = tile_rows(ctx, &g);
    const size_t panel_floats = in * isa->nr;
    const int nt = team(ctx, batch * in * out, GEMM_MIN_PARALLEL);
    ffnn_status st = reserve_pack(ctx, (size_t)nt * panel_floats);
    if (st != FFNN_OK)
        return st;
    float *pack = ctx->pack;
#pragma omp parallel num_threads(nt)
    {
        const size_t id = thread_num(), n = team_size();
        float *panel = pack + id * panel_floats; /* [in][nr] */
        size_t packed = SIZE_MAX;               /* the panel now in `panel` */
        for (size_t t = tiles * id / n; t < tiles * (id + 1) / n; t++) {
            const size_t q = t / mb;
            if (q != packed) {
                isa->pack_transposed(W, out, in, q * isa->nr, panel);
                packed = q;
            }
            isa->tile(&g, panel, (t % mb) * isa->mr, q * isa->nr);
        }
    }
    return FFNN_OK;
}

/* W [out, in] packed once for dense_forward_packed: panel q (of ceil(out / nr))
 * at packed + q * in * nr, as dense_forward packs it per call. */
static size_t ompb_dense_pack_floats(void *vctx, size_t in, size_t out)
{
    const omp_ctx *ctx = vctx;
    return ceil_div(out, ctx->isa->nr) * ctx->isa->nr * in;
}

static ffnn_status ompb_dense_pack(void *vctx, const float *W, size_t in, size_t out,
                                   float *packed)
{
    const omp_ctx *ctx = vctx;
    const size_t panels = ceil_div(out, ctx->isa->nr), nr = ctx->isa->nr;
    for (size_t q = 0; q < panels; q++)
        ctx->isa->pack_transposed(W, out, in, q * nr, packed + q * in * nr);
    return FFNN_OK;
}

/* dense_forward with W's panels packed already: the same tiles, the same bits. */
static ffnn_status ompb_dense_forward_packed(void *vctx, const float *x, const float *packed,
                                             const float *b, float *z, size_t batch,
                                             size_t in, size_t out)
{
    omp_ctx *ctx = vctx;
    const ffnn_omp_gemm_isa *isa = ctx->isa;
    const ffnn_omp_gemm g = forward_gemm(x, b, z, batch, in, out);
    const size_t tiles = tile_count(ctx, &g), mb = tile_rows(ctx, &g);
    const int nt = team(ctx, batch * in * out, GEMM_MIN_PARALLEL);
    /* fewer rows than a tile: row by row, FFNN_OMP_ROW_PANELS panels a call */
    const size_t panels = ceil_div(out, isa->nr), groups = ceil_div(panels, FFNN_OMP_ROW_PANELS);
    const int by_row = batch < isa->mr;
#pragma omp parallel num_threads(nt)
    {
        const size_t id = thread_num(), n = team_size();
        if (by_row) {
            for (size_t u = batch * groups * id / n; u < batch * groups * (id + 1) / n; u++) {
                const size_t q = (u % groups) * FFNN_OMP_ROW_PANELS;
                const size_t k = panels - q < FFNN_OMP_ROW_PANELS ? panels - q
                                                                  : FFNN_OMP_ROW_PANELS;
                isa->row(&g, packed + q * in * isa->nr, k, u / groups, q * isa->nr);
            }
        } else {
            for (size_t t = tiles * id / n; t < tiles * (id + 1) / n; t++)
                isa->tile(&g, packed + (t / mb) * in * isa->nr, (t % mb) * isa->mr,
                          (t / mb) * isa->nr);
        }
    }
    return FFNN_OK;
}

/* dense_forward_packed's tiles (or rows, batch < mr) of panels q0 .. q1 only,
 * serially: the predictor's lanes each take a share of the columns. */
static ffnn_status ompb_dense_forward_packed_part(void *vctx, const float *x,
                                                  const float *packed, const float *b,
                                                  float *z, size_t batch, size_t in,
                                                  size_t out, int part, int parts, size_t *j0,
                                                  size_t *j1)
{
    const omp_ctx *ctx = vctx;
    const ffnn_omp_gemm_isa *isa = ctx->isa;
    const ffnn_omp_gemm g = forward_gemm(x, b, z, batch, in, out);
    const size_t panels = ceil_div(out, isa->nr), mb = tile_rows(ctx, &g);
    const size_t q0 = panels * (size_t)part / (size_t)parts;
    const size_t q1 = panels * ((size_t)part + 1) / (size_t)parts;
    *j0 = q0 * isa->nr < out ? q0 * isa->nr : out;
    *j1 = q1 * isa->nr < out ? q1 * isa->nr : out;
    if (batch < isa->mr) {
        for (size_t i = 0; i < batch; i++)
            for (size_t q = q0; q < q1; q += FFNN_OMP_ROW_PANELS) {
                const size_t k = q1 - q < FFNN_OMP_ROW_PANELS ? q1 - q : FFNN_OMP_ROW_PANELS;
                isa->row(&g, packed + q * in * isa->nr, k, i, q * isa->nr);
            }
    } else {
        for (size_t q = q0; q < q1; q++)
            for (size_t t = 0; t < mb; t++)
                isa->tile(&g, packed + q * in * isa->nr, t * isa->mr, q * isa->nr);
    }
    return FFNN_OK;
}

/* Tile t of g (tiles numbered panel by panel), B read in place except the
 * right-edge panel, which the calling thread packs into its own slot [P][nr]
 * (*packed remembers which matmul's edge the slot holds). */
static void backward_tile(const omp_ctx *ctx, const ffnn_omp_gemm *g, size_t t, float *slot,
                          const ffnn_omp_gemm **packed)
{
    const ffnn_omp_gemm_isa *isa = ctx->isa;
    const size_t mb = tile_rows(ctx, g), i0 = (t % mb) * isa->mr, j0 = (t / mb) * isa->nr;
    if (g->N - j0 >= isa->nr) {
        isa->tile(g, NULL, i0, j0);
        return;
    }
    if (*packed != g) {
        isa->pack_edge(g->B, g->P, g->ldb, g->N, j0, slot);
        *packed = g;
    }
    isa->tile(g, slot, i0, j0);
}

/* dW = dz^T x, dx = dz W and db: one range over the tiles of both products and
 * the column chunks of db, cut into one contiguous part per thread. */
static ffnn_status ompb_dense_backward(void *vctx, const float *x, const float *W,
                                       const float *dz, float *dx, float *dW, float *db,
                                       size_t batch, size_t in, size_t out)
{
    omp_ctx *ctx = vctx;
    const size_t nr = ctx->isa->nr;
    /* dW [out, in] = dz^T [out, batch] . x [batch, in] */
    const ffnn_omp_gemm gw = {
        .M = out, .N = in, .P = batch,
        .A = dz, .a_row = 1, .a_col = out,
        .B = x, .ldb = in,
        .bias = NULL,
        .C = dW, .ldc = in,
    };
    /* dx [batch, in] = dz [batch, out] . W [out, in] */
    const ffnn_omp_gemm gx = {
        .M = batch, .N = in, .P = out,
        .A = dz, .a_row = out, .a_col = 1,
        .B = W, .ldb = in,
        .bias = NULL,
        .C = dx, .ldc = in,
    };
    const size_t tiles_w = tile_count(ctx, &gw), tiles_x = dx ? tile_count(ctx, &gx) : 0;
    const size_t db_chunks = db ? ceil_div(out, DB_CHUNK) : 0;
    const size_t items = tiles_w + tiles_x + db_chunks;
    const int nt = team(ctx, batch * in * out, GEMM_MIN_PARALLEL);
    const size_t slot_floats = in % nr ? (batch > out ? batch : out) * nr : 0;
    ffnn_status st = reserve_pack(ctx, (size_t)nt * slot_floats);
    if (st != FFNN_OK)
        return st;
    float *pack = ctx->pack;
#pragma omp parallel num_threads(nt)
    {
        const size_t id = thread_num(), n = team_size();
        float *slot = pack + id * slot_floats;
        const ffnn_omp_gemm *packed = NULL;
        for (size_t t = items * id / n; t < items * (id + 1) / n; t++) {
            if (t < tiles_w) {
                backward_tile(ctx, &gw, t, slot, &packed);
            } else if (t < tiles_w + tiles_x) {
                backward_tile(ctx, &gx, t - tiles_w, slot, &packed);
            } else {
                const size_t c = t - tiles_w - tiles_x;
                const size_t end = (c + 1) * DB_CHUNK < out ? (c + 1) * DB_CHUNK : out;
                ffnn_omp_column_sum(dz, batch, out, db, c * DB_CHUNK, end);
            }
        }
    }
    return FFNN_OK;
}

static ffnn_status ompb_local1d_forward(void *vctx, const float *x, const float *W,
                                        const float *b, float *z, size_t batch, size_t N,
                                        size_t R, ffnn_local1d_padding padding,
                                        ffnn_activation act)
{
    const omp_ctx *ctx = vctx;
    if (ffnn_local1d_output_size(N, R, padding) == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "omp local1d_forward: N=%zu R=%zu %s has no outputs", N, R,
                         padding == FFNN_LOCAL1D_SAME ? "same" : "valid");
    ffnn_omp_local1d_forward(x, W, b, z, batch, N, R, padding, act, ctx->threads);
    return FFNN_OK;
}

static ffnn_status ompb_local1d_backward(void *vctx, const float *x, const float *W,
                                         const float *dz, float *dx, float *dW, float *db,
                                         size_t batch, size_t N, size_t R,
                                         ffnn_local1d_padding padding)
{
    const omp_ctx *ctx = vctx;
    if (ffnn_local1d_output_size(N, R, padding) == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "omp local1d_backward: N=%zu R=%zu %s has no outputs", N, R,
                         padding == FFNN_LOCAL1D_SAME ? "same" : "valid");
    ffnn_omp_local1d_backward(x, W, dz, dx, dW, db, batch, N, R, padding, ctx->threads);
    return FFNN_OK;
}

static ffnn_status ompb_activation_forward(void *vctx, ffnn_activation act, float param,
                                          const float *z, float *a, size_t n)
{
    const omp_ctx *ctx = vctx;
    const long chunks = (long)ceil_div(n, ELEMENTWISE_CHUNK);
    const int nt = team(ctx, (size_t)chunks, 2);
    (void)nt;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long c = 0; c < chunks; c++) {
        const size_t begin = (size_t)c * ELEMENTWISE_CHUNK;
        ffnn_omp_activation_forward(act, param, z, a, begin, chunk_end(n, begin));
    }
    return FFNN_OK;
}

static ffnn_status ompb_activation_backward(void *vctx, ffnn_activation act, float param,
                                           const float *saved, const float *da, float *dz,
                                           size_t n)
{
    const omp_ctx *ctx = vctx;
    const long chunks = (long)ceil_div(n, ELEMENTWISE_CHUNK);
    const int nt = team(ctx, (size_t)chunks, 2);
    (void)nt;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long c = 0; c < chunks; c++) {
        const size_t begin = (size_t)c * ELEMENTWISE_CHUNK;
        ffnn_omp_activation_backward(
            act, param, saved, da, dz, begin, chunk_end(n, begin));
    }
    return FFNN_OK;
}

static ffnn_status ompb_loss(void *vctx, ffnn_loss loss, const float *out, const int32_t *y,
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
    const int nt = team(ctx, batch * width, LOSS_MIN_PARALLEL);
    (void)nt;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long c = 0; c < chunks; c++) {
        const size_t begin = (size_t)c * per;
        ffnn_cpu_loss_rows(loss, out, y, targets, batch, width, dout, row_loss, row_correct,
                           begin, batch - begin < per ? batch : begin + per);
    }
    return FFNN_OK;
}

static ffnn_status ompb_optimizer_update(void *vctx, const ffnn_optimizer_step *step,
                                        float *params, const float *grads, float *state,
                                        size_t n)
{
    const omp_ctx *ctx = vctx;
    if ((int)step->kind < FFNN_OPT_SGD || (int)step->kind > FFNN_OPT_ADAMW)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "omp optimizer_update: unknown optimizer %d", (int)step->kind);
    const long chunks = (long)ceil_div(n, ELEMENTWISE_CHUNK);
    const int nt = team(ctx, (size_t)chunks, 2);
    (void)nt;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long c = 0; c < chunks; c++) {
        const size_t begin = (size_t)c * ELEMENTWISE_CHUNK;
        ffnn_omp_optimizer_update(step, params, grads, state, n, begin, chunk_end(n, begin));
    }
    return FFNN_OK;
}

/* Clipping: clamp and scale in chunks; the norm's sum of squares per chunk in
 * double, the chunks' sums added in chunk order (the same for every thread count). */
static ffnn_status ompb_grad_clip(void *vctx, float *grads, size_t n, float max_norm,
                                  float max_value, float *norm_out)
{
    const omp_ctx *ctx = vctx;
    const long chunks = (long)ceil_div(n, ELEMENTWISE_CHUNK);
    const int nt = team(ctx, (size_t)chunks, 2);
    (void)nt;
    if (max_value > 0.0f) {
#pragma omp parallel for schedule(static) num_threads(nt)
        for (long c = 0; c < chunks; c++) {
            const size_t begin = (size_t)c * ELEMENTWISE_CHUNK;
            ffnn_cpu_clip_value(grads, begin, chunk_end(n, begin), max_value);
        }
    }
    if (max_norm > 0.0f) {
        double *part = malloc((size_t)(chunks > 0 ? chunks : 1) * sizeof *part);
        if (!part)
            return ffnn_fail(FFNN_ERR_NO_MEMORY, "omp grad_clip: out of memory");
#pragma omp parallel for schedule(static) num_threads(nt)
        for (long c = 0; c < chunks; c++) {
            const size_t begin = (size_t)c * ELEMENTWISE_CHUNK;
            part[c] = ffnn_cpu_sum_squares(grads, begin, chunk_end(n, begin));
        }
        double sum = 0.0;
        for (long c = 0; c < chunks; c++)
            sum += part[c];
        free(part);
        const float norm = (float)sqrt(sum);
        const float coef = ffnn_clip_coef(max_norm, norm);
#pragma omp parallel for schedule(static) num_threads(nt)
        for (long c = 0; c < chunks; c++) {
            const size_t begin = (size_t)c * ELEMENTWISE_CHUNK;
            ffnn_cpu_scale(grads, begin, chunk_end(n, begin), coef);
        }
        if (norm_out)
            *norm_out = norm;
    }
    return FFNN_OK;
}

static ffnn_status ompb_dropout(void *vctx, const float *in, float *out, size_t n, uint64_t key,
                                uint32_t threshold, float scale)
{
    const omp_ctx *ctx = vctx;
    const long chunks = (long)ceil_div(n, ELEMENTWISE_CHUNK);
    const int nt = team(ctx, (size_t)chunks, 2);
    (void)nt;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long c = 0; c < chunks; c++) {
        const size_t begin = (size_t)c * ELEMENTWISE_CHUNK;
        ffnn_cpu_dropout(in, out, begin, chunk_end(n, begin), key, threshold, scale);
    }
    return FFNN_OK;
}

static ffnn_status ompb_ema_update(void *vctx, float *ema, const float *params, size_t n,
                                   float decay, float one_minus_decay)
{
    const omp_ctx *ctx = vctx;
    const long chunks = (long)ceil_div(n, ELEMENTWISE_CHUNK);
    const int nt = team(ctx, (size_t)chunks, 2);
    (void)nt;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (long c = 0; c < chunks; c++) {
        const size_t begin = (size_t)c * ELEMENTWISE_CHUNK;
        ffnn_cpu_ema(ema, params, begin, chunk_end(n, begin), decay, one_minus_decay);
    }
    return FFNN_OK;
}

static ffnn_status ompb_loss_weights(void *ctx, const float *weights, const int32_t *index,
                                   size_t batch, size_t width, float *dout)
{
    (void)ctx;
    ffnn_cpu_loss_weights(weights, index, batch, width, dout);
    return FFNN_OK;
}

const ffnn_backend_ops ffnn_omp_backend = {
    .name = "omp",
    .caps = FFNN_CAP_THREADS,
    .create = ompb_create,
    .destroy = ompb_destroy,
    .threads = ompb_threads,
    .alloc = ompb_alloc,
    .release = ompb_release,
    .upload = ompb_copy,
    .download = ompb_copy,
    .synchronize = ompb_synchronize,
    .gather = ompb_gather,
    .dense_forward = ompb_dense_forward,
    .dense_backward = ompb_dense_backward,
    .local1d_forward = ompb_local1d_forward,
    .local1d_backward = ompb_local1d_backward,
    .activation_forward = ompb_activation_forward,
    .activation_backward = ompb_activation_backward,
    .loss = ompb_loss,
    .loss_weights = ompb_loss_weights,
    .optimizer_update = ompb_optimizer_update,
    .grad_clip = ompb_grad_clip,
    .dropout = ompb_dropout,
    .ema_update = ompb_ema_update,
    .dense_pack_floats = ompb_dense_pack_floats,
    .dense_pack = ompb_dense_pack,
    .dense_forward_packed = ompb_dense_forward_packed,
    .dense_forward_packed_part = ompb_dense_forward_packed_part,
};
