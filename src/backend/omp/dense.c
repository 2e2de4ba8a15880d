/* dense.c - the omp backend's dense layer (backend.h dense_forward, dense_backward)
 * and its "packed" extension (dense_pack_floats, dense_pack, dense_forward_packed,
 * dense_forward_packed_part), on gemm.c's micro-tile kernels. Work split: C's
 * micro-tiles (numbered panel by panel), one contiguous range per thread; db in
 * column chunks. Every value is computed by one thread in a fixed order
 * (backend.c says why the bits do not depend on the thread count). */
#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend/cpu/cpu_math.h"
#include "backend/cpu/cpu_ops.h"
#include "core/error.h"
#include "omp_kernels.h"

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

static size_t tile_rows(const ffnn_omp_ctx *ctx, const ffnn_omp_gemm *g)
{
    return ffnn_omp_ceil_div(g->M, ctx->isa->mr);
}

static size_t tile_count(const ffnn_omp_ctx *ctx, const ffnn_omp_gemm *g)
{
    return tile_rows(ctx, g) * ffnn_omp_ceil_div(g->N, ctx->isa->nr);
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
ffnn_status ffnn_omp_dense_forward(void *vctx, const float *x, const float *W,
                                   const float *b, float *z, size_t batch, size_t in,
                                   size_t out)
{
    ffnn_omp_ctx *ctx = vctx;
    const ffnn_omp_gemm_isa *isa = ctx->isa;
    const ffnn_omp_gemm g = forward_gemm(x, b, z, batch, in, out);
    const size_t tiles = tile_count(ctx, &g), mb = tile_rows(ctx, &g);
    const size_t panel_floats = in * isa->nr;
    const int nt = ffnn_omp_team(ctx, batch * in * out, FFNN_OMP_GEMM_MIN_PARALLEL);
    ffnn_status st = ffnn_omp_reserve_pack(ctx, (size_t)nt * panel_floats);
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
size_t ffnn_omp_dense_pack_floats(void *vctx, size_t in, size_t out)
{
    const ffnn_omp_ctx *ctx = vctx;
    return ffnn_omp_ceil_div(out, ctx->isa->nr) * ctx->isa->nr * in;
}

ffnn_status ffnn_omp_dense_pack(void *vctx, const float *W, size_t in, size_t out,
                                float *packed)
{
    const ffnn_omp_ctx *ctx = vctx;
    const size_t panels = ffnn_omp_ceil_div(out, ctx->isa->nr), nr = ctx->isa->nr;
    for (size_t q = 0; q < panels; q++)
        ctx->isa->pack_transposed(W, out, in, q * nr, packed + q * in * nr);
    return FFNN_OK;
}

/* dense_forward with W's panels packed already: the same tiles, the same bits. */
ffnn_status ffnn_omp_dense_forward_packed(void *vctx, const float *x, const float *packed,
                                          const float *b, float *z, size_t batch,
                                          size_t in, size_t out)
{
    ffnn_omp_ctx *ctx = vctx;
    const ffnn_omp_gemm_isa *isa = ctx->isa;
    const ffnn_omp_gemm g = forward_gemm(x, b, z, batch, in, out);
    const size_t tiles = tile_count(ctx, &g), mb = tile_rows(ctx, &g);
    const int nt = ffnn_omp_team(ctx, batch * in * out, FFNN_OMP_GEMM_MIN_PARALLEL);
    /* fewer rows than a tile: row by row, FFNN_OMP_ROW_PANELS panels a call */
    const size_t panels = ffnn_omp_ceil_div(out, isa->nr);
    const size_t groups = ffnn_omp_ceil_div(panels, FFNN_OMP_ROW_PANELS);
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
ffnn_status ffnn_omp_dense_forward_packed_part(void *vctx, const float *x,
                                               const float *packed, const float *b,
                                               float *z, size_t batch, size_t in,
                                               size_t out, int part, int parts, size_t *j0,
                                               size_t *j1)
{
    const ffnn_omp_ctx *ctx = vctx;
    const ffnn_omp_gemm_isa *isa = ctx->isa;
    const ffnn_omp_gemm g = forward_gemm(x, b, z, batch, in, out);
    const size_t panels = ffnn_omp_ceil_div(out, isa->nr), mb = tile_rows(ctx, &g);
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
static void backward_tile(const ffnn_omp_ctx *ctx, const ffnn_omp_gemm *g, size_t t, float *slot,
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
ffnn_status ffnn_omp_dense_backward(void *vctx, const float *x, const float *W,
                                    const float *dz, float *dx, float *dW, float *db,
                                    size_t batch, size_t in, size_t out)
{
    ffnn_omp_ctx *ctx = vctx;
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
    const size_t db_chunks = db ? ffnn_omp_ceil_div(out, FFNN_OMP_DB_CHUNK) : 0;
    const size_t items = tiles_w + tiles_x + db_chunks;
    const int nt = ffnn_omp_team(ctx, batch * in * out, FFNN_OMP_GEMM_MIN_PARALLEL);
    const size_t slot_floats = in % nr ? (batch > out ? batch : out) * nr : 0;
    ffnn_status st = ffnn_omp_reserve_pack(ctx, (size_t)nt * slot_floats);
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
                const size_t end =
                    (c + 1) * FFNN_OMP_DB_CHUNK < out ? (c + 1) * FFNN_OMP_DB_CHUNK : out;
                ffnn_omp_dense_bias_grad_range(dz, batch, out, db, c * FFNN_OMP_DB_CHUNK, end);
            }
        }
    }
    return FFNN_OK;
}
