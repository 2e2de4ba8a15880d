/*
 * persistent.cu - the persistent strategy (strategy persistent): one cooperative
 * kernel runs many SGD steps of a dense net in -> hidden (act) -> out with softmax
 * cross-entropy on labels or mean squared error on float targets, the weights held
 * on chip across the SMs, one or two grid-wide barriers per step (grid_barrier.cuh;
 * their cost: lab/barrier.cu, `ffnn bench barrier`).
 *
 * Work split (G = R Hg blocks of PT threads, one per SM; block g = rg Hg + hg owns
 * hidden units J = [hg*JB, hg*JB + JB) and, of every batch, the rows of row group rg,
 * [rg Bs, rg Bs + Bs) with Bs = ceil(B / R); R = 1, 2 or 4 by batch size, row_groups):
 *   on chip, block g:  W1[J, :] [JB, in], b1[J], W2[:, J] [out, JB], and a copy of
 *                      b2 [out] (every block applies the same update to it; with
 *                      R > 1 the R blocks of slice hg hold equal copies of theirs)
 *   per step (B rows, the last batch may be short; phases A-C run over the block's
 *   rows, "the batch" below; R > 1 needs the one-barrier exchange):
 *   A  gather the batch by index into shared memory in chunks of RC rows: float
 *      values, uint8 images as x = p/255 exactly (device_math.cuh's division-free
 *      form), or (u8 plans) the raw bytes, whose sums run over the pixel values p
 *      and are divided by 255 once: x W1^T as (p W1^T) / 255, dW1 as (dz1^T p) / 255;
 *      h[:, J] = act(x W1[J]^T + b1[J]); partial logits
 *      P_g[b, :] = h[b, J] W2[:, J]^T go to the exchange. Uint8 images whose whole
 *      batch fits twice as raw bytes (xbufs = 2): the next step's rows are copied
 *      with cp.async into the second buffer between this step's barrier arrival
 *      and its wait, so the next phase A only waits for that copy; the two buffers
 *      swap every step.
 *   B  logits = b2 + sum_g P_g[b, :], softmax, cross-entropy, correct, dlogits =
 *      (softmax - onehot) / B (mse: row loss mean_j (o_j - t_j)^2, dlog = 2 (o - t) /
 *      (B out), loss.cu's); two exchanges, picked per launch (Bs * out <=
 *      ONE_BARRIER_MAX: one barrier):
 *      one barrier  P_g added in 64-bit fixed point (units of 2^-32, fx_from) into
 *                   the step's accumulator acc[s % 3] [B, out]; -- grid barrier --;
 *                   every block finishes every row of its group (a quarter warp)
 *                   into its own shared memory; block hg of the group writes row
 *                   b's loss and correct where b % Hg == hg;
 *                   acc[(s + 2) % 3] (step s - 1's) is zeroed for step s + 2. The
 *                   sum is exact integer addition, so the order in which blocks add
 *                   does not matter; then rounded once to float. acc[s % 3] is read
 *                   after step s's barrier and before any block reaches step s + 1's,
 *                   zeroed after step s + 1's and added to after step s + 2's (the
 *                   launch starts with all three zeroed). A partial that is not
 *                   finite or not below 2^20 in magnitude (FX_LIMIT) marks the step,
 *                   whose logits read NaN: a diverged step stays visible.
 *                   On sm_90 with an even G (cl2), blocks 2k and 2k + 1 run as a
 *                   cluster: 2k + 1 writes its fixed-point partials into 2k's shared
 *                   memory and 2k adds each pair as one integer: half the atomics,
 *                   the same integers (the atomics' drain held the barrier: 1.4 us
 *                   of thread 0's fence at batch 64, docs/RESULTS.md history).
 *      two barriers P_g -> global part [B, G, out]; -- grid barrier 1 --; one warp
 *                   per row sums them in a fixed order (lane l: slices l, l + 32, ...,
 *                   then the butterfly) and writes dlog [B, out]; -- grid barrier 2 --;
 *                   every block reads dlog. The next step's partial logits overwrite
 *                   part only after barrier 2, its barrier 1 follows every block's
 *                   phase C: one pair of buffers serves every step.
 *   C  db2, dW2[:, J] = dlog^T h[:, J], dz1[:, J] = (dlog W2[:, J]) * act'(h), db1[J],
 *      dW1[J, :] = dz1[:, J]^T x, and p -= lr g (ffnn_dev_sgd, rounded as
 *      optimizer_update) applied to what the block owns. R > 1: these sums run over
 *      the block's rows; each block writes them to global wpart, meets the other
 *      R - 1 blocks of its slice at their own counter (gbar[hg], the grid barrier's
 *      code), and every one of them adds the R partial sums in row-group order
 *      (rg = 0, 1, ...) before the update: one fixed order, the same bits in each
 *      copy. Splitting the rows cuts each block's share of the batch (pixels moved
 *      from L2 and unpacked, rows finished in phase B) by R; the weights' work per
 *      block stays the same (JB grows by R).
 *   Results are deterministic: every float sum runs in a fixed order (R is a function
 *   of the job and the SM count); they differ from the per-op path only in summation
 *   order (and, one barrier, the fixed point's rounding of partials below 2^-8 in
 *   magnitude, to 2^-33; u8 plans, the division by 255 after the sums instead of
 *   before: within an ulp per product).
 *
 * The barrier: thread 0 of each block fences (acq_rel), adds 1 to a global counter
 * and spins (ld.acquire.gpu) until it reaches the barrier's target (k * G for the
 * k-th barrier of the launch; the counter is zeroed before each launch). Reads of
 * other blocks' data use __ldcg (L2, never a stale L1 line).
 *
 * Limits (ffnn_cuda_persistent_supported): out <= 16, in <= 2048, hidden <= 8 * SMs,
 * all blocks co-resident (cooperative launch), shared memory for RC >= 8 rows.
 */
#include <math.h>
#include <stdlib.h>

#include <cooperative_groups.h>

#include "common.cuh"
#include "device_math.cuh"
#include "grid_barrier.cuh"
#include "mma.cuh"

#define PT 512         /* threads per block                                */
#define PWARPS (PT / 32)
#define CMAX 16        /* most classes (one register per class per lane)   */
#define NPROF 8        /* phases timed with FFNN_PERSISTENT_PROFILE=1      */

/* The logits' exchange in 64-bit fixed point, units of 2^-32: a partial v with
 * |v| < FX_LIMIT = 2^20 converts exactly when |v| >= 2^-8 (v * 2^32 is then an
 * integer in float), else with an absolute error under 2^-33; G < 2^11 blocks'
 * partials sum to under 2^63. Integer addition makes the sum independent of the
 * order in which the blocks add. */
#define FX_LIMIT 1048576.0f
/* batch x classes up to which the launch takes the one-barrier exchange */
#define ONE_BARRIER_MAX 2048
static __device__ __forceinline__ long long fx_from(float v)
{
    return __float2ll_rn(v * 4294967296.0f);
}
static __device__ __forceinline__ float fx_to(long long q)
{
    return __ll2float_rn(q) * 2.3283064365386963e-10f; /* exact: a power of 2 */
}

/* With p.prof set (uniform over the grid): close phase k of thread 0's clock. */
#define PROF_MARK(k)                                                               \
    do {                                                                           \
        if (p.prof) {                                                              \
            __syncthreads();                                                       \
            if (t == 0) {                                                          \
                const long long now_ = clock64();                                  \
                pacc[k] += now_ - plast;                                           \
                plast = now_;                                                      \
            }                                                                      \
        }                                                                          \
    } while (0)

typedef struct pjob_dev {
    const uint8_t *images; /* [n_data, D] or NULL                          */
    const float *values;   /* [n_data, D] or NULL                          */
    const int32_t *labels; /* [n_data] (softmax_ce)                        */
    const float *targets;  /* [n_data, C] float targets (mse)              */
    const int32_t *index;  /* [n] epoch permutation                        */
    float *W1, *b1, *W2, *b2;
    float *row_loss;
    uint8_t *row_correct;
    int one_barrier;       /* 1: the fixed-point exchange (acc, bad); 0: part, dlog */
    long long *acc;        /* [3, B, C] logits accumulators, fixed point   */
    unsigned *bad;         /* [3] a partial out of FX_LIMIT in that step     */
    float *part;           /* [B, G, CMAX] partial logits (two barriers)   */
    float *dlog;           /* [B, C] dlogits (two barriers)                */
    unsigned *bar;         /* barrier counter, zeroed before the launch    */
    unsigned long long *prof; /* [G, NPROF] clock cycles per phase, or NULL */
    float lr;
    int D, H, C, B, n, first_step, steps;
    int D4, D4s, RC, G;    /* float4 columns of x (real, padded), chunk rows, blocks */
    int NG;                /* row groups of the dW1 phase (narrow inputs: > 1)     */
    int u8;                /* 1: Xs holds the raw uint8 pixels (4 per word), the sums
                              over them divided by 255 (px_sum); 0: Xs holds floats */
    int xbufs;             /* 2: the next step's batch is copied (cp.async) into a
                              second Xs while this step runs (u8, B <= RC); else 1 */
    int cl2;               /* one barrier: blocks 2k, 2k + 1 form a cluster; block 2k + 1
                              writes its fixed-point partials into block 2k's shared
                              memory (Qin) and block 2k adds the pair's sums (exact:
                              the same integers) */
    int R;                 /* row groups: blocks g and g + Hg (Hg = G / R) own the same
                              hidden units and rows [rg Bs, rg Bs + Bs) of the batch */
    int Bs;                /* rows per row group: ceil(B / R)                      */
    float *wpart;          /* R > 1: [G, WP] each block's gradient sums over its rows */
    unsigned *gbar;        /* R > 1: [Hg] barrier counters of the R blocks of a slice */
    int act, has_b1, has_b2;
    int mse;               /* 1: mean squared error on float targets; 0: softmax_ce */
} pjob_dev;

/* The rows of step st's batch (the last one may be short), and of those the ones of the
 * row group whose rows start at rb0 (0 when the batch ends before them). */
static __device__ __forceinline__ int batch_rows(const pjob_dev &p, int st)
{
    return min(p.B, p.n - st * p.B);
}
static __device__ __forceinline__ int group_rows(const pjob_dev &p, int brows, int rb0)
{
    return max(0, min(p.Bs, brows - rb0));
}

/* floats per block in pjob_dev.wpart: dW1 [JB, D4] float4s, then db2 and dW2
 * [C, 1 + JB] and db1 [JB] (gtmp's layout), padded to float4s */
static __host__ __device__ __forceinline__ int wpart_floats(int JB, int D4, int C)
{
    return 4 * JB * D4 + 4 * ((C * (1 + JB) + JB + 3) / 4);
}

/* cl2's two [B, C] arrays of 64-bit integers in a cluster's rank 0: Qown, its own
 * partials, and Qin, rank 1's, written by rank 1 while rank 0 may still be in
 * phases A-C of the step before, so Qin lies apart from phase A's k-split sums
 * [PT, JB] and phase B's dlogits [B, C] (both at the start of the dls region) and
 * from Qown. Qown lives in Xn where the next batch's buffer is free then (xbufs 2:
 * its copy is issued after the grid arrival) and large enough, else in dls ahead
 * of Qin. Kernel and host (smem_floats) share these. */
static __host__ __device__ __forceinline__ int cl2_own_in_xn(int B, int C, int RC, int D4s,
                                                             int xbufs)
{
    return xbufs == 2 && RC * D4s >= 2 * B * C;
}
/* the float offset of Qin in the dls region */
static __host__ __device__ __forceinline__ int cl2_qin(int B, int C, int JB, int own_in_xn)
{
    const int own = own_in_xn ? B * C : 2 * B * C; /* dlogits, or Qown */
    const int a = own > PT * JB ? own : PT * JB;
    return 4 * ((a + 3) / 4);
}
/* floats of the dls region: k-split sums, dlogits; cl2: also Qin (and Qown) */
static __host__ __device__ __forceinline__ int dls_floats_of(int B, int C, int JB, int cl2,
                                                             int own_in_xn)
{
    const int a = B * C > PT * JB ? B * C : PT * JB;
    return cl2 ? cl2_qin(B, C, JB, own_in_xn) + 4 * ((2 * B * C + 3) / 4) : 4 * ((a + 3) / 4);
}

static __device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

/* warp_sum of three values at once (their shuffles interleaved): the same bits each */
static __device__ __forceinline__ void warp_sum3(float &a, float &b, float &c)
{
#pragma unroll
    for (int off = 16; off > 0; off /= 2) {
        a += __shfl_xor_sync(0xffffffffu, a, off);
        b += __shfl_xor_sync(0xffffffffu, b, off);
        c += __shfl_xor_sync(0xffffffffu, c, off);
    }
}

/* grid_arrive, grid_wait, grid_barrier: grid_barrier.cuh. */

/* Clusters of two blocks (pjob_dev.cl2; sm_90, compiled out before it: FFNN_CL2 0,
 * where every block adds its own partials as without clusters). The cluster's
 * barrier in two halves, each run by every thread of both blocks once per phase:
 * cl_arrive (barrier.cluster.arrive.release: this thread's writes, into its own or
 * the peer's shared memory, visible to whoever completes the wait) and cl_wait
 * (barrier.cluster.wait.acquire: until every thread of the cluster arrived); cl_rank
 * the block's rank in its cluster, cl_peer a pointer into the other block's shared
 * memory at the same offset (mapa). PTX ISA "barrier.cluster"; CUDA C++ Programming
 * Guide, "Distributed Shared Memory". */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define FFNN_CL2 1
#else
#define FFNN_CL2 0
#endif
static __device__ __forceinline__ void cl_arrive(void)
{
#if FFNN_CL2
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
#endif
}
static __device__ __forceinline__ void cl_wait(void)
{
#if FFNN_CL2
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}
static __device__ __forceinline__ void cl_sync(void)
{
    cl_arrive();
    cl_wait();
}
static __device__ __forceinline__ unsigned cl_rank(void)
{
#if FFNN_CL2
    return cooperative_groups::this_cluster().block_rank();
#else
    return 0;
#endif
}
template <typename T>
static __device__ __forceinline__ T *cl_peer(T *p)
{
#if FFNN_CL2
    return cooperative_groups::this_cluster().map_shared_rank(p, cl_rank() ^ 1u);
#else
    return p;
#endif
}

/* Asynchronous 4-byte copies global -> shared (sm_80+ cp.async, L1 allocating);
 * cp_async_wait_all: this thread's copies have landed (a __syncthreads then
 * publishes them to the block). */
static __device__ __forceinline__ void cp_async4(void *smem_dst, const void *src)
{
    const unsigned dst = (unsigned)__cvta_generic_to_shared(smem_dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(dst), "l"(src) : "memory");
}
static __device__ __forceinline__ void cp_async_wait_all(void)
{
    asm volatile("cp.async.wait_all;" ::: "memory");
}

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
        /* narrow rows (under 16 float4s, e.g. seed 001's 32 features): all threads
         * over the chunk's float4s, NARROW_SLOTS loads in flight each */
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
    } else if ((p.D & 3) == 0 && p.D <= 32 * 4 * LOAD_SLOTS && p.images != NULL) {
        load_rows_u8<LOAD_ROWS, false>(p, Xs, sidx, rc);
    } else if ((p.D & 3) == 0 && p.D <= 32 * 4 * LOAD_SLOTS) {
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

/* Four x values of chunk row r, float4 column col of Xs: stored floats, or (U8)
 * one word of 4 raw pixels as the pixel values 0..255 (the sums over them are
 * divided by 255 once: px_sum). MIXED: the word converted by
 * ffnn_dev_u8x4_to_float4_mixed (the forward's loop: the same values in fewer issue
 * slots), else ffnn_dev_u8x4_to_float4. */
template <bool U8, bool MIXED = false>
static __device__ __forceinline__ float4 x_at(const float *Xs, int D4s, int r, int col)
{
    if (U8) {
        const unsigned q = ((const unsigned *)Xs)[r * D4s + col];
        return MIXED ? ffnn_dev_u8x4_to_float4_mixed(q) : ffnn_dev_u8x4_to_float4(q);
    }
    return ((const float4 *)Xs)[r * D4s + col];
}

/* A sum over x_at<U8>'s values in terms of x: U8's sums ran over the pixel
 * values p = 255 x, so divide by 255 (ffnn_dev_div255: two FP32 operations, the
 * quotient's rounding apart from rare near-ties; __fdiv_rn's slow path cost dW1's
 * update 0.6 us per step at batch 64). */
template <bool U8>
static __device__ __forceinline__ float px_sum(float v)
{
    return U8 ? ffnn_dev_div255(v) : v;
}

/* acc[j] += dz1[c0 + r, j] * x[r, col] (one float4 column of row r of the chunk). */
template <int JB, bool U8>
static __device__ __forceinline__ void dw1_row(const float *Xs, const float *dZs, int D4s,
                                               int col, int c0, int r, float4 (&acc)[JB])
{
    const float4 x = x_at<U8>(Xs, D4s, r, col);
#pragma unroll
    for (int j = 0; j < JB; j++) {
        const float dz = dZs[(c0 + r) * JB + j];
        acc[j].x = fmaf(dz, x.x, acc[j].x);
        acc[j].y = fmaf(dz, x.y, acc[j].y);
        acc[j].z = fmaf(dz, x.z, acc[j].z);
        acc[j].w = fmaf(dz, x.w, acc[j].w);
    }
}

/* W1[j, 4 col .. 4 col + 3] -= lr px_sum(g): the SGD update of one word of W1s from
 * its gradient's sums (ffnn_dev_sgd, rounded as optimizer_update). */
template <bool U8>
static __device__ __forceinline__ void sgd_w1(float4 *W14, int D4s, int j, int col, float lr,
                                              float4 g)
{
    float4 w = W14[j * D4s + col];
    w.x = ffnn_dev_sgd(w.x, lr, px_sum<U8>(g.x));
    w.y = ffnn_dev_sgd(w.y, lr, px_sum<U8>(g.y));
    w.z = ffnn_dev_sgd(w.z, lr, px_sum<U8>(g.z));
    w.w = ffnn_dev_sgd(w.w, lr, px_sum<U8>(g.w));
    W14[j * D4s + col] = w;
}

/* Byte sel & 3 of the pixel word q (selector 0x765k, ffnn_dev_u8_byte) as an mma
 * operand: the pixel value's float, exact in TF32. */
static __device__ __forceinline__ unsigned px_op(unsigned q, unsigned sel)
{
    return __float_as_uint(ffnn_dev_u8_byte(q, sel));
}

/* tf32 (TC; the tensor cores, mma.cuh's m16n8k8, on uint8 images whose block rows are
 * one chunk): x W1[J]^T's partial sums over the block's rows. Warp w takes m tile
 * mt = w % MT (rows 16 mt .. 16 mt + 15; MT a power of 2 <= PWARPS) and the 16-column
 * chunks kg, kg + KG, ... of K = in (kg = w / MT, KG = PWARPS / MT). Lane (gq, tq)
 * reads word 4 c + tq (pixels 16 c + 4 tq .. + 3) of rows 16 mt + gq and + 8 and the
 * same 4 columns of W1[unit gq] (one float4); the k slots tq and tq + 4 of the first
 * product take bytes 0 and 1, of the second bytes 2 and 3 (A and B alike, so every
 * product pairs p[b, k] with W1[j, k]); units gq >= JB and rows past `rows` are 0.
 * Pixel values are exact in TF32; W1 is rounded to TF32 (mma_tf32), the sums are the
 * tensor cores' fp32 ones, the two products' accumulators added at the end. Writes
 * red[(kg 16 MT + r) JB + j], rows r < 16 MT, units j < JB. */
template <int JB>
static __device__ __forceinline__ void forward_tc(const unsigned *Xw, const float4 *W14, int D4,
                                                  int D4s, int rows, int MT, float *red)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, gq = lane >> 2, tq = lane & 3;
    const int mt = warp % MT, kg = warp / MT, KG = PWARPS / MT;
    const int rA = 16 * mt + gq, rB = rA + 8, NCH = (D4 + 3) / 4;
    float d0[4] = {0.0f, 0.0f, 0.0f, 0.0f}, d1[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 2
    for (int c = kg; c < NCH; c += KG) {
        const int wi = 4 * c + tq;
        const bool ok = wi < D4;
        const unsigned qa = ok && rA < rows ? Xw[rA * D4s + wi] : 0u;
        const unsigned qb = ok && rB < rows ? Xw[rB * D4s + wi] : 0u;
        const float4 w = ok && gq < JB ? W14[gq * D4s + wi] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        const unsigned a0[4] = {px_op(qa, 0x7650u),
                                px_op(qb, 0x7650u),
                                px_op(qa, 0x7651u),
                                px_op(qb, 0x7651u)};
        const unsigned a1[4] = {px_op(qa, 0x7652u),
                                px_op(qb, 0x7652u),
                                px_op(qa, 0x7653u),
                                px_op(qb, 0x7653u)};
        const unsigned b0[2] = {mma_tf32(w.x), mma_tf32(w.y)};
        const unsigned b1[2] = {mma_tf32(w.z), mma_tf32(w.w)};
        mma_tf32_op(d0, a0, b0);
        mma_tf32_op(d1, a1, b1);
    }
    /* d[0], d[1]: row rA, units 2 tq, 2 tq + 1; d[2], d[3]: row rB */
    const int MP = 16 * MT;
#pragma unroll
    for (int u = 0; u < 2; u++) {
        const int j = 2 * tq + u;
        if (j < JB) {
            red[(kg * MP + rA) * JB + j] = d0[u] + d1[u];
            red[(kg * MP + rB) * JB + j] = d0[2 + u] + d1[2 + u];
        }
    }
}

/* tf32 (TC): dW1[J, :]'s sums over the block's rows for word group q (words 8 q ..
 * 8 q + 7, 32 columns) on the tensor cores: D [32 columns, 8 units] = p^T [columns,
 * rows] dz1 [rows, units], K = the rows in steps of 8. Lane (gq, tq): m slots gq and
 * gq + 8 of the first product are bytes 0 and 1 of word 8 q + gq, of the second bytes
 * 2 and 3; k slots tq and tq + 4 are rows 8 kk + tq and + 4. dz1 (dZs [rows, JB]) is
 * rounded to TF32 (mma_tf32), 0 past `rows` and for units >= JB. Returns the lane's
 * sums for word 8 q + gq (its 4 pixels' columns): s0 of unit 2 tq, s1 of unit 2 tq + 1. */
template <int JB>
static __device__ __forceinline__ void dw1_tc(const unsigned *Xw, const float *dZs, int D4,
                                              int D4s, int rows, int q, float4 &s0, float4 &s1)
{
    const int lane = threadIdx.x & 31, gq = lane >> 2, tq = lane & 3, wi = 8 * q + gq;
    const bool ok = wi < D4;
    float e[4] = {0.0f, 0.0f, 0.0f, 0.0f}, f[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 2
    for (int r0 = tq; r0 - tq < rows; r0 += 8) {
        const int r1 = r0 + 4;
        const unsigned x0 = ok && r0 < rows ? Xw[r0 * D4s + wi] : 0u;
        const unsigned x1 = ok && r1 < rows ? Xw[r1 * D4s + wi] : 0u;
        const unsigned b[2] = {mma_tf32(gq < JB && r0 < rows ? dZs[r0 * JB + gq] : 0.0f),
                               mma_tf32(gq < JB && r1 < rows ? dZs[r1 * JB + gq] : 0.0f)};
        const unsigned a0[4] = {px_op(x0, 0x7650u),
                                px_op(x0, 0x7651u),
                                px_op(x1, 0x7650u),
                                px_op(x1, 0x7651u)};
        const unsigned a1[4] = {px_op(x0, 0x7652u),
                                px_op(x0, 0x7653u),
                                px_op(x1, 0x7652u),
                                px_op(x1, 0x7653u)};
        mma_tf32_op(e, a0, b);
        mma_tf32_op(f, a1, b);
    }
    /* e: (byte 0, unit 2 tq), (byte 0, 2 tq + 1), (byte 1, 2 tq), (byte 1, 2 tq + 1); f:
     * bytes 2 and 3 */
    s0 = make_float4(e[0], e[2], f[0], f[2]);
    s1 = make_float4(e[1], e[3], f[1], f[3]);
}

/* One barrier: row b, class c's partial logit over the block's JB hidden units
 * (Hs [rows, JB], W2s [C, JB]) in fixed point; 0, with the step's flag *bad set, when
 * it is NaN or not below FX_LIMIT (that step's logits then read NaN). */
template <int JB>
static __device__ __forceinline__ long long partial_fx(const float *Hs, const float *W2s, int b,
                                                       int c, unsigned *bad)
{
    float v = 0.0f;
#pragma unroll
    for (int j = 0; j < JB; j++) v = fmaf(Hs[b * JB + j], W2s[c * JB + j], v);
    if (fabsf(v) < FX_LIMIT) return fx_from(v); /* not NaN, not too large */
    atomicOr(bad, 1u);
    return 0;
}

/* The SGD update of what a block owns besides W1 from gtmp's sums: db2 [C] and dW2
 * [C, JB] (gtmp[c (1 + JB) + k], k = 0: db2[c], else dW2[c, k - 1]) and db1 [JB]
 * (gtmp[C (1 + JB) + j]). */
template <int JB>
static __device__ __forceinline__ void update_small(const pjob_dev &p, const float *gtmp,
                                                    float *W2s, float *b1s, float *b2s, int j0)
{
    const int C = p.C;
    for (int q = threadIdx.x; q < C * (1 + JB); q += PT) {
        const int c = q / (1 + JB), k = q - c * (1 + JB);
        if (k == 0) {
            if (p.has_b2) b2s[c] = ffnn_dev_sgd(b2s[c], p.lr, gtmp[q]);
        } else if (j0 + k - 1 < p.H) {
            W2s[c * JB + k - 1] = ffnn_dev_sgd(W2s[c * JB + k - 1], p.lr, gtmp[q]);
        }
    }
    if (threadIdx.x < JB && p.has_b1 && j0 + (int)threadIdx.x < p.H)
        b1s[threadIdx.x] = ffnn_dev_sgd(b1s[threadIdx.x], p.lr, gtmp[C * (1 + JB) + threadIdx.x]);
}

/* R > 1, after the slice's counter: the small sums (NS = C (1 + JB) + JB floats at
 * offset 4 JB D4 of each row group's wpart part, WP floats a part; blocks g = rg Hg +
 * hg) added in row-group order rg = 0, 1, ... (the same bits in each of the R
 * blocks) into gtmp, then their SGD update (update_small). */
template <int JB>
static __device__ __forceinline__ void small_sums_meet(const pjob_dev &p, float *gtmp,
                                                       float *W2s, float *b1s, float *b2s,
                                                       int j0, int hg, int Hg, int WP, int NS)
{
    for (int q = threadIdx.x; q < NS; q += PT) {
        const float *ws = p.wpart + (size_t)hg * WP + 4 * JB * p.D4 + q;
        float v = __ldcg(ws);
        for (int r = 1; r < p.R; r++) v += __ldcg(ws + (size_t)r * Hg * WP);
        gtmp[q] = v;
    }
    __syncthreads();
    update_small<JB>(p, gtmp, W2s, b1s, b2s, j0);
}

template <int JB, bool U8, bool TC>
static __global__ void __launch_bounds__(PT, 1) persistent_kernel(const pjob_dev p)
{
    extern __shared__ float4 smem4[];
    float *sm = (float *)smem4;
    const int XS = p.D4s * 4;
    /* carve (float counts; every region a multiple of 4 floats) */
    float *W1s = sm;                         /* [JB, XS]                  */
    float *Xs = W1s + JB * XS;               /* [RC, XS] floats, or U8:   */
                                             /* [RC, D4s] words of pixels */
    float *Xn = Xs + p.RC * (U8 ? p.D4s : XS); /* xbufs 2: the next step's */
    float *W2s = Xs + p.xbufs * p.RC * (U8 ? p.D4s : XS); /* [C, JB] (padded to 64) */
    float *b1s = W2s + 4 * ((CMAX * JB + 3) / 4); /* [JB]  (padded to 8)  */
    float *b2s = b1s + 8;                    /* [CMAX]                    */
    float *gtmp = b2s + CMAX;                /* [CMAX * (1 + JB) + JB]    */
    float *Hs = gtmp + 4 * ((CMAX * (1 + JB) + JB + 3) / 4); /* [Bs, JB]  */
    float *dZs = Hs + 4 * ((p.Bs * JB + 3) / 4); /* [Bs, JB] (regions padded */
    float *dls = dZs + 4 * ((p.Bs * JB + 3) / 4); /* to float4s) [Bs, C]    */
    float *red = dls; /* [PT, JB]: phase A's k-split sums share dls's space */
    const int own_in_xn = cl2_own_in_xn(p.Bs, p.C, p.RC, p.D4s, p.xbufs);
    const int dls_floats = dls_floats_of(p.Bs, p.C, JB, p.cl2, own_in_xn);
    /* cl2, rank 0: [B, C] rank 1's partials, fixed point (its own: Xn or dls, cl2_qin) */
    long long *Qin = (long long *)(dls + cl2_qin(p.Bs, p.C, JB, own_in_xn));
    int cl_pending = 0; /* cl2, rank 1: its cluster wait is owed (after the grid's wait) */
    int *sidx = (int *)(dls + dls_floats);   /* [RC]                      */
    int *nidx = sidx + 4 * ((p.RC + 3) / 4); /* xbufs 2: [RC] next step's indices */
    int *srow = sidx + p.xbufs * 4 * ((p.RC + 3) / 4); /* [Bs] labels (ce) / data rows (mse) */
    float *NGs = (float *)(srow + 4 * ((p.Bs + 3) / 4)); /* [NG-1, JB, D4*4] */

    const int g = blockIdx.x, t = threadIdx.x, lane = t & 31, warp = t >> 5;
    const int C = p.C, G = p.G, B = p.B;
    /* row groups: block g = rg Hg + hg owns hidden units [hg JB, hg JB + JB) and the
     * batch's rows [rg Bs, rg Bs + Bs) */
    const int Hg = G / p.R, hg = g % Hg, rb0 = (g / Hg) * p.Bs;
    const int j0 = hg * JB;
    const float lr = p.lr;
    float4 *W14 = (float4 *)W1s;

    for (int i = t; i < JB * XS; i += PT) {
        const int j = i / XS, d = i - j * XS;
        W1s[i] = (j0 + j < p.H && d < p.D) ? p.W1[(size_t)(j0 + j) * p.D + d] : 0.0f;
    }
    for (int i = t; i < C * JB; i += PT) {
        const int c = i / JB, j = i - c * JB;
        W2s[i] = j0 + j < p.H ? p.W2[(size_t)c * p.H + j0 + j] : 0.0f;
    }
    if (t < JB) b1s[t] = (p.has_b1 && j0 + t < p.H) ? p.b1[j0 + t] : 0.0f;
    if (t < CMAX) b2s[t] = (p.has_b2 && t < C) ? p.b2[t] : 0.0f;
    __syncthreads();

    unsigned target = 0, gtarget = 0; /* grid, and (R > 1) row-group barriers */
    const int KS = PT / p.RC;                     /* k-splits of the forward */
    const int Dk4 = (p.D4 + KS - 1) / KS;
    int MT = 1; /* TC: the forward's m tiles, a power of 2 (forward_tc) */
    while (TC && 16 * MT < p.Bs) MT *= 2;

    long long pacc[NPROF] = {0, 0, 0, 0, 0, 0, 0, 0}, plast = clock64();
    int idx_ready = 0; /* sidx holds this step's first chunk's indices */
    int x_ready = 0;   /* xbufs 2: this step's batch is on its way into Xs (cp.async) */
    for (int s = 0; s < p.steps; s++) {
        /* this block's rows of the step: [row0, row0 + rows) of the epoch (R > 1: 0 in
         * the last groups of a short last batch); brows, the batch's */
        const int brows = batch_rows(p, p.first_step + s);
        const int row0 = (p.first_step + s) * B + rb0;
        const int rows = group_rows(p, brows, rb0);
        const float inv_rows = 1.0f / (float)brows;
        /* xbufs 2: the next step's rows and indices, for the copy started at this step's
         * barrier (published to the block by the barrier's __syncthreads) */
        const int next_row0 = (p.first_step + s + 1) * B + rb0;
        const int next_rows =
            s + 1 < p.steps ? group_rows(p, batch_rows(p, p.first_step + s + 1), rb0) : 0;
        if (p.xbufs == 2 && t < next_rows) nidx[t] = p.index[next_row0 + t];
        /* phase B's labels, loaded now, used after the barrier. One barrier: every
         * row's (mse: data row) into srow, row t's held in a register through phase
         * A; two barriers: this warp's first row's */
        const int mine_t = p.one_barrier && t < rows;
        const int row_t = mine_t ? p.index[row0 + t] : 0;
        const int lab_t = mine_t ? (p.mse ? row_t : p.labels[row_t]) : 0;
        const int b_first = g + G * warp;
        const int label_first = !p.one_barrier && b_first < rows && !p.mse
                                    ? p.labels[p.index[row0 + b_first]] : 0;

        /* ---- A: forward of the hidden slice, chunk by chunk ---- */
        for (int c0 = 0; c0 < rows; c0 += p.RC) {
            const int rc = min(p.RC, rows - c0);
            if (x_ready) /* started at the last step's barrier */
                cp_async_wait_all();
            else
                load_x(p, Xs, sidx, row0 + c0, rc, c0 == 0 && idx_ready);
            __syncthreads();
            PROF_MARK(0);
            if (TC) {
                forward_tc<JB>((const unsigned *)Xs, W14, p.D4, p.D4s, rc, MT, red);
            } else {
                const int r = t % p.RC, ks = t / p.RC;
                float acc[JB];
#pragma unroll
                for (int j = 0; j < JB; j++) acc[j] = 0.0f;
                if (r < rc) {
                    const int d_end = min(p.D4, (ks + 1) * Dk4);
                    for (int d4 = ks * Dk4; d4 < d_end; d4++) {
                        const float4 x = x_at<U8, true>(Xs, p.D4s, r, d4);
#pragma unroll
                        for (int j = 0; j < JB; j++) {
                            const float4 w = W14[j * p.D4s + d4];
                            acc[j] = fmaf(x.x, w.x, acc[j]);
                            acc[j] = fmaf(x.y, w.y, acc[j]);
                            acc[j] = fmaf(x.z, w.z, acc[j]);
                            acc[j] = fmaf(x.w, w.w, acc[j]);
                        }
                    }
                }
#pragma unroll
                for (int j = 0; j < JB; j++) red[(ks * p.RC + r) * JB + j] = acc[j];
            }
            __syncthreads();
            /* the k-split sums in split order: KS of RC rows, or (TC) PWARPS / MT of 16 MT */
            const int nsplit = TC ? PWARPS / MT : KS, rstride = TC ? 16 * MT : p.RC;
            for (int i = t; i < rc * JB; i += PT) {
                const int rr = i / JB, j = i - rr * JB;
                float z = 0.0f;
                for (int k = 0; k < nsplit; k++) z += red[(k * rstride + rr) * JB + j];
                z = __fadd_rn(px_sum<U8>(z), b1s[j]);
                /* relu outside the activation switch: its work as before */
                const ffnn_activation act = (ffnn_activation)p.act;
                Hs[(c0 + rr) * JB + j] = j0 + j >= p.H          ? 0.0f
                                         : act == FFNN_ACT_RELU ? ffnn_dev_relu(z)
                                                           : ffnn_dev_act_forward_basic(act, z);
            }
            __syncthreads();
            PROF_MARK(1);
        }
        /* partial logits of this block's hidden units: one barrier, added into
         * acc[s % 3]; two barriers, part[b, g, 0..CMAX) (the classes padded to CMAX
         * floats, so phase B reads them as float4s) */
        if (p.one_barrier) { /* published by the barrier's __syncthreads */
            if (mine_t) srow[t] = lab_t;
            for (int b = t + PT; b < rows; b += PT) {
                const int r = p.index[row0 + b];
                srow[b] = p.mse ? r : p.labels[r];
            }
        }
        /* the step's logits accumulator, this block's rows (not the forward's acc) */
        long long *lacc = p.acc + ((size_t)(s % 3) * B + rb0) * C;
        if (p.one_barrier && FFNN_CL2 && p.cl2) {
            /* a cluster's two blocks: rank 1 writes its fixed-point partials into rank 0's
             * Qin (DSMEM stores) and arrives at the cluster barrier; rank 0 writes its own
             * into Qown, waits for rank 1's arrival, and adds each pair as one integer:
             * half the atomics, the same integer sums. Rank 1 writes Qin again only after
             * this step's grid barrier, which waits for rank 0's arrival after these
             * reads; it waits at the cluster barrier after the grid's (rank 0 arrived). */
            const int lead = cl_rank() == 0;
            long long *own = (long long *)(own_in_xn ? Xn : dls); /* Xn: this step's */
            long long *dst = lead ? own : cl_peer(Qin);
            for (int i = t; i < rows * C; i += PT) {
                const int b = i / C;
                dst[i] = partial_fx<JB>(Hs, W2s, b, i - b * C, p.bad + s % 3);
            }
            cl_arrive();
            if (lead) {
                cl_wait();
                for (int i = t; i < rows * C; i += PT)
                    atomicAdd((unsigned long long *)(lacc + i),
                              (unsigned long long)(own[i] + Qin[i]));
            } else {
                cl_pending = 1;
            }
        } else if (p.one_barrier) {
            for (int i = t; i < rows * C; i += PT) { /* a flagged 0 adds nothing */
                const int b = i / C;
                atomicAdd((unsigned long long *)(lacc + i),
                          (unsigned long long)partial_fx<JB>(Hs, W2s, b, i - b * C,
                                                             p.bad + s % 3));
            }
            /* the next step's images into L2 while the grid gathers */
            if (s + 1 < p.steps && p.xbufs == 1) prefetch_step(p, p.first_step + s + 1, 0, G);
        } else {
            for (int i = t; i < rows * CMAX; i += PT) {
                const int b = i / CMAX, c = i - b * CMAX;
                float v = 0.0f;
                if (c < C) {
#pragma unroll
                    for (int j = 0; j < JB; j++) v = fmaf(Hs[b * JB + j], W2s[c * JB + j], v);
                }
                p.part[((size_t)b * G + g) * CMAX + c] = v;
            }
        }
        PROF_MARK(2);
        grid_arrive(p.bar);
        /* xbufs 2: the next step's batch into Xn while the grid gathers and this step
         * finishes (its last read of Xs is dW1's) */
        if (next_rows > 0 && p.xbufs == 2) issue_x_u8(p, Xn, nidx, next_rows);
        grid_wait(p.bar, target += G);
        if (cl_pending) { /* cl2, rank 1: rank 0 arrived before the grid barrier */
            cl_wait();
            cl_pending = 0;
        }
        PROF_MARK(3);

        if (p.one_barrier) {
            /* ---- B, one barrier: every block, every row (a quarter warp per row,
             * classes c and c + 8 per lane, read straight from lacc): logits, softmax
             * cross-entropy (mse), dlogits into dls ---- */
            long long *old = p.acc + (size_t)((s + 2) % 3) * B * C; /* step s - 1's */
            for (int i = g * PT + t; i < B * C; i += G * PT) old[i] = 0;
            if (g == 0 && t == 0) p.bad[(s + 2) % 3] = 0u;
            const int bad = __ldcg(p.bad + s % 3) != 0u;
            const int quarter = lane >> 3, c = lane & 7;
            const float scale = p.mse ? 1.0f / ((float)brows * (float)C) : inv_rows;
            for (int b0 = 4 * warp; b0 < rows; b0 += 4 * PWARPS) {
                const int b = b0 + quarter;
                const bool l0 = b < rows && c < C, l1 = b < rows && c + 8 < C;
                const int lab = b < rows ? srow[b] : 0;
                const long long *ab = lacc + (size_t)b * C;
                const long long q0 = l0 ? __ldcg(ab + c) : 0, q1 = l1 ? __ldcg(ab + c + 8) : 0;
                float z0 = l0 ? __fadd_rn(fx_to(q0), b2s[c]) : -INFINITY;
                float z1 = l1 ? __fadd_rn(fx_to(q1), b2s[c + 8]) : -INFINITY;
                if (bad && l0) z0 = NAN;
                if (bad && l1) z1 = NAN;
                float m = z0;
                int arg = l0 ? c : CMAX;
                if (l1 && z1 > m) { m = z1; arg = c + 8; }
#pragma unroll
                for (int off = 4; off > 0; off >>= 1) {
                    const float om = __shfl_xor_sync(0xffffffffu, m, off);
                    const int oa = __shfl_xor_sync(0xffffffffu, arg, off);
                    if (om > m || (om == m && oa < arg)) {
                        m = om;
                        arg = oa;
                    }
                }
                const int own = b < rows && c == 0 && b % Hg == hg;
                float *dl = dls + (size_t)b * C;
                if (p.mse) {
                    const float *tr = p.targets + (size_t)lab * C;
                    const float t0 = l0 ? tr[c] : 0.0f, t1 = l1 ? tr[c + 8] : 0.0f;
                    const float d0 = z0 - t0, d1 = z1 - t1;
                    float sum = (l0 ? ffnn_dev_mse_term(d0) : 0.0f) +
                                (l1 ? ffnn_dev_mse_term(d1) : 0.0f);
#pragma unroll
                    for (int off = 4; off > 0; off >>= 1)
                        sum += __shfl_xor_sync(0xffffffffu, sum, off);
                    const unsigned okm = __ballot_sync(
                        0xffffffffu, (!l0 || (z0 > 0.5f) == (t0 > 0.5f)) &&
                                         (!l1 || (z1 > 0.5f) == (t1 > 0.5f)));
                    if (own) {
                        p.row_loss[row0 + b] = sum / (float)C;
                        p.row_correct[row0 + b] =
                            (uint8_t)(((okm >> (8 * quarter)) & 0xffu) == 0xffu);
                    }
                    if (l0) dl[c] = ffnn_dev_mse_grad(d0, scale);
                    if (l1) dl[c + 8] = ffnn_dev_mse_grad(d1, scale);
                    continue;
                }
                float se = (l0 ? ffnn_dev_softmax_term(z0, m) : 0.0f) +
                           (l1 ? ffnn_dev_softmax_term(z1, m) : 0.0f);
#pragma unroll
                for (int off = 4; off > 0; off >>= 1)
                    se += __shfl_xor_sync(0xffffffffu, se, off);
                const int src = (lane & 24) | (lab & 7);
                const float zl0 = __shfl_sync(0xffffffffu, z0, src);
                const float zl1 = __shfl_sync(0xffffffffu, z1, src);
                const float zl = (lab & 8) ? zl1 : zl0;
                if (own) {
                    p.row_loss[row0 + b] =
                        lab >= 0 && lab < C ? ffnn_dev_softmax_ce_loss(m, se, zl) : NAN;
                    p.row_correct[row0 + b] =
                        (uint8_t)(C == 1 ? (z0 > 0.0f) == (lab != 0) : arg == lab);
                }
                if (l0) dl[c] = ffnn_dev_softmax_ce_grad(z0, m, se, c == lab, scale);
                if (l1) dl[c + 8] = ffnn_dev_softmax_ce_grad(z1, m, se, c + 8 == lab, scale);
            }
            __syncthreads();
            PROF_MARK(4);
            PROF_MARK(5);
        } else {
            /* ---- B, two barriers: logits, softmax cross-entropy, dlogits: one warp
             * per row; the next step's images into L2, by the blocks without a row
             * here (all blocks when every block has one): off the rows' critical path */
            if (s + 1 < p.steps && p.xbufs == 1) {
                if (rows < G && g >= rows)
                    prefetch_step(p, p.first_step + s + 1, rows, G - rows);
                else if (rows >= G)
                    prefetch_step(p, p.first_step + s + 1, 0, G);
            }
            for (int b = g + G * warp; b < rows; b += G * PWARPS) {
                const int label =
                    p.mse ? 0 : b == b_first ? label_first : p.labels[p.index[row0 + b]];
                float z[CMAX];
#pragma unroll
                for (int c = 0; c < CMAX; c++) z[c] = 0.0f;
#pragma unroll 4
                for (int gg = lane; gg < G; gg += 32) {
                    const float4 *src = (const float4 *)(p.part + ((size_t)b * G + gg) * CMAX);
#pragma unroll
                    for (int q = 0; q < CMAX / 4; q++) {
                        if (4 * q < C) {
                            const float4 v = __ldcg(src + q);
                            z[4 * q] += v.x;
                            z[4 * q + 1] += v.y;
                            z[4 * q + 2] += v.z;
                            z[4 * q + 3] += v.w;
                        }
                    }
                }
                float m = -INFINITY, mine = 0.0f;
                int arg = 0;
#pragma unroll
                for (int c = 0; c < CMAX; c++) {
                    if (c < C) {
                        z[c] = __fadd_rn(warp_sum(z[c]), b2s[c]);
                        if (c == 0 || z[c] > m) { m = z[c]; arg = c; }
                        if (c == lane) mine = z[c];
                    }
                }
                if (p.mse) { /* loss.cu's mse_kernel with float targets, every lane alike */
                    const float *tr = p.targets + (size_t)p.index[row0 + b] * C;
                    const float scale = 1.0f / ((float)rows * (float)C);
                    float sum = 0.0f, mine_t = 0.0f;
                    int ok = 1;
#pragma unroll
                    for (int c = 0; c < CMAX; c++) {
                        if (c < C) {
                            const float tt = tr[c], d = z[c] - tt;
                            sum += ffnn_dev_mse_term(d);
                            ok &= (z[c] > 0.5f) == (tt > 0.5f);
                            if (c == lane) mine_t = tt;
                        }
                    }
                    if (lane == 0) {
                        p.row_loss[row0 + b] = sum / (float)C;
                        p.row_correct[row0 + b] = (uint8_t)ok;
                    }
                    if (lane < C)
                        p.dlog[(size_t)b * C + lane] = ffnn_dev_mse_grad(mine - mine_t, scale);
                    continue;
                }
                float se = 0.0f;
#pragma unroll
                for (int c = 0; c < CMAX; c++)
                    if (c < C) se += ffnn_dev_softmax_term(z[c], m);
                if (lane == 0) {
                    float zl = 0.0f;
#pragma unroll
                    for (int c = 0; c < CMAX; c++)
                        if (c == label) zl = z[c];
                    p.row_loss[row0 + b] =
                        label >= 0 && label < C ? ffnn_dev_softmax_ce_loss(m, se, zl) : NAN;
                    p.row_correct[row0 + b] = (uint8_t)(C == 1 ? (z[0] > 0.0f) == (label != 0)
                                                               : arg == label);
                }
                if (lane < C)
                    p.dlog[(size_t)b * C + lane] =
                        ffnn_dev_softmax_ce_grad(mine, m, se, lane == label, inv_rows);
            }
            PROF_MARK(4);
            grid_barrier(p.bar, target += G);
            for (int i = t; i < rows * C; i += PT) dls[i] = __ldcg(p.dlog + i);
            __syncthreads();
            PROF_MARK(5);
        }

        /* ---- C: backward and update of what this block owns ---- */
        /* the next step's indices (when it is one chunk), loaded now, stored in sidx at
         * the step's end: its load_x skips that round trip */
        const int pre_idx = next_rows > 0 && next_rows <= p.RC && p.xbufs == 1;
        const int next_idx = pre_idx && t < next_rows ? p.index[next_row0 + t] : 0;
        /* The small sums, side by side. Warp j < JB: dz1[:, j] = (dlog W2[:, j]) *
         * act'(h[:, j]) with W2 before its update, lane l taking rows l, l + 32, ...,
         * then db1[j] = warp_sum of the lane's dz1 added in that order, into
         * gtmp[C (1 + JB) + j] (R > 1: added after the row groups' sums). The
         * other warps: db2[c] (k = 0) and dW2[c, j] (k = 1 + j), sums over rows, three
         * at a time (independent chains of loads and shuffles; each sum formed as
         * warp_sum's). */
        static_assert(JB <= PWARPS / 2, "the small sums' warps");
        const int NW2 = C * (1 + JB);
        if (warp < JB) {
            const int j = warp;
            float s1 = 0.0f;
            for (int b = lane; b < rows; b += 32) {
                const int i = b * JB + j;
                float v = 0.0f;
                for (int c = 0; c < C; c++) v = fmaf(dls[b * C + c], W2s[c * JB + j], v);
                const float dz =
                    p.act == (int)FFNN_ACT_RELU
                        ? __fmul_rn(v, Hs[i] > 0.0f ? 1.0f : 0.0f)
                        : ffnn_dev_act_backward_basic((ffnn_activation)p.act, v, Hs[i]);
                dZs[i] = dz;
                s1 += dz;
            }
            s1 = warp_sum(s1);
            if (lane == 0) gtmp[NW2 + j] = s1;
        }
        for (int q0 = 3 * (warp - JB); warp >= JB && q0 < NW2; q0 += 3 * (PWARPS - JB)) {
            int cq[3], kq[3];
            float v[3];
#pragma unroll
            for (int u = 0; u < 3; u++) { /* past NW2: sum NW2 - 1 again, not stored */
                const int q = min(q0 + u, NW2 - 1);
                cq[u] = q / (1 + JB);
                kq[u] = q - cq[u] * (1 + JB);
                v[u] = 0.0f;
            }
            for (int b = lane; b < rows; b += 32) {
#pragma unroll
                for (int u = 0; u < 3; u++)
                    v[u] = fmaf(dls[b * C + cq[u]], kq[u] == 0 ? 1.0f : Hs[b * JB + kq[u] - 1],
                                v[u]);
            }
            warp_sum3(v[0], v[1], v[2]);
            if (lane == 0)
#pragma unroll
                for (int u = 0; u < 3; u++)
                    if (q0 + u < NW2) gtmp[q0 + u] = v[u];
        }
        __syncthreads();
        /* R == 1: db2, dW2 and db1 applied now (R > 1: after the row groups' sums) */
        if (p.R == 1) update_small<JB>(p, gtmp, W2s, b1s, b2s, j0);
        PROF_MARK(6);
        if (TC) {
            /* tf32: dW1 on the tensor cores, word groups q = warp, warp + PWARPS, ...
             * (dw1_tc); lane (gq, tq) owns units 2 tq and 2 tq + 1 of word 8 q + gq.
             * R > 1: the sums meet as in the fp32 path below, in row-group order. */
            const int NQ = (p.D4 + 7) / 8, gq = lane >> 2, tq = lane & 3;
            const int WP = wpart_floats(JB, p.D4, C), NS = C * (1 + JB) + JB;
            float4 *wp4 = p.R > 1 ? (float4 *)(p.wpart + (size_t)g * WP) : NULL;
            if (p.R > 1) __syncthreads(); /* gtmp's db1 */
            for (int q = warp; q < NQ; q += PWARPS) {
                float4 sq[2];
                dw1_tc<JB>((const unsigned *)Xs, dZs, p.D4, p.D4s, rows, q, sq[0], sq[1]);
                const int wi = 8 * q + gq;
#pragma unroll
                for (int u = 0; u < 2; u++) {
                    const int j = 2 * tq + u;
                    if (j >= JB || wi >= p.D4) continue;
                    if (p.R > 1)
                        wp4[j * p.D4 + wi] = sq[u];
                    else if (j0 + j < p.H)
                        sgd_w1<U8>(W14, p.D4s, j, wi, lr, sq[u]);
                }
            }
            if (p.R > 1) {
                float *wp = (float *)wp4;
                for (int q = t; q < NS; q += PT) wp[4 * JB * p.D4 + q] = gtmp[q];
                grid_barrier(p.gbar + hg, gtarget += p.R);
                for (int q = warp; q < NQ; q += PWARPS) {
                    const int wi = 8 * q + gq;
#pragma unroll
                    for (int u = 0; u < 2; u++) {
                        const int j = 2 * tq + u;
                        if (j >= JB || wi >= p.D4 || j0 + j >= p.H) continue;
                        const float4 *w4 =
                            (const float4 *)(p.wpart + (size_t)hg * WP) + j * p.D4 + wi;
                        float4 a = __ldcg(w4);
                        for (int r = 1; r < p.R; r++) {
                            const float4 v = __ldcg(w4 + (size_t)r * Hg * (WP / 4));
                            a.x += v.x, a.y += v.y, a.z += v.z, a.w += v.w;
                        }
                        sgd_w1<U8>(W14, p.D4s, j, wi, lr, a);
                    }
                }
                small_sums_meet<JB>(p, gtmp, W2s, b1s, b2s, j0, hg, Hg, WP, NS);
            }
        } else {
            /* dW1[J, :] = dz1[:, J]^T x: thread t owns float4 column t % D4p of x and
             * the rows r = grp, grp + NG, ... (grp = t / D4p); with NG > 1 groups the
             * partial sums meet in shared memory in group order (deterministic) */
            const int D4p = (p.D4 + 31) & ~31, col = t % D4p, grp = t / D4p;
            const bool mine = col < p.D4 && grp < p.NG;
            float4 acc[JB];
#pragma unroll
            for (int j = 0; j < JB; j++) acc[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            for (int c0 = 0; c0 < rows; c0 += p.RC) {
                const int rc = min(p.RC, rows - c0);
                if (rows > p.RC) { /* the chunk in Xs is the last one of phase A */
                    __syncthreads();
                    load_x(p, Xs, sidx, row0 + c0, rc, 0);
                    __syncthreads();
                }
                if (mine) {
                    const int step_r = p.NG; /* 1 for wide inputs: a plain unit-stride loop */
                    if (step_r == 1) {
                        for (int r = 0; r < rc; r++)
                            dw1_row<JB, U8>(Xs, dZs, p.D4s, col, c0, r, acc);
                    } else {
                        for (int r = grp; r < rc; r += step_r)
                            dw1_row<JB, U8>(Xs, dZs, p.D4s, col, c0, r, acc);
                    }
                }
            }
            if (p.NG > 1) {
                float4 *scr = (float4 *)NGs; /* [NG - 1][JB][D4] */
                if (mine && grp > 0)
#pragma unroll
                    for (int j = 0; j < JB; j++)
                        scr[((grp - 1) * JB + j) * p.D4 + col] = acc[j];
                __syncthreads();
                if (mine && grp == 0)
                    for (int q = 1; q < p.NG; q++)
#pragma unroll
                        for (int j = 0; j < JB; j++) {
                            const float4 v = scr[((q - 1) * JB + j) * p.D4 + col];
                            acc[j].x += v.x, acc[j].y += v.y, acc[j].z += v.z, acc[j].w += v.w;
                        }
            }
            if (p.R > 1) {
                /* the R blocks of this hidden slice: each writes its sums over its rows
                 * to wpart, meets the others at their counter, then adds all R in
                 * row-group order (rg = 0, 1, ...): the same bits in each. wpart[g] is
                 * written again only after the next step's grid barrier, which waits
                 * for these reads. */
                const int WP = wpart_floats(JB, p.D4, C), NS = C * (1 + JB) + JB;
                float *wp = p.wpart + (size_t)g * WP;
                __syncthreads(); /* gtmp's db1 */
                if (mine && grp == 0)
#pragma unroll
                    for (int j = 0; j < JB; j++) ((float4 *)wp)[j * p.D4 + col] = acc[j];
                for (int q = t; q < NS; q += PT) wp[4 * JB * p.D4 + q] = gtmp[q];
                grid_barrier(p.gbar + hg, gtarget += p.R);
                if (mine && grp == 0) {
                    const float4 *w4 = (const float4 *)(p.wpart + (size_t)hg * WP) + col;
#pragma unroll
                    for (int j = 0; j < JB; j++) acc[j] = __ldcg(w4 + j * p.D4);
                    for (int r = 1; r < p.R; r++) {
                        const float4 *wr = w4 + (size_t)r * Hg * (WP / 4);
#pragma unroll
                        for (int j = 0; j < JB; j++) {
                            const float4 v = __ldcg(wr + j * p.D4);
                            acc[j].x += v.x, acc[j].y += v.y, acc[j].z += v.z, acc[j].w += v.w;
                        }
                    }
                }
                small_sums_meet<JB>(p, gtmp, W2s, b1s, b2s, j0, hg, Hg, WP, NS);
            }
            if (mine && grp == 0) {
#pragma unroll
                for (int j = 0; j < JB; j++)
                    if (j0 + j < p.H) sgd_w1<U8>(W14, p.D4s, j, col, lr, acc[j]);
            }
        }
        __syncthreads();
        if (pre_idx) {
            if (t < next_rows) sidx[t] = next_idx;
            __syncthreads();
        }
        idx_ready = pre_idx;
        if (p.xbufs == 2) { /* the buffers trade places */
            float *tmp = Xs;
            Xs = Xn;
            Xn = tmp;
            x_ready = next_rows > 0;
        }
        PROF_MARK(7);
    }
    if (FFNN_CL2 && p.cl2) cl_sync(); /* no block leaves while its peer may write to it */
    if (p.prof && t == 0)
        for (int k = 0; k < NPROF; k++) p.prof[g * NPROF + k] = (unsigned long long)pacc[k];

    /* write back what this block owns (R > 1: row group 0; the others hold the same) */
    if (g >= Hg) return;
    for (int i = t; i < JB * p.D; i += PT) {
        const int j = i / p.D, d = i - j * p.D;
        if (j0 + j < p.H) p.W1[(size_t)(j0 + j) * p.D + d] = W1s[j * XS + d];
    }
    for (int i = t; i < C * JB; i += PT) {
        const int c = i / JB, j = i - c * JB;
        if (j0 + j < p.H) p.W2[(size_t)c * p.H + j0 + j] = W2s[i];
    }
    if (t < JB && p.has_b1 && j0 + t < p.H) p.b1[j0 + t] = b1s[t];
    if (g == 0 && t < C && p.has_b2) p.b2[t] = b2s[t];
}

/* ------------------------------------------------------------------ host side */

typedef struct pplan {
    int JB, G, RC, D4, D4s, NG, u8, xbufs;
    int R, Bs; /* row groups, rows per row group (pjob_dev's) */
    int cl2; /* pjob_dev.cl2 (pick_cl2) */
    int tc;  /* tf32 on the tensor cores (the context's precision; forward_tc, dw1_tc) */
    size_t smem; /* bytes of dynamic shared memory */
    int optin;   /* the device's most shared memory per block, bytes */
} pplan;

static size_t smem_floats(int JB, int RC, int D4s, int B, int C, int NG, int D4, int u8,
                          int xbufs, int cl2)
{
    const size_t XS = (size_t)D4s * 4,
                 dls = (size_t)dls_floats_of(B, C, JB, cl2, cl2_own_in_xn(B, C, RC, D4s, xbufs));
    return (size_t)JB * XS + (size_t)xbufs * RC * (u8 ? (size_t)D4s : XS) +
           4 * ((CMAX * JB + 3) / 4) + 8 + CMAX + 4 * ((CMAX * (1 + JB) + JB + 3) / 4) +
           2 * 4 * (((size_t)B * JB + 3) / 4) + dls +
           (size_t)xbufs * 4 * (((size_t)RC + 3) / 4) /* sidx, nidx */ +
           4 * (((size_t)B + 3) / 4) /* srow */ +
           (size_t)(NG - 1) * JB * D4 * 4 /* dW1 partial sums */;
}

/* Row groups of job's launch (pjob_dev.R): 4 from batch 256, 2 from batch 128, else
 * 1 (784-256relu-10 on an H200, ms/epoch, R = 1 / 2 / 4: batch 64 10.2 / 11.1 / -,
 * 128 7.8 / 7.4 / 8.0, 256 6.7 / 5.7 / 5.5, 512 7.6 / - / 4.4; docs/RESULTS.md
 * history), each R only where every block's rows take the one-barrier exchange
 * (ceil(B / R) x classes <= ONE_BARRIER_MAX) and R slices of at most 8 hidden units
 * fit on the SMs; else the next smaller R. */
static int row_groups(const ffnn_cuda_ctx *ctx, const ffnn_persistent_job *job)
{
    for (int R = job->batch_size >= 256 ? 4 : job->batch_size >= 128 ? 2 : 1; R > 1; R /= 2)
        if ((job->batch_size + R - 1) / R * job->out <= ONE_BARRIER_MAX &&
            (size_t)R * ((job->hidden + 7) / 8) <= (size_t)ctx->sm_count)
            return R;
    return 1;
}

/* The launch plan of job on ctx's GPU; 0 with the reason set when it cannot run. */
static int make_plan(ffnn_cuda_ctx *ctx, const ffnn_persistent_job *job, pplan *pl)
{
    if (job->out < 1 || job->out > CMAX) {
        ffnn_fail(FFNN_ERR_UNSUPPORTED, "persistent kernel: %zu classes (at most %d)",
                  job->out, CMAX);
        return 0;
    }
    if (job->in < 1 || job->in > 4 * PT || job->hidden < 1 || job->batch_size < 1 ||
        job->batch_size > 4096 || job->n > (size_t)INT32_MAX) {
        ffnn_fail(FFNN_ERR_UNSUPPORTED,
                  "persistent kernel: in=%zu hidden=%zu batch=%zu outside its limits "
                  "(in <= %d: one thread per 4 inputs; batch <= 4096)", job->in, job->hidden,
                  job->batch_size, 4 * PT);
        return 0;
    }
    int optin = 0;
    if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                               ctx->device) != cudaSuccess) {
        (void)cudaGetLastError();
        optin = 48 * 1024;
    }
    pl->optin = optin;
    pl->cl2 = 0;
    pl->D4 = (int)((job->in + 3) / 4);
    pl->D4s = pl->D4 | 1; /* odd: rows of Xs fall in distinct 16-byte bank groups */
    pl->R = row_groups(ctx, job);
    pl->Bs = (int)((job->batch_size + pl->R - 1) / pl->R);
    const int jbs[4] = {1, 2, 4, 8};
    pl->JB = 0;
    for (int i = 0; i < 4; i++)
        if ((size_t)pl->R * ((job->hidden + jbs[i] - 1) / jbs[i]) <= (size_t)ctx->sm_count) {
            pl->JB = jbs[i];
            break;
        }
    if (pl->JB == 0) {
        ffnn_fail(FFNN_ERR_UNSUPPORTED,
                  "persistent kernel: hidden width %zu needs more than 8 units per block "
                  "on %d SMs", job->hidden, ctx->sm_count);
        return 0;
    }
    pl->G = pl->R * (int)((job->hidden + pl->JB - 1) / pl->JB);
    /* dW1 row groups: inputs up to 256 features (D4 <= 64) split the rows over
     * PT / D4p thread groups, at most 16; wider ones keep one thread per column */
    const int D4p = (pl->D4 + 31) & ~31;
    pl->NG = pl->D4 <= 64 ? (PT / D4p < 16 ? PT / D4p : 16) : 1;
    int rc_max = 8; /* a block's rows rounded up to a power of 2, at most PT */
    while (rc_max < pl->Bs && rc_max < PT) rc_max *= 2;
    /* x as floats when the whole batch fits on chip that way; else uint8 images
     * (whole words per row) stay raw on chip, 4x the rows, summed as pixel values
     * (batch 64: floats 14.3 ms/epoch, raw 14.5; batch 256: floats 11.8 (two
     * passes over the batch), raw 8.2; H200) */
    const int raw_ok = job->data.images != NULL && job->in % 4 == 0; /* whole words */
    for (pl->u8 = 0; pl->u8 <= 1; pl->u8++) {
        pl->RC = 0;
        for (int rc = rc_max; rc >= 8; rc /= 2)
            if (smem_floats(pl->JB, rc, pl->D4s, pl->Bs, (int)job->out, pl->NG,
                            pl->D4, pl->u8, 1, 0) * 4 <= (size_t)optin) {
                pl->RC = rc;
                break;
            }
        if ((pl->RC >= pl->Bs && pl->RC > 0) || !raw_ok) break;
    }
    if (pl->u8 > 1) pl->u8 = 1;
    if (pl->RC == 0) {
        ffnn_fail(FFNN_ERR_UNSUPPORTED,
                  "persistent kernel: in=%zu, batch %zu do not fit the %d bytes of shared "
                  "memory per block", job->in, job->batch_size, optin);
        return 0;
    }
    /* uint8 images: two Xs of raw words, the next step's batch copied into the second
     * during this step, where the whole batch is one chunk and both fit (takes
     * precedence over floats) */
    pl->xbufs = 1;
    if (raw_ok &&
        smem_floats(pl->JB, rc_max, pl->D4s, pl->Bs, (int)job->out, pl->NG,
                    pl->D4, 1, 2, 0) * 4 <= (size_t)optin && rc_max >= pl->Bs) {
        pl->xbufs = 2;
        pl->u8 = 1;
        pl->RC = rc_max;
    }
    pl->smem = smem_floats(pl->JB, pl->RC, pl->D4s, pl->Bs, (int)job->out,
                           pl->NG, pl->D4, pl->u8, pl->xbufs, 0) * 4;
    /* tf32: the two matmuls on the tensor cores where a block holds 8 units and its
     * rows are one chunk of raw pixel words (forward_tc's m tiles: at most 16 of 16
     * rows); elsewhere the fp32 products, which measured as fast or faster there (784-
     * 256relu-10 on an H200, ms/epoch, fp32 / tensor cores: batch 64 (2 units) 9.6-9.8
     * / 11.6, 128 (4) 7.1-7.2 / 7.2, 256 (8) 5.3 / 4.5; docs/RESULTS.md history) */
    pl->tc = ctx->precision == FFNN_PRECISION_TF32 && pl->JB == 8 && pl->xbufs == 2 &&
             pl->Bs <= 16 * PWARPS;
    return 1;
}

typedef void (*pkernel_fn)(const pjob_dev);

/* tc: tf32 on the tensor cores (make_plan: 8 units a block, uint8 images) */
static pkernel_fn kernel_for(int JB, int u8, int tc)
{
    if (tc) return persistent_kernel<8, true, true>;
    switch (JB) {
    case 1: return u8 ? persistent_kernel<1, true, false> : persistent_kernel<1, false, false>;
    case 2: return u8 ? persistent_kernel<2, true, false> : persistent_kernel<2, false, false>;
    case 4: return u8 ? persistent_kernel<4, true, false> : persistent_kernel<4, false, false>;
    default: return u8 ? persistent_kernel<8, true, false> : persistent_kernel<8, false, false>;
    }
}

/* Co-residency of G blocks (one per SM at this shared memory); sets the attribute. */
static ffnn_status check_resident(ffnn_cuda_ctx *ctx, const pplan *pl, int *ok)
{
    pkernel_fn k = kernel_for(pl->JB, pl->u8, pl->tc);
    FFNN_CUDA_CHECK(ctx, cudaFuncSetAttribute((const void *)k,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)pl->smem));
    int per_sm = 0;
    FFNN_CUDA_CHECK(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, (const void *)k,
                                                                       PT, pl->smem));
    *ok = per_sm * ctx->sm_count >= pl->G;
    return FFNN_OK;
}

/* The launch of pl's G blocks of PT threads and smem bytes in clusters of two
 * (cudaLaunchKernelEx), cooperative when coop (then at most 2 attributes in at,
 * which the caller keeps alive while the config is used). */
static cudaLaunchConfig_t cl2_config(const pplan *pl, size_t smem, int coop,
                                     cudaStream_t stream, cudaLaunchAttribute at[2])
{
    cudaLaunchConfig_t cfg = {};
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = 2;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    at[1].id = cudaLaunchAttributeCooperative;
    at[1].val.cooperative = 1;
    cfg.gridDim = dim3((unsigned)pl->G);
    cfg.blockDim = dim3(PT);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cfg.attrs = at;
    cfg.numAttrs = coop ? 2 : 1;
    return cfg;
}

/* pjob_dev.cl2 for a one-barrier launch: an even number of blocks, compute capability
 * 9.0+, shared memory for Qown and Qin, and G / 2 clusters of two co-resident (the
 * launch is then cooperative with a cluster dimension; cudaOccupancyMaxActiveClusters
 * found 66 on an H200 at this kernel's shape, 30 in clusters of four). Where any of it
 * fails the launch runs without clusters. Sets pl->cl2 and, when 1, pl->smem. */
static ffnn_status pick_cl2(ffnn_cuda_ctx *ctx, const ffnn_persistent_job *job, pplan *pl)
{
    pl->cl2 = 0;
    if (pl->R > 1 || job->batch_size * job->out > ONE_BARRIER_MAX || pl->G % 2 != 0)
        return FFNN_OK;
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ctx->device) !=
        cudaSuccess) {
        (void)cudaGetLastError();
        return FFNN_OK;
    }
    const size_t smem = smem_floats(pl->JB, pl->RC, pl->D4s, pl->Bs,
                                    (int)job->out, pl->NG, pl->D4, pl->u8, pl->xbufs, 1) * 4;
    if (major < 9 || smem > (size_t)pl->optin) return FFNN_OK;
    pkernel_fn k = kernel_for(pl->JB, pl->u8, pl->tc);
    FFNN_CUDA_CHECK(ctx, cudaFuncSetAttribute((const void *)k,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)smem));
    cudaLaunchAttribute at[2];
    const cudaLaunchConfig_t cfg = cl2_config(pl, smem, 0, ctx->stream, at);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, (const void *)k, &cfg) != cudaSuccess) {
        (void)cudaGetLastError();
        return FFNN_OK;
    }
    if (clusters * 2 >= pl->G) {
        pl->cl2 = 1;
        pl->smem = smem;
    }
    return FFNN_OK;
}

extern "C" int ffnn_cuda_persistent_supported(void *vctx, const ffnn_persistent_job *job)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    if (ctx == NULL || job == NULL || ctx->poisoned) {
        ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "persistent kernel: no usable context");
        return 0;
    }
    pplan pl;
    if (!make_plan(ctx, job, &pl)) return 0;
    int ok = 0;
    if (check_resident(ctx, &pl, &ok) != FFNN_OK) return 0;
    if (!ok)
        ffnn_fail(FFNN_ERR_UNSUPPORTED, "persistent kernel: %d blocks cannot all be resident",
                  pl.G);
    return ok;
}

/* The scratch of a launch: acc [3, B, C] or part [B, G, CMAX] and dlog [B, C]; the
 * barrier counter and bad [3]. */
static ffnn_status scratch(ffnn_cuda_ctx *ctx, size_t bytes, void **out)
{
    if (ctx->persist_bytes < bytes) {
        if (ctx->persist_scratch != NULL) {
            FFNN_CUDA_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
            FFNN_CUDA_CHECK(ctx, cudaFree(ctx->persist_scratch));
            ctx->persist_scratch = NULL;
            ctx->persist_bytes = 0;
        }
        FFNN_CUDA_CHECK(ctx, cudaMalloc(&ctx->persist_scratch, bytes));
        ctx->persist_bytes = bytes;
    }
    *out = ctx->persist_scratch;
    return FFNN_OK;
}

/* FFNN_PERSISTENT_PROFILE=1: wait for the launch and print, per phase, the mean
 * microseconds per step of block 0 and of all blocks (clock64 of thread 0 after
 * a __syncthreads; the marks add those syncs, so the total runs a little slow). */
static ffnn_status print_profile(ffnn_cuda_ctx *ctx, const pjob_dev *p, int G)
{
    static const char *names[NPROF] = {"load x", "forward", "partial logits", "barrier 1",
                                       "softmax/CE rows", "barrier 2 + dlog", "backward small",
                                       "dW1 + update"};
    unsigned long long host[NPROF * 1024];
    if (G > 1024) return FFNN_OK;
    int khz = 0;
    FFNN_CUDA_CHECK(ctx, cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, ctx->device));
    FFNN_CUDA_CHECK(ctx, cudaMemcpyAsync(host, p->prof, (size_t)G * NPROF * sizeof *host,
                                         cudaMemcpyDeviceToHost, ctx->stream));
    FFNN_CUDA_CHECK(ctx, cudaStreamSynchronize(ctx->stream));
    const double us = 1e3 / (double)khz / (double)p->steps; /* cycles -> us per step */
    fprintf(stderr, "persistent profile (%d blocks, %d steps, batch %d, clock %d MHz):\n", G,
            p->steps, p->B, khz / 1000);
    double tot0 = 0, totm = 0;
    for (int k = 0; k < NPROF; k++) {
        double mean = 0;
        for (int g = 0; g < G; g++) mean += (double)host[g * NPROF + k];
        mean /= G;
        tot0 += host[k] * us;
        totm += mean * us;
        fprintf(stderr, "  %-16s block 0 %8.3f us/step   mean %8.3f us/step\n", names[k],
                host[k] * us, mean * us);
    }
    fprintf(stderr, "  %-16s block 0 %8.3f us/step   mean %8.3f us/step\n", "total", tot0, totm);
    return FFNN_OK;
}

extern "C" ffnn_status ffnn_cuda_train_persistent(void *vctx, const ffnn_persistent_job *job)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "train_persistent");
    const int mse = job != NULL && job->loss == FFNN_LOSS_MSE;
    if (job == NULL || job->index == NULL ||
        (mse ? job->data.targets == NULL || job->data.target_width != job->out
             : job->data.labels == NULL) ||
        (job->data.images == NULL) == (job->data.values == NULL) || job->W1 == NULL ||
        job->W2 == NULL || job->row_loss == NULL || job->row_correct == NULL ||
        job->data.features != job->in)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda train_persistent: incomplete job (index, labels (ce) or "
                         "float targets of the output width (mse), one of "
                         "images/values with features == in, W1, W2, row outputs)");
    if (job->steps == 0) return FFNN_OK;
    if ((job->first_step + job->steps - 1) * job->batch_size >= job->n)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "cuda train_persistent: steps [%zu, %zu) run past the %zu samples",
                         job->first_step, job->first_step + job->steps, job->n);
    if (job->steps > (size_t)INT32_MAX / 4)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "cuda train_persistent: too many steps");
    pplan pl;
    if (!make_plan(ctx, job, &pl)) return FFNN_ERR_UNSUPPORTED;
    int ok = 0;
    ffnn_status st = check_resident(ctx, &pl, &ok);
    if (st != FFNN_OK) return st;
    if (!ok)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                         "persistent kernel: %d blocks cannot all be resident", pl.G);
    if ((st = pick_cl2(ctx, job, &pl)) != FFNN_OK) return st;
    const size_t B = job->batch_size, C = job->out;
    /* the exchange (measured, docs/RESULTS.md, 784-256relu-10 on an H200, one barrier
     * against two in ms/epoch: batch 128 9.80 / 10.51, 160 10.45 / 10.74, 192 9.32 /
     * 9.45, 256 8.39 / 8.25) */
    const int one_barrier = (size_t)pl.Bs * C <= ONE_BARRIER_MAX; /* R > 1: always */
    const size_t acc_bytes = one_barrier ? 3 * B * C * sizeof(long long)
                                         : B * (size_t)pl.G * CMAX * sizeof(float) +
                                               ((B * C * sizeof(float) + 127) & ~(size_t)127);
    /* after acc: bar, bad [3] (one 128-byte line), gbar [Hg] (zeroed); prof [G, NPROF];
     * wpart [G, WP] */
    const int Hg = pl.G / pl.R;
    const size_t ctrl_bytes = 128 + (((size_t)Hg * sizeof(unsigned) + 127) & ~(size_t)127);
    const size_t prof_bytes = (size_t)pl.G * NPROF * sizeof(unsigned long long);
    const size_t wpart_bytes =
        pl.R > 1 ? (size_t)pl.G * wpart_floats(pl.JB, pl.D4, (int)C) * sizeof(float) : 0;
    const size_t wpart_at = (acc_bytes + ctrl_bytes + prof_bytes + 255) & ~(size_t)255;
    void *base = NULL;
    if ((st = scratch(ctx, wpart_at + wpart_bytes, &base)) != FFNN_OK) return st;

    pjob_dev p;
    memset(&p, 0, sizeof p);
    p.images = job->data.images;
    p.values = job->data.values;
    p.labels = job->data.labels;
    p.targets = job->data.targets;
    p.mse = mse;
    p.index = job->index;
    p.W1 = job->W1;
    p.b1 = job->b1;
    p.W2 = job->W2;
    p.b2 = job->b2;
    p.row_loss = job->row_loss;
    p.row_correct = job->row_correct;
    p.one_barrier = one_barrier;
    if (one_barrier) {
        p.acc = (long long *)base;
    } else {
        p.part = (float *)base;
        p.dlog = (float *)((char *)base + B * (size_t)pl.G * CMAX * sizeof(float));
    }
    p.bar = (unsigned *)((char *)base + acc_bytes);
    p.bad = p.bar + 4;
    p.gbar = p.bar + 32; /* a line of their own */
    if (pl.R > 1) p.wpart = (float *)((char *)base + wpart_at);
    p.R = pl.R;
    p.Bs = pl.Bs;
    p.lr = job->lr;
    p.D = (int)job->in;
    p.H = (int)job->hidden;
    p.C = (int)C;
    p.B = (int)B;
    p.n = (int)job->n;
    p.first_step = (int)job->first_step;
    p.steps = (int)job->steps;
    p.D4 = pl.D4;
    p.D4s = pl.D4s;
    p.RC = pl.RC;
    p.G = pl.G;
    p.NG = pl.NG;
    p.u8 = pl.u8;
    p.xbufs = pl.xbufs;
    p.cl2 = pl.cl2;
    p.act = (int)job->hidden_act;
    p.has_b1 = job->b1 != NULL;
    p.has_b2 = job->b2 != NULL;
    const char *prof_env = getenv("FFNN_PERSISTENT_PROFILE");
    const int profile = prof_env != NULL && prof_env[0] == '1';
    if (profile) p.prof = (unsigned long long *)((char *)base + acc_bytes + ctrl_bytes);
    /* the accumulators (one barrier), the barrier counters and the flags start at 0 */
    FFNN_CUDA_CHECK(ctx, cudaMemsetAsync(one_barrier ? base : (void *)p.bar, 0,
                                         one_barrier ? acc_bytes + ctrl_bytes : ctrl_bytes,
                                         ctx->stream));
    if (pl.cl2) { /* cooperative, in clusters of two */
        cudaLaunchAttribute at[2];
        const cudaLaunchConfig_t cfg = cl2_config(&pl, pl.smem, 1, ctx->stream, at);
        FFNN_CUDA_CHECK(ctx, cudaLaunchKernelEx(&cfg, kernel_for(pl.JB, pl.u8, pl.tc), p));
    } else {
        void *args[] = {(void *)&p};
        FFNN_CUDA_CHECK(ctx, cudaLaunchCooperativeKernel((const void *)kernel_for(pl.JB, pl.u8, pl.tc),
                                                         dim3((unsigned)pl.G), dim3(PT), args,
                                                         pl.smem, ctx->stream));
    }
    FFNN_CUDA_LAUNCH_CHECK(ctx, "persistent_kernel");
    if (profile) return print_profile(ctx, &p, pl.G);
    return FFNN_OK;
}
