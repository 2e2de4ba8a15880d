/* persistent_gather.cuh - phase A's gather of the persistent kernel (persistent.cu):
 * the batch's rows by index from global memory into shared memory (load_x), the next
 * step's raw rows by cp.async (issue_x_u8), and L2 prefetches of the next step's rows
 * (prefetch_step). Included by persistent.cu only. */
#ifndef FFNN_CUDA_PERSISTENT_GATHER_CUH
#define FFNN_CUDA_PERSISTENT_GATHER_CUH

#include "persistent_job.cuh"

/* Words of a row per lane in load_x's fast path (rows up to 32*4*LOAD_SLOTS
 * features: 1024); each lane has 2*LOAD_SLOTS loads in flight. */
#define LOAD_SLOTS 8
/* Rows per warp and round in load_rows_u8 (4: 2 * LOAD_SLOTS loads in flight per lane
 * more than 2; batch 64 -0.1 to -0.4 ms/epoch, H200, docs/PERFORMANCE.md) */
#define LOAD_ROWS 4
/* float4 loads in flight per thread in load_x's narrow-row path */
#define NARROW_SLOTS 1

/* Rows of uint8 words (4 pixels each, up to 32*LOAD_SLOTS words per row) of the chunk
 * into Xs: warp w copies rows w, w + PWARPS, ..., R rows per round, its lanes
 * striding over the row's words, every load of a round issued before the first is
 * used; RAW keeps the words, else each becomes 4 floats p/255. */
template <int R, bool RAW>
static __device__ __forceinline__ void load_rows_u8(const pjob_dev &p, float *Xs,
                                                    const int *sidx, int rc)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, words = p.D / 4;
    unsigned *Xw = (unsigned *)Xs;
    float4 *X4 = (float4 *)Xs;
    for (int r0 = warp; r0 < rc; r0 += R * PWARPS) {
        unsigned v[R][LOAD_SLOTS];
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int r = r0 + k * PWARPS;
            const unsigned *a =
                (const unsigned *)(p.images + (size_t)sidx[r < rc ? r : r0] * p.D);
#pragma unroll
            for (int u = 0; u < LOAD_SLOTS; u++) {
                const int w = lane + 32 * u;
                v[k][u] = w < words && r < rc ? __ldg(a + w) : 0u;
            }
        }
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int r = r0 + k * PWARPS;
            if (r >= rc) break;
#pragma unroll
            for (int u = 0; u < LOAD_SLOTS; u++) {
                const int w = lane + 32 * u;
                if (w < words) {
                    if (RAW) Xw[r * p.D4s + w] = v[k][u];
                    else X4[r * p.D4s + w] = ffnn_dev_u8x4_to_unit4(v[k][u]);
                }
            }
        }
    }
}

/* load_x's narrow rows (under 16 float4s, e.g. seed 001's 32 features; D % 4 == 0):
 * all threads over the chunk's float4s, NARROW_SLOTS loads in flight each */
static __device__ __forceinline__ void load_narrow(const pjob_dev &p, float4 *X4, const int *sidx,
                                                   int rc)
{
    const int words = p.D / 4, total = rc * words;
    for (int base = threadIdx.x; base < total; base += PT * NARROW_SLOTS) {
        float4 v[NARROW_SLOTS];
#pragma unroll
        for (int u = 0; u < NARROW_SLOTS; u++) {
            const int i = base + u * PT, r = i / words, w = i - r * words;
            if (i < total) {
                if (p.images != NULL) {
                    const unsigned q = __ldg((const unsigned *)(p.images +
                                                                (size_t)sidx[r] * p.D) + w);
                    v[u] = ffnn_dev_u8x4_to_unit4(q);
                } else {
                    v[u] = __ldg((const float4 *)(p.values + (size_t)sidx[r] * p.D) + w);
                }
            }
        }
#pragma unroll
        for (int u = 0; u < NARROW_SLOTS; u++) {
            const int i = base + u * PT, r = i / words, w = i - r * words;
            if (i < total) X4[r * p.D4s + w] = v[u];
        }
    }
}

/* load_x's float rows of 64 .. 32*4*LOAD_SLOTS features (D % 4 == 0): warp w copies
 * rows w, w + PWARPS, ..., two per round, its lanes striding over the row's float4s */
static __device__ __forceinline__ void load_rows_f32(const pjob_dev &p, float4 *X4,
                                                     const int *sidx, int rc)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int words = p.D / 4; /* per row: float4s */
    for (int r0 = warp; r0 < rc; r0 += 2 * PWARPS) {
        const int r1 = r0 + PWARPS;
        const float4 *a = (const float4 *)(p.values + (size_t)sidx[r0] * p.D);
        const float4 *b = r1 < rc ? (const float4 *)(p.values + (size_t)sidx[r1] * p.D)
                                  : a;
        float4 va[LOAD_SLOTS], vb[LOAD_SLOTS];
        const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
        for (int u = 0; u < LOAD_SLOTS; u++) {
            const int w = lane + 32 * u;
            va[u] = w < words ? __ldg(a + w) : zero;
            vb[u] = w < words && r1 < rc ? __ldg(b + w) : zero;
        }
#pragma unroll
        for (int u = 0; u < LOAD_SLOTS; u++) {
            const int w = lane + 32 * u;
            if (w < words) {
                X4[r0 * p.D4s + w] = va[u];
                if (r1 < rc) X4[r1 * p.D4s + w] = vb[u];
            }
        }
    }
}

/* Rows [row, row + rc) of the epoch into Xs [RC, D4s*4] (float4 columns < D4);
 * sidx[0, rc) holds their indices already when have_idx (else loaded here).
 * Rows of 64+ features: warp w copies rows w, w + PWARPS, ..., LOAD_ROWS rows per
 * round (uint8 images, load_rows_u8) or two (float values), its lanes striding over
 * the row's 4-byte words or float4s, every load of a round issued before the first
 * is used. */
static __device__ void load_x(const pjob_dev &p, float *Xs, int *sidx, int row, int rc,
                              int have_idx)
{
    if (!have_idx) {
        for (int r = threadIdx.x; r < rc; r += PT) sidx[r] = p.index[row + r];
        __syncthreads();
    }
    float4 *X4 = (float4 *)Xs;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (p.u8) { /* raw words, 4 pixels each: no conversion here */
        unsigned *Xw = (unsigned *)Xs;
        const int words = p.D / 4;
        if (words >= 16 && words <= 32 * LOAD_SLOTS) {
            load_rows_u8<LOAD_ROWS, true>(p, Xs, sidx, rc);
        } else {
            for (int i = threadIdx.x; i < rc * words; i += PT) {
                const int r = i / words, w = i - r * words;
                Xw[r * p.D4s + w] = __ldg((const unsigned *)(p.images + (size_t)sidx[r] * p.D) + w);
            }
        }
        return;
    }
    if ((p.D & 3) == 0 && p.D < 64) {
        load_narrow(p, X4, sidx, rc);
    } else if ((p.D & 3) == 0 && p.D <= 32 * 4 * LOAD_SLOTS && p.images != NULL) {
        load_rows_u8<LOAD_ROWS, false>(p, Xs, sidx, rc);
    } else if ((p.D & 3) == 0 && p.D <= 32 * 4 * LOAD_SLOTS) {
        load_rows_f32(p, X4, sidx, rc);
    } else { /* any width: one value per thread and step, in order */
        const int cols = p.D4 * 4;
        for (int r = warp; r < rc; r += PWARPS)
            for (int d = lane; d < cols; d += 32) {
                float v = 0.0f;
                if (d < p.D) {
                    const size_t at = (size_t)sidx[r] * p.D + d;
                    v = p.images ? ffnn_dev_u8_to_unit_nodiv(p.images[at]) : p.values[at];
                }
                Xs[r * p.D4s * 4 + d] = v;
            }
    }
}

/* Start copying the rows of the epoch's `rows` rows whose indices are in nidx into
 * Xn (raw uint8 words, [rows, D4s], as load_x's): warp w copies rows w, w + PWARPS,
 * ..., its lanes striding over the row's words, asynchronously (cp.async, one commit
 * group); the caller waits with cp_async_wait_all + __syncthreads before reading Xn. */
static __device__ void issue_x_u8(const pjob_dev &p, float *Xn, const int *nidx, int rows)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, words = p.D / 4;
    unsigned *Xw = (unsigned *)Xn;
    for (int r = warp; r < rows; r += PWARPS) {
        const unsigned *a = (const unsigned *)(p.images + (size_t)nidx[r] * p.D);
        for (int w = lane; w < words; w += 32) cp_async4(Xw + r * p.D4s + w, a + w);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

/* Ask L2 for the rows of the epoch's step `step`, shared among blocks
 * [first_block, first_block + blocks) (the caller is one of them), so that the
 * next load_x finds them there instead of in HBM. */
static __device__ void prefetch_step(const pjob_dev &p, int step, int first_block, int blocks)
{
    const int row0 = step * p.B;
    if (row0 >= p.n) return;
    const int rows = min(p.B, p.n - row0);
    const size_t row_bytes = (size_t)p.D * (p.images ? 1 : 4);
    const int lines = (int)((row_bytes + 127) / 128);
    const char *base = p.images ? (const char *)p.images : (const char *)p.values;
    /* line i: block first_block + i % blocks, thread PT-1 - i / blocks % PT (the last
     * warps, which have no row in phase B unless the batch exceeds 15 rows/block) */
    const int tt = PT - 1 - (int)threadIdx.x;
    for (int i = ((int)blockIdx.x - first_block) + tt * blocks; i < rows * lines;
         i += blocks * PT) {
        const int r = i / lines, l = i - r * lines;
        const char *at = base + (size_t)p.index[row0 + r] * row_bytes + (size_t)l * 128;
        asm volatile("prefetch.global.L2 [%0];" ::"l"(at));
    }
}

#endif
