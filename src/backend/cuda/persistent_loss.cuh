/* persistent_loss.cuh - phase B of the persistent kernel (persistent.cu): the logits of
 * the block's rows from the exchange, softmax cross-entropy (or mse on float targets),
 * each row's loss and correct, and dlogits into dls [rows, C]. One barrier: a quarter
 * warp per row from the fixed-point sums acc[s % 3]; two barriers: a warp per row from
 * part [B, G, CMAX], then the second grid barrier. Formulas: device_math.cuh (loss.cu's).
 * Included by persistent_phases.cuh only. */
#ifndef FFNN_CUDA_PERSISTENT_LOSS_CUH
#define FFNN_CUDA_PERSISTENT_LOSS_CUH

/* One barrier: row b's logits for a quarter warp, classes c and c + 8 per lane (l0, l1:
 * those are real), their max m and argmax arg (lowest class on ties). */
typedef struct qrow {
    int b, lab;
    bool l0, l1;
    float z0, z1, m;
    int arg;
} qrow;

static __device__ __forceinline__ qrow quarter_logits(const pshm &h, const pblk &k, int b0,
                                                      int rows, const long long *lacc,
                                                      int bad)
{
    qrow q;
    const int C = k.C, quarter = k.lane >> 3, c = k.lane & 7;
    q.b = b0 + quarter;
    const int b = q.b;
    q.l0 = b < rows && c < C, q.l1 = b < rows && c + 8 < C;
    const bool l0 = q.l0, l1 = q.l1;
    q.lab = b < rows ? h.srow[b] : 0;
    const long long *ab = lacc + (size_t)b * C;
    const long long q0 = l0 ? __ldcg(ab + c) : 0, q1 = l1 ? __ldcg(ab + c + 8) : 0;
    float z0 = l0 ? __fadd_rn(fx_to(q0), h.b2s[c]) : -INFINITY;
    float z1 = l1 ? __fadd_rn(fx_to(q1), h.b2s[c + 8]) : -INFINITY;
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
    q.z0 = z0, q.z1 = z1, q.m = m, q.arg = arg;
    return q;
}

/* One barrier, mse: row loss mean_c (z - t)^2, correct when every class is on the same
 * side of 0.5 as its target, dlog = 2 (z - t) scale; own: this block writes the row's */
static __device__ __forceinline__ void quarter_mse(const pjob_dev &p, const pblk &k,
                                                   const qrow &q, int own, float *dl,
                                                   int row0, float scale)
{
    const int C = k.C, quarter = k.lane >> 3, c = k.lane & 7, b = q.b;
    const bool l0 = q.l0, l1 = q.l1;
    const float z0 = q.z0, z1 = q.z1;
    const float *tr = p.targets + (size_t)q.lab * C;
    const float t0 = l0 ? tr[c] : 0.0f, t1 = l1 ? tr[c + 8] : 0.0f;
    const float d0 = z0 - t0, d1 = z1 - t1;
    float sum = (l0 ? ffnn_dev_mse_term(d0) : 0.0f) + (l1 ? ffnn_dev_mse_term(d1) : 0.0f);
#pragma unroll
    for (int off = 4; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    const unsigned okm = __ballot_sync(0xffffffffu, (!l0 || (z0 > 0.5f) == (t0 > 0.5f)) &&
                                                        (!l1 || (z1 > 0.5f) == (t1 > 0.5f)));
    if (own) {
        p.row_loss[row0 + b] = sum / (float)C;
        p.row_correct[row0 + b] = (uint8_t)(((okm >> (8 * quarter)) & 0xffu) == 0xffu);
    }
    if (l0) dl[c] = ffnn_dev_mse_grad(d0, scale);
    if (l1) dl[c + 8] = ffnn_dev_mse_grad(d1, scale);
}

/* One barrier, softmax cross-entropy: row loss, correct (argmax, or C == 1: z > 0 as
 * label != 0), dlog = (softmax - onehot) scale */
static __device__ __forceinline__ void quarter_ce(const pjob_dev &p, const pblk &k,
                                                  const qrow &q, int own, float *dl, int row0,
                                                  float scale)
{
    const int C = k.C, lane = k.lane, c = lane & 7, b = q.b, lab = q.lab;
    const bool l0 = q.l0, l1 = q.l1;
    const float z0 = q.z0, z1 = q.z1, m = q.m;
    float se = (l0 ? ffnn_dev_softmax_term(z0, m) : 0.0f) +
               (l1 ? ffnn_dev_softmax_term(z1, m) : 0.0f);
#pragma unroll
    for (int off = 4; off > 0; off >>= 1) se += __shfl_xor_sync(0xffffffffu, se, off);
    const int src = (lane & 24) | (lab & 7);
    const float zl0 = __shfl_sync(0xffffffffu, z0, src);
    const float zl1 = __shfl_sync(0xffffffffu, z1, src);
    const float zl = (lab & 8) ? zl1 : zl0;
    if (own) {
        p.row_loss[row0 + b] = lab >= 0 && lab < C ? ffnn_dev_softmax_ce_loss(m, se, zl) : NAN;
        p.row_correct[row0 + b] = (uint8_t)(C == 1 ? (z0 > 0.0f) == (lab != 0) : q.arg == lab);
    }
    if (l0) dl[c] = ffnn_dev_softmax_ce_grad(z0, m, se, c == lab, scale);
    if (l1) dl[c + 8] = ffnn_dev_softmax_ce_grad(z1, m, se, c + 8 == lab, scale);
}

/* ---- B, one barrier: every block, every row of its group (a quarter warp per row,
 * read straight from lacc): logits, softmax cross-entropy (mse), dlogits into dls.
 * Block hg of the group writes row b's loss and correct where b % Hg == hg; step s -
 * 1's accumulator acc[(s + 2) % 3] is zeroed for step s + 2. ---- */
static __device__ __forceinline__ void loss_one_barrier(const pjob_dev &p, const pshm &h,
                                                        const pblk &k, const pstep &st)
{
    const int g = k.g, t = k.t, C = k.C, G = k.G, B = k.B, s = st.s, rows = st.rows;
    const long long *lacc = p.acc + ((size_t)(s % 3) * B + k.rb0) * C;
    long long *old = p.acc + (size_t)((s + 2) % 3) * B * C; /* step s - 1's */
    for (int i = g * PT + t; i < B * C; i += G * PT) old[i] = 0;
    if (g == 0 && t == 0) p.bad[(s + 2) % 3] = 0u;
    const int bad = __ldcg(p.bad + s % 3) != 0u;
    const int c = k.lane & 7;
    const float scale = p.mse ? 1.0f / ((float)st.brows * (float)C) : st.inv_rows;
    for (int b0 = 4 * k.warp; b0 < rows; b0 += 4 * PWARPS) {
        const qrow q = quarter_logits(h, k, b0, rows, lacc, bad);
        const int own = q.b < rows && c == 0 && q.b % k.Hg == k.hg;
        float *dl = h.dls + (size_t)q.b * C;
        if (p.mse) {
            quarter_mse(p, k, q, own, dl, st.row0, scale);
            continue;
        }
        quarter_ce(p, k, q, own, dl, st.row0, scale);
    }
    __syncthreads();
}

/* Two barriers: row b's logits z[c] = b2[c] + sum over blocks of part[b, :, c], the
 * lane l summing blocks l, l + 32, ..., then the butterfly (every lane holds all);
 * m their max, arg the first argmax, mine = z[lane] */
static __device__ __forceinline__ void row_logits(const pjob_dev &p, const pshm &h,
                                                  const pblk &k, int b, float (&z)[CMAX],
                                                  float &m, int &arg, float &mine)
{
    const int lane = k.lane, C = k.C, G = k.G;
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
    m = -INFINITY, mine = 0.0f;
    arg = 0;
#pragma unroll
    for (int c = 0; c < CMAX; c++) {
        if (c < C) {
            z[c] = __fadd_rn(warp_sum(z[c]), h.b2s[c]);
            if (c == 0 || z[c] > m) { m = z[c]; arg = c; }
            if (c == lane) mine = z[c];
        }
    }
}

/* Two barriers, mse: loss.cu's pointwise_loss_kernel<true> with float targets, every lane alike */
static __device__ __forceinline__ void row_mse(const pjob_dev &p, const pblk &k,
                                               const pstep &st, int b, const float (&z)[CMAX],
                                               float mine)
{
    const int lane = k.lane, C = k.C, rows = st.rows, row0 = st.row0;
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
    if (lane < C) p.dlog[(size_t)b * C + lane] = ffnn_dev_mse_grad(mine - mine_t, scale);
}

/* Two barriers, softmax cross-entropy: lane 0 writes the row's loss and correct */
static __device__ __forceinline__ void row_ce(const pjob_dev &p, const pblk &k,
                                              const pstep &st, int b, const float (&z)[CMAX],
                                              float m, int arg, float mine, int label)
{
    const int lane = k.lane, C = k.C, row0 = st.row0;
    float se = 0.0f;
#pragma unroll
    for (int c = 0; c < CMAX; c++)
        if (c < C) se += ffnn_dev_softmax_term(z[c], m);
    if (lane == 0) {
        float zl = 0.0f;
#pragma unroll
        for (int c = 0; c < CMAX; c++)
            if (c == label) zl = z[c];
        p.row_loss[row0 + b] = label >= 0 && label < C ? ffnn_dev_softmax_ce_loss(m, se, zl) : NAN;
        p.row_correct[row0 + b] =
            (uint8_t)(C == 1 ? (z[0] > 0.0f) == (label != 0) : arg == label);
    }
    if (lane < C)
        p.dlog[(size_t)b * C + lane] =
            ffnn_dev_softmax_ce_grad(mine, m, se, lane == label, st.inv_rows);
}

/* ---- B, two barriers: logits, softmax cross-entropy, dlogits: one warp per row into
 * dlog [B, C]; the next step's images into L2, by the blocks without a row here (all
 * blocks when every block has one): off the rows' critical path; -- grid barrier 2 --;
 * every block reads dlog into dls. Closes profile phase 4 between the two. ---- */
static __device__ __forceinline__ void loss_two_barriers(const pjob_dev &p, const pshm &h,
                                                         const pblk &k, const pstep &st,
                                                         ploop &lp, pprof &pr)
{
    const int g = k.g, G = k.G, rows = st.rows, s = st.s;
    if (s + 1 < p.steps && p.xbufs == 1) {
        if (rows < G && g >= rows)
            prefetch_step(p, p.first_step + s + 1, rows, G - rows);
        else if (rows >= G)
            prefetch_step(p, p.first_step + s + 1, 0, G);
    }
    for (int b = g + G * k.warp; b < rows; b += G * PWARPS) {
        const int label = p.mse                ? 0
                          : b == st.b_first ? st.label_first
                                            : p.labels[p.index[st.row0 + b]];
        float z[CMAX];
        float m, mine;
        int arg;
        row_logits(p, h, k, b, z, m, arg, mine);
        if (p.mse) {
            row_mse(p, k, st, b, z, mine);
            continue;
        }
        row_ce(p, k, st, b, z, m, arg, mine, label);
    }
    prof_mark(p, pr, 4);
    grid_barrier(p.bar, lp.target += G);
    for (int i = k.t; i < rows * k.C; i += PT) h.dls[i] = __ldcg(p.dlog + i);
    __syncthreads();
}

#endif
