/* persistent_job.cuh - what every phase of the persistent kernel (persistent.cu) shares:
 * its sizes (PT threads a block, CMAX classes), the job as the kernel sees it
 * (pjob_dev), the shared-memory layout helpers the host shares, the fixed point of
 * the one-barrier exchange, warp sums, the two-block cluster (cl2) and cp.async.
 * Included by persistent.cu only; the design: persistent.cu's head comment. */
#ifndef FFNN_CUDA_PERSISTENT_JOB_CUH
#define FFNN_CUDA_PERSISTENT_JOB_CUH

#include <cooperative_groups.h>

#include "common.cuh"
#include "device_math.cuh"

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

#endif
