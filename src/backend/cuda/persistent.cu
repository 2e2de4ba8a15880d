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
 *
 * Files: persistent_job.cuh (the job, sizes, fixed point, clusters), persistent_gather.cuh
 * (phase A's loads), persistent_tiles.cuh (the per-tile arithmetic), persistent_phases.cuh
 * with persistent_loss.cuh and persistent_backward.cuh (the phases this kernel runs in
 * order); here the kernel, its plan and its launch.
 */
#include <math.h>
#include <stdlib.h>

#include "persistent_phases.cuh"

/* The kernel: the phases of persistent_phases.cuh in order, once per step. */
template <int JB, bool U8, bool TC>
static __global__ void __launch_bounds__(PT, 1) persistent_kernel(const pjob_dev p)
{
    extern __shared__ float4 smem4[];
    pshm h = carve<JB, U8>(p, (float *)smem4);
    const pblk k = block_of<JB>(p);
    load_weights<JB>(p, h, k);

    ploop lp = {0, 0, 0, 0, 0}; /* barrier targets, cl_pending, idx_ready, x_ready */
    const int KS = PT / p.RC;   /* k-splits of the forward */
    const int Dk4 = (p.D4 + KS - 1) / KS;
    int MT = 1; /* TC: the forward's m tiles, a power of 2 (forward_tc) */
    while (TC && 16 * MT < p.Bs) MT *= 2;

    pprof pr = {{0, 0, 0, 0, 0, 0, 0, 0}, clock64()};
    for (int s = 0; s < p.steps; s++) {
        const pstep st = step_begin(p, h, k, s);
        phase_forward<JB, U8, TC>(p, h, k, st, lp, pr, KS, Dk4, MT); /* A */
        phase_partials<JB>(p, h, k, st, lp);
        prof_mark(p, pr, 2);
        step_barrier(p, h, k, st, lp);
        prof_mark(p, pr, 3);
        if (p.one_barrier) { /* B */
            loss_one_barrier(p, h, k, st);
            prof_mark(p, pr, 4);
            prof_mark(p, pr, 5);
        } else {
            loss_two_barriers(p, h, k, st, lp, pr); /* closes phase 4 itself */
            prof_mark(p, pr, 5);
        }

        /* ---- C: backward and update of what this block owns ---- */
        /* the next step's indices (when it is one chunk), loaded now, stored in sidx at
         * the step's end: its load_x skips that round trip */
        const int pre_idx = st.next_rows > 0 && st.next_rows <= p.RC && p.xbufs == 1;
        const int next_idx = pre_idx && k.t < st.next_rows ? p.index[st.next_row0 + k.t] : 0;
        small_sums<JB>(p, h, k, st.rows);
        __syncthreads();
        /* R == 1: db2, dW2 and db1 applied now (R > 1: after the row groups' sums) */
        if (p.R == 1) update_small<JB>(p, h.gtmp, h.W2s, h.b1s, h.b2s, k.j0);
        prof_mark(p, pr, 6);
        if (TC)
            dw1_phase_tc<JB, U8>(p, h, k, st.rows, lp);
        else
            dw1_phase_fp32<JB, U8>(p, h, k, st, lp);
        step_end(p, h, k, st, lp, pre_idx, next_idx);
        prof_mark(p, pr, 7);
    }
    if (FFNN_CL2 && p.cl2) cl_sync(); /* no block leaves while its peer may write to it */
    if (p.prof && k.t == 0)
        for (int q = 0; q < NPROF; q++) p.prof[k.g * NPROF + q] = (unsigned long long)pr.acc[q];
    write_back<JB>(p, h, k);
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

/* The job's own checks, before anything is planned. */
static ffnn_status check_job(const ffnn_persistent_job *job, int mse)
{
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
    return FFNN_OK;
}

/* The launch's global scratch, byte offsets from its base: the exchange (one barrier:
 * acc [3, B, C] fixed point; two: part [B, G, CMAX] then dlog [B, C]), then bar, bad
 * [3] (one 128-byte line) and gbar [Hg] (zeroed), prof [G, NPROF], wpart [G, WP]. */
typedef struct pscratch {
    size_t acc_bytes, ctrl_bytes, prof_bytes, wpart_bytes, wpart_at;
} pscratch;

static pscratch scratch_layout(const ffnn_persistent_job *job, const pplan *pl, int one_barrier)
{
    const size_t B = job->batch_size, C = job->out;
    pscratch sc;
    sc.acc_bytes = one_barrier ? 3 * B * C * sizeof(long long)
                               : B * (size_t)pl->G * CMAX * sizeof(float) +
                                     ((B * C * sizeof(float) + 127) & ~(size_t)127);
    const int Hg = pl->G / pl->R;
    sc.ctrl_bytes = 128 + (((size_t)Hg * sizeof(unsigned) + 127) & ~(size_t)127);
    sc.prof_bytes = (size_t)pl->G * NPROF * sizeof(unsigned long long);
    sc.wpart_bytes =
        pl->R > 1 ? (size_t)pl->G * wpart_floats(pl->JB, pl->D4, (int)C) * sizeof(float) : 0;
    sc.wpart_at = (sc.acc_bytes + sc.ctrl_bytes + sc.prof_bytes + 255) & ~(size_t)255;
    return sc;
}

/* The kernel's job: the host job, the plan and the scratch at base (scratch_layout);
 * prof: the profile's counters wanted. */
static void fill_job(const ffnn_persistent_job *job, const pplan *pl, void *base,
                     const pscratch *sc, int one_barrier, int mse, int prof, pjob_dev *out)
{
    const size_t B = job->batch_size, C = job->out;
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
        p.dlog = (float *)((char *)base + B * (size_t)pl->G * CMAX * sizeof(float));
    }
    p.bar = (unsigned *)((char *)base + sc->acc_bytes);
    p.bad = p.bar + 4;
    p.gbar = p.bar + 32; /* a line of their own */
    if (pl->R > 1) p.wpart = (float *)((char *)base + sc->wpart_at);
    p.R = pl->R;
    p.Bs = pl->Bs;
    p.lr = job->lr;
    p.D = (int)job->in;
    p.H = (int)job->hidden;
    p.C = (int)C;
    p.B = (int)B;
    p.n = (int)job->n;
    p.first_step = (int)job->first_step;
    p.steps = (int)job->steps;
    p.D4 = pl->D4;
    p.D4s = pl->D4s;
    p.RC = pl->RC;
    p.G = pl->G;
    p.NG = pl->NG;
    p.u8 = pl->u8;
    p.xbufs = pl->xbufs;
    p.cl2 = pl->cl2;
    p.act = (int)job->hidden_act;
    p.has_b1 = job->b1 != NULL;
    p.has_b2 = job->b2 != NULL;
    if (prof) p.prof = (unsigned long long *)((char *)base + sc->acc_bytes + sc->ctrl_bytes);
    *out = p;
}

extern "C" ffnn_status ffnn_cuda_train_persistent(void *vctx, const ffnn_persistent_job *job)
{
    ffnn_cuda_ctx *ctx = (ffnn_cuda_ctx *)vctx;
    FFNN_CUDA_GUARD(ctx, "train_persistent");
    const int mse = job != NULL && job->loss == FFNN_LOSS_MSE;
    ffnn_status st = check_job(job, mse);
    if (st != FFNN_OK) return st;
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
    if ((st = check_resident(ctx, &pl, &ok)) != FFNN_OK) return st;
    if (!ok)
        return ffnn_fail(FFNN_ERR_UNSUPPORTED,
                         "persistent kernel: %d blocks cannot all be resident", pl.G);
    if ((st = pick_cl2(ctx, job, &pl)) != FFNN_OK) return st;
    /* the exchange (measured, docs/RESULTS.md, 784-256relu-10 on an H200, one barrier
     * against two in ms/epoch: batch 128 9.80 / 10.51, 160 10.45 / 10.74, 192 9.32 /
     * 9.45, 256 8.39 / 8.25) */
    const int one_barrier = (size_t)pl.Bs * job->out <= ONE_BARRIER_MAX; /* R > 1: always */
    const pscratch sc = scratch_layout(job, &pl, one_barrier);
    void *base = NULL;
    if ((st = scratch(ctx, sc.wpart_at + sc.wpart_bytes, &base)) != FFNN_OK) return st;
    const char *prof_env = getenv("FFNN_PERSISTENT_PROFILE");
    const int profile = prof_env != NULL && prof_env[0] == '1';
    pjob_dev p;
    fill_job(job, &pl, base, &sc, one_barrier, mse, profile, &p);
    /* the accumulators (one barrier), the barrier counters and the flags start at 0 */
    FFNN_CUDA_CHECK(ctx, cudaMemsetAsync(one_barrier ? base : (void *)p.bar, 0,
                                         one_barrier ? sc.acc_bytes + sc.ctrl_bytes
                                                     : sc.ctrl_bytes,
                                         ctx->stream));
    if (pl.cl2) { /* cooperative, in clusters of two */
        cudaLaunchAttribute at[2];
        const cudaLaunchConfig_t cfg = cl2_config(&pl, pl.smem, 1, ctx->stream, at);
        FFNN_CUDA_CHECK(ctx, cudaLaunchKernelEx(&cfg, kernel_for(pl.JB, pl.u8, pl.tc), p));
    } else {
        void *args[] = {(void *)&p};
        FFNN_CUDA_CHECK(ctx,
                        cudaLaunchCooperativeKernel((const void *)kernel_for(pl.JB, pl.u8, pl.tc),
                                                    dim3((unsigned)pl.G), dim3(PT), args,
                                                    pl.smem, ctx->stream));
    }
    FFNN_CUDA_LAUNCH_CHECK(ctx, "persistent_kernel");
    if (profile) return print_profile(ctx, &p, pl.G);
    return FFNN_OK;
}
