/* persistent_phases.cuh - the persistent kernel (persistent.cu) as a sequence of named
 * phases, each a __device__ __forceinline__ function over the block's shared memory
 * (pshm), the block's place in the grid (pblk) and the step (pstep):
 *   load_weights      the block's slice of W1, b1, W2 and b2 into shared memory
 *   step_begin        the step's rows, labels and (xbufs 2) next indices
 *   phase_forward     A: gather (load_x) and h = act(x W1[J]^T + b1[J]), by chunk
 *   phase_partials    the partial logits P_g to the exchange (three forms)
 *   step_barrier      the grid barrier (arrive, next batch's copy, wait)
 *   loss_one_barrier  B: logits, loss and dlogits from the fixed-point sums
 *   loss_two_barriers B: the same from part, then the second barrier
 *   small_sums        C: dz1, db1, db2 and dW2's sums
 *   dw1_phase_tc/fp32 C: dW1's sums (R > 1: met across the row groups), the update
 *   step_end          next indices into sidx, the batch buffers swap
 *   write_back        the block's slice back to global memory
 * Each is the kernel's code moved as it was: the same statements in the same order,
 * every __syncthreads and barrier where it stood. Included by persistent.cu only. */
#ifndef FFNN_CUDA_PERSISTENT_PHASES_CUH
#define FFNN_CUDA_PERSISTENT_PHASES_CUH

#include "grid_barrier.cuh"
#include "persistent_gather.cuh"
#include "persistent_tiles.cuh"

/* The block's shared memory (float counts; every region a multiple of 4 floats). */
typedef struct pshm {
    float *W1s;     /* [JB, XS]                                           */
    float *Xs;      /* [RC, XS] floats, or U8: [RC, D4s] words of pixels  */
    float *Xn;      /* xbufs 2: the next step's (Xs and Xn swap per step) */
    float *W2s;     /* [C, JB] (padded to CMAX classes)                   */
    float *b1s;     /* [JB]  (padded to 8)                                */
    float *b2s;     /* [CMAX]                                             */
    float *gtmp;    /* [CMAX * (1 + JB) + JB] the small sums              */
    float *Hs;      /* [Bs, JB] hidden activations                        */
    float *dZs;     /* [Bs, JB] dz1                                       */
    float *dls;     /* [Bs, C] dlogits                                    */
    float *red;     /* [PT, JB]: phase A's k-split sums share dls's space */
    long long *Qin; /* cl2, rank 0: [B, C] rank 1's partials, fixed point */
    int *sidx;      /* [RC] the chunk's data rows                         */
    int *nidx;      /* xbufs 2: [RC] next step's indices                  */
    int *srow;      /* [Bs] labels (ce) / data rows (mse)                 */
    float *NGs;     /* [NG-1, JB, D4*4] dW1's row groups' partial sums    */
    int own_in_xn;  /* cl2: Qown lives in Xn (cl2_own_in_xn)              */
} pshm;

/* The block's place: block g = rg Hg + hg owns hidden units [hg JB, hg JB + JB) and the
 * batch's rows [rg Bs, rg Bs + Bs) (rb0 = rg Bs); thread t = 32 warp + lane. */
typedef struct pblk {
    int g, t, lane, warp, C, G, B, Hg, hg, rb0, j0, XS;
    float lr;
} pblk;

/* One step's rows: [row0, row0 + rows) of the epoch (R > 1: 0 in the last groups of a
 * short last batch), brows the batch's; the next step's (xbufs 2, pre_idx); phase B's
 * labels loaded ahead (mine_t, lab_t: one barrier; label_first: two barriers). */
typedef struct pstep {
    int s, brows, row0, rows;
    float inv_rows;
    int next_row0, next_rows;
    int mine_t, lab_t, b_first, label_first;
} pstep;

/* What the step loop carries: barrier targets (grid, and R > 1 the slice's), cl2 rank
 * 1's owed cluster wait, sidx holding the first chunk's indices, Xs's batch on its
 * way (xbufs 2). */
typedef struct ploop {
    unsigned target, gtarget;
    int cl_pending, idx_ready, x_ready;
} ploop;

/* FFNN_PERSISTENT_PROFILE=1 (p.prof, uniform over the grid): thread 0's clock per phase */
typedef struct pprof {
    long long acc[NPROF];
    long long last;
} pprof;

/* close phase k of thread 0's clock */
static __device__ __forceinline__ void prof_mark(const pjob_dev &p, pprof &pr, int k)
{
    if (p.prof) {
        __syncthreads();
        if (threadIdx.x == 0) {
            const long long now_ = clock64();
            pr.acc[k] += now_ - pr.last;
            pr.last = now_;
        }
    }
}

/* the carve of the dynamic shared memory (smem_floats on the host: the same sizes) */
template <int JB, bool U8>
static __device__ __forceinline__ pshm carve(const pjob_dev &p, float *sm)
{
    pshm h;
    const int XS = p.D4s * 4;
    h.W1s = sm;
    h.Xs = h.W1s + JB * XS;
    h.Xn = h.Xs + p.RC * (U8 ? p.D4s : XS);
    h.W2s = h.Xs + p.xbufs * p.RC * (U8 ? p.D4s : XS);
    h.b1s = h.W2s + 4 * ((CMAX * JB + 3) / 4);
    h.b2s = h.b1s + 8;
    h.gtmp = h.b2s + CMAX;
    h.Hs = h.gtmp + 4 * ((CMAX * (1 + JB) + JB + 3) / 4);
    h.dZs = h.Hs + 4 * ((p.Bs * JB + 3) / 4);
    h.dls = h.dZs + 4 * ((p.Bs * JB + 3) / 4);
    h.red = h.dls;
    h.own_in_xn = cl2_own_in_xn(p.Bs, p.C, p.RC, p.D4s, p.xbufs);
    const int dls_floats = dls_floats_of(p.Bs, p.C, JB, p.cl2, h.own_in_xn);
    h.Qin = (long long *)(h.dls + cl2_qin(p.Bs, p.C, JB, h.own_in_xn));
    h.sidx = (int *)(h.dls + dls_floats);
    h.nidx = h.sidx + 4 * ((p.RC + 3) / 4);
    h.srow = h.sidx + p.xbufs * 4 * ((p.RC + 3) / 4);
    h.NGs = (float *)(h.srow + 4 * ((p.Bs + 3) / 4));
    return h;
}

template <int JB>
static __device__ __forceinline__ pblk block_of(const pjob_dev &p)
{
    pblk k;
    k.g = blockIdx.x, k.t = threadIdx.x, k.lane = k.t & 31, k.warp = k.t >> 5;
    k.C = p.C, k.G = p.G, k.B = p.B;
    k.Hg = k.G / p.R, k.hg = k.g % k.Hg, k.rb0 = (k.g / k.Hg) * p.Bs;
    k.j0 = k.hg * JB;
    k.lr = p.lr;
    k.XS = p.D4s * 4;
    return k;
}

/* W1[J, :], W2[:, J], b1[J] and b2 into shared memory (zero past H and D) */
template <int JB>
static __device__ __forceinline__ void load_weights(const pjob_dev &p, const pshm &h,
                                                    const pblk &k)
{
    const int t = k.t, C = k.C, j0 = k.j0, XS = k.XS;
    for (int i = t; i < JB * XS; i += PT) {
        const int j = i / XS, d = i - j * XS;
        h.W1s[i] = (j0 + j < p.H && d < p.D) ? p.W1[(size_t)(j0 + j) * p.D + d] : 0.0f;
    }
    for (int i = t; i < C * JB; i += PT) {
        const int c = i / JB, j = i - c * JB;
        h.W2s[i] = j0 + j < p.H ? p.W2[(size_t)c * p.H + j0 + j] : 0.0f;
    }
    if (t < JB) h.b1s[t] = (p.has_b1 && j0 + t < p.H) ? p.b1[j0 + t] : 0.0f;
    if (t < CMAX) h.b2s[t] = (p.has_b2 && t < C) ? p.b2[t] : 0.0f;
    __syncthreads();
}

/* write back what this block owns (R > 1: row group 0; the others hold the same) */
template <int JB>
static __device__ __forceinline__ void write_back(const pjob_dev &p, const pshm &h,
                                                  const pblk &k)
{
    const int t = k.t, C = k.C, j0 = k.j0;
    if (k.g >= k.Hg) return;
    for (int i = t; i < JB * p.D; i += PT) {
        const int j = i / p.D, d = i - j * p.D;
        if (j0 + j < p.H) p.W1[(size_t)(j0 + j) * p.D + d] = h.W1s[j * k.XS + d];
    }
    for (int i = t; i < C * JB; i += PT) {
        const int c = i / JB, j = i - c * JB;
        if (j0 + j < p.H) p.W2[(size_t)c * p.H + j0 + j] = h.W2s[i];
    }
    if (t < JB && p.has_b1 && j0 + t < p.H) p.b1[j0 + t] = h.b1s[t];
    if (k.g == 0 && t < C && p.has_b2) p.b2[t] = h.b2s[t];
}

/* The step's rows; xbufs 2: the next step's indices into nidx, for the copy started at
 * this step's barrier (published to the block by the barrier's __syncthreads); phase
 * B's labels, loaded now, used after the barrier. One barrier: every row's (mse: data
 * row) into srow, row t's held in a register through phase A; two barriers: this
 * warp's first row's. */
static __device__ __forceinline__ pstep step_begin(const pjob_dev &p, const pshm &h,
                                                   const pblk &k, int s)
{
    pstep st;
    const int t = k.t, B = k.B, rb0 = k.rb0;
    st.s = s;
    st.brows = batch_rows(p, p.first_step + s);
    st.row0 = (p.first_step + s) * B + rb0;
    st.rows = group_rows(p, st.brows, rb0);
    st.inv_rows = 1.0f / (float)st.brows;
    st.next_row0 = (p.first_step + s + 1) * B + rb0;
    st.next_rows = s + 1 < p.steps ? group_rows(p, batch_rows(p, p.first_step + s + 1), rb0) : 0;
    if (p.xbufs == 2 && t < st.next_rows) h.nidx[t] = p.index[st.next_row0 + t];
    st.mine_t = p.one_barrier && t < st.rows;
    const int row_t = st.mine_t ? p.index[st.row0 + t] : 0;
    st.lab_t = st.mine_t ? (p.mse ? row_t : p.labels[row_t]) : 0;
    st.b_first = k.g + k.G * k.warp;
    st.label_first = !p.one_barrier && st.b_first < st.rows && !p.mse
                         ? p.labels[p.index[st.row0 + st.b_first]] : 0;
    return st;
}

/* A, fp32: thread t = ks RC + r sums x[r] W1[j]^T over float4 columns [ks Dk4, ks Dk4 +
 * Dk4) into red[(ks RC + r) JB + j] (rows r >= rc: zeros) */
template <int JB, bool U8>
static __device__ __forceinline__ void forward_fp32(const pjob_dev &p, const pshm &h,
                                                    const pblk &k, int rc, int Dk4)
{
    const int t = k.t;
    const float4 *W14 = (const float4 *)h.W1s;
    const int r = t % p.RC, ks = t / p.RC;
    float acc[JB];
#pragma unroll
    for (int j = 0; j < JB; j++) acc[j] = 0.0f;
    if (r < rc) {
        const int d_end = min(p.D4, (ks + 1) * Dk4);
        for (int d4 = ks * Dk4; d4 < d_end; d4++) {
            const float4 x = x_at<U8, true>(h.Xs, p.D4s, r, d4);
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
    for (int j = 0; j < JB; j++) h.red[(ks * p.RC + r) * JB + j] = acc[j];
}

/* A: h[c0 + rr, j] = act(sum of red's k-split sums in split order + b1[j]): KS of RC
 * rows, or (TC) PWARPS / MT of 16 MT */
template <int JB, bool U8, bool TC>
static __device__ __forceinline__ void hidden_act(const pjob_dev &p, const pshm &h,
                                                  const pblk &k, int c0, int rc, int KS,
                                                  int MT)
{
    const float *red = h.red;
    const int nsplit = TC ? PWARPS / MT : KS, rstride = TC ? 16 * MT : p.RC;
    for (int i = k.t; i < rc * JB; i += PT) {
        const int rr = i / JB, j = i - rr * JB;
        float z = 0.0f;
        for (int q = 0; q < nsplit; q++) z += red[(q * rstride + rr) * JB + j];
        z = __fadd_rn(px_sum<U8>(z), h.b1s[j]);
        /* relu outside the activation switch: its work as before */
        const ffnn_activation act = (ffnn_activation)p.act;
        h.Hs[(c0 + rr) * JB + j] = k.j0 + j >= p.H          ? 0.0f
                                   : act == FFNN_ACT_RELU ? ffnn_dev_relu(z)
                                                          : ffnn_dev_act_forward_basic(act, z);
    }
}

/* ---- A: forward of the hidden slice, chunk by chunk (gather, product, activation) ---- */
template <int JB, bool U8, bool TC>
static __device__ __forceinline__ void phase_forward(const pjob_dev &p, const pshm &h,
                                                     const pblk &k, const pstep &st,
                                                     const ploop &lp, pprof &pr, int KS,
                                                     int Dk4, int MT)
{
    for (int c0 = 0; c0 < st.rows; c0 += p.RC) {
        const int rc = min(p.RC, st.rows - c0);
        if (lp.x_ready) /* started at the last step's barrier */
            cp_async_wait_all();
        else
            load_x(p, h.Xs, h.sidx, st.row0 + c0, rc, c0 == 0 && lp.idx_ready);
        __syncthreads();
        prof_mark(p, pr, 0);
        if (TC)
            forward_tc<JB>((const unsigned *)h.Xs, (const float4 *)h.W1s, p.D4, p.D4s, rc, MT,
                           h.red);
        else
            forward_fp32<JB, U8>(p, h, k, rc, Dk4);
        __syncthreads();
        hidden_act<JB, U8, TC>(p, h, k, c0, rc, KS, MT);
        __syncthreads();
        prof_mark(p, pr, 1);
    }
}

/* One barrier, cl2: a cluster's two blocks: rank 1 writes its fixed-point partials into
 * rank 0's Qin (DSMEM stores) and arrives at the cluster barrier; rank 0 writes its own
 * into Qown, waits for rank 1's arrival, and adds each pair as one integer: half the
 * atomics, the same integer sums. Rank 1 writes Qin again only after this step's grid
 * barrier, which waits for rank 0's arrival after these reads; it waits at the cluster
 * barrier after the grid's (rank 0 arrived): returns 1 there (the wait owed). */
template <int JB>
static __device__ __forceinline__ int partials_cl2(const pjob_dev &p, const pshm &h,
                                                   const pblk &k, const pstep &st,
                                                   long long *lacc)
{
    const int t = k.t, C = k.C, rows = st.rows, s = st.s;
    const int lead = cl_rank() == 0;
    long long *own = (long long *)(h.own_in_xn ? h.Xn : h.dls); /* Xn: this step's */
    long long *dst = lead ? own : cl_peer(h.Qin);
    for (int i = t; i < rows * C; i += PT) {
        const int b = i / C;
        dst[i] = partial_fx<JB>(h.Hs, h.W2s, b, i - b * C, p.bad + s % 3);
    }
    cl_arrive();
    if (lead) {
        cl_wait();
        for (int i = t; i < rows * C; i += PT)
            atomicAdd((unsigned long long *)(lacc + i), (unsigned long long)(own[i] + h.Qin[i]));
        return 0;
    }
    return 1;
}

/* The partial logits of this block's hidden units: one barrier, added into acc[s % 3]
 * (the labels into srow first, published by the barrier's __syncthreads); two barriers,
 * part[b, g, 0..CMAX) (the classes padded to CMAX floats, so phase B reads them as
 * float4s). Sets lp.cl_pending (cl2, rank 1). */
template <int JB>
static __device__ __forceinline__ void phase_partials(const pjob_dev &p, const pshm &h,
                                                      const pblk &k, const pstep &st,
                                                      ploop &lp)
{
    const int t = k.t, C = k.C, G = k.G, rows = st.rows, row0 = st.row0, s = st.s;
    if (p.one_barrier) {
        if (st.mine_t) h.srow[t] = st.lab_t;
        for (int b = t + PT; b < rows; b += PT) {
            const int r = p.index[row0 + b];
            h.srow[b] = p.mse ? r : p.labels[r];
        }
    }
    /* the step's logits accumulator, this block's rows (not the forward's acc) */
    long long *lacc = p.acc + ((size_t)(s % 3) * k.B + k.rb0) * C;
    if (p.one_barrier && FFNN_CL2 && p.cl2) {
        lp.cl_pending = partials_cl2<JB>(p, h, k, st, lacc);
    } else if (p.one_barrier) {
        for (int i = t; i < rows * C; i += PT) { /* a flagged 0 adds nothing */
            const int b = i / C;
            atomicAdd((unsigned long long *)(lacc + i),
                      (unsigned long long)partial_fx<JB>(h.Hs, h.W2s, b, i - b * C,
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
                for (int j = 0; j < JB; j++) v = fmaf(h.Hs[b * JB + j], h.W2s[c * JB + j], v);
            }
            p.part[((size_t)b * G + k.g) * CMAX + c] = v;
        }
    }
}

/* The step's grid barrier; xbufs 2: the next step's batch into Xn while the grid
 * gathers and this step finishes (its last read of Xs is dW1's); cl2 rank 1: its
 * cluster wait after the grid's (rank 0 arrived before the grid barrier). */
static __device__ __forceinline__ void step_barrier(const pjob_dev &p, const pshm &h,
                                                    const pblk &k, const pstep &st,
                                                    ploop &lp)
{
    grid_arrive(p.bar);
    if (st.next_rows > 0 && p.xbufs == 2) issue_x_u8(p, h.Xn, h.nidx, st.next_rows);
    grid_wait(p.bar, lp.target += k.G);
    if (lp.cl_pending) {
        cl_wait();
        lp.cl_pending = 0;
    }
}

#include "persistent_loss.cuh"
#include "persistent_backward.cuh"

/* After phase C: the next step's indices (pre_idx: one chunk, loaded at phase C's start
 * as next_idx) into sidx, so its load_x skips that round trip; xbufs 2: the buffers
 * trade places. */
static __device__ __forceinline__ void step_end(const pjob_dev &p, pshm &h, const pblk &k,
                                                const pstep &st, ploop &lp, int pre_idx,
                                                int next_idx)
{
    __syncthreads();
    if (pre_idx) {
        if (k.t < st.next_rows) h.sidx[k.t] = next_idx;
        __syncthreads();
    }
    lp.idx_ready = pre_idx;
    if (p.xbufs == 2) {
        float *tmp = h.Xs;
        h.Xs = h.Xn;
        h.Xn = tmp;
        lp.x_ready = st.next_rows > 0;
    }
}

#endif
