/* dense.c - the omp backend's dense layer (backend.h dense_forward, dense_backward)
 * and its "packed" extension (dense_pack_floats, dense_pack, dense_forward_packed,
 * dense_forward_packed_part), on gemm.c's micro-tile kernels. Work split: C's
 * micro-tiles (numbered panel by panel; dense_forward_packed: by blocks of
 * panels, packed_tiles), one contiguous range per thread; db in column chunks. Every value is computed by one thread in a fixed order
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
/* One dense op's job for ffnn_omp_run (the fields each range function reads). */
typedef struct dense_job {
    const ffnn_omp_ctx *ctx;
    const ffnn_omp_gemm *g, *gx;
    const float *W, *packed, *dz;
    float *db, *pack;
    size_t in, out, batch, mb, panels, groups, block, tiles_w, tiles_x, slot_floats;
} dense_job;

/* dense_forward's tiles [t0, t1), W packed panel by panel into member id's slot. */
static void forward_range(void *u, size_t t0, size_t t1, size_t id)
{
    const dense_job *j = u;
    const ffnn_omp_gemm_isa *isa = j->ctx->isa;
    float *panel = j->pack + id * j->slot_floats; /* [in][nr] */
    size_t packed = SIZE_MAX;                    /* the panel now in `panel` */
    for (size_t t = t0; t < t1; t++) {
        const size_t q = t / j->mb;
        if (q != packed) {
            isa->pack_transposed(j->W, j->out, j->in, q * isa->nr, panel);
            packed = q;
        }
        isa->tile(j->g, panel, (t % j->mb) * isa->mr, q * isa->nr);
    }
}

/* dense_forward_packed's units [u0, u1) of (row, group of panels), batch < mr_min. */
static void packed_rows(void *u, size_t u0, size_t u1, size_t id)
{
    (void)id;
    const dense_job *j = u;
    const ffnn_omp_gemm_isa *isa = j->ctx->isa;
    for (size_t v = u0; v < u1; v++) {
        const size_t q = (v % j->groups) * FFNN_OMP_ROW_PANELS;
        const size_t k = j->panels - q < FFNN_OMP_ROW_PANELS ? j->panels - q
                                                             : FFNN_OMP_ROW_PANELS;
        isa->row(j->g, j->packed + q * j->in * isa->nr, k, v / j->groups, q * isa->nr);
    }
}

/* dense_forward_packed's tiles [t0, t1), numbered block by block: a block is
 * `block` consecutive panels (the last one fewer), its tiles row tile by row tile
 * and, within a row tile, panel by panel. So a row tile of A is read from the
 * nearest cache once per panel of its block, and the block's panels (about
 * FFNN_OMP_BLOCK_BYTES) stay in the core's cache over all the row tiles. */
static void packed_tiles(void *u, size_t t0, size_t t1, size_t id)
{
    (void)id;
    const dense_job *j = u;
    const ffnn_omp_gemm_isa *isa = j->ctx->isa;
    for (size_t t = t0; t < t1; t++) {
        const size_t first = t / (j->block * j->mb) * j->block; /* the block's first panel */
        const size_t width = j->panels - first < j->block ? j->panels - first : j->block;
        const size_t r = t - first * j->mb, q = first + r % width;
        isa->tile(j->g, j->packed + q * j->in * isa->nr, r / width * isa->mr, q * isa->nr);
    }
}

static void backward_tile(const ffnn_omp_ctx *ctx, const ffnn_omp_gemm *g, size_t t, float *slot,
                          const ffnn_omp_gemm **packed);

/* dense_backward's items [t0, t1): dW tiles, then dx tiles, then db chunks. */
static void backward_range(void *u, size_t t0, size_t t1, size_t id)
{
    const dense_job *j = u;
    float *slot = j->pack + id * j->slot_floats;
    const ffnn_omp_gemm *packed = NULL;
    for (size_t t = t0; t < t1; t++) {
        if (t < j->tiles_w) {
            backward_tile(j->ctx, j->g, t, slot, &packed);
        } else if (t < j->tiles_w + j->tiles_x) {
            backward_tile(j->ctx, j->gx, t - j->tiles_w, slot, &packed);
        } else {
            const size_t c = t - j->tiles_w - j->tiles_x;
            const size_t end =
                (c + 1) * FFNN_OMP_DB_CHUNK < j->out ? (c + 1) * FFNN_OMP_DB_CHUNK : j->out;
            ffnn_omp_dense_bias_grad_range(j->dz, j->batch, j->out, j->db,
                                           c * FFNN_OMP_DB_CHUNK, end);
        }
    }
}

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
    dense_job j = {.ctx = ctx, .g = &g, .W = W, .in = in, .out = out, .mb = mb,
                   .pack = ctx->pack, .slot_floats = panel_floats};
    ffnn_omp_run(ctx, nt, tiles, forward_range, &j);
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
    /* fewer rows than the smallest tile: row by row, FFNN_OMP_ROW_PANELS panels a call */
    const size_t panels = ffnn_omp_ceil_div(out, isa->nr);
    const size_t groups = ffnn_omp_ceil_div(panels, FFNN_OMP_ROW_PANELS);
    const int by_row = batch < isa->mr_min;
    const size_t block = FFNN_OMP_BLOCK_BYTES / (in * isa->nr * sizeof(float));
    dense_job j = {.ctx = ctx, .g = &g, .packed = packed, .in = in, .mb = mb,
                   .panels = panels, .groups = groups, .block = block ? block : 1};
    ffnn_omp_run(ctx, nt, by_row ? batch * groups : tiles, by_row ? packed_rows : packed_tiles,
                 &j);
    return FFNN_OK;
}

/* dense_forward_packed's tiles (or rows, batch < mr_min) of panels q0 .. q1 only,
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
    if (batch < isa->mr_min) {
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
    dense_job j = {.ctx = ctx, .g = &gw, .gx = &gx, .dz = dz, .db = db, .batch = batch,
                   .out = out, .tiles_w = tiles_w, .tiles_x = tiles_x, .pack = ctx->pack,
                   .slot_floats = slot_floats};
    ffnn_omp_run(ctx, nt, items, backward_range, &j);
    return FFNN_OK;
}
