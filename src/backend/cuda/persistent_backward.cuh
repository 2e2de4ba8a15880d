/* persistent_backward.cuh - phase C of the persistent kernel (persistent.cu): backward
 * and update of what the block owns. small_sums: dz1 [rows, JB] into dZs, db1 [JB], db2
 * [C] and dW2 [C, JB] into gtmp; dw1_phase_tc / dw1_phase_fp32: dW1 [JB, in] = dz1^T x
 * over the block's rows (R > 1: written to wpart, met with the slice's other row groups
 * at gbar[hg], added in row-group order) and the SGD updates. Included by
 * persistent_phases.cuh only. */
#ifndef FFNN_CUDA_PERSISTENT_BACKWARD_CUH
#define FFNN_CUDA_PERSISTENT_BACKWARD_CUH

/* The small sums, side by side. Warp j < JB: dz1[:, j] = (dlog W2[:, j]) * act'(h[:, j])
 * with W2 before its update, lane l taking rows l, l + 32, ..., then db1[j] = warp_sum
 * of the lane's dz1 added in that order, into gtmp[C (1 + JB) + j] (R > 1: added after
 * the row groups' sums). The other warps: db2[c] (k = 0) and dW2[c, j] (k = 1 + j), sums
 * over rows, three at a time (independent chains of loads and shuffles; each sum formed
 * as warp_sum's). */
template <int JB>
static __device__ __forceinline__ void small_sums(const pjob_dev &p, const pshm &h,
                                                  const pblk &k, int rows)
{
    const int lane = k.lane, warp = k.warp, C = k.C;
    const float *dls = h.dls, *W2s = h.W2s, *Hs = h.Hs;
    float *gtmp = h.gtmp;
    static_assert(JB <= PWARPS / 2, "the small sums' warps");
    const int NW2 = C * (1 + JB);
    if (warp < JB) {
        const int j = warp;
        float s1 = 0.0f;
        for (int b = lane; b < rows; b += 32) {
            const int i = b * JB + j;
            float v = 0.0f;
            for (int c = 0; c < C; c++) v = fmaf(dls[b * C + c], W2s[c * JB + j], v);
            const float dz = p.act == (int)FFNN_ACT_RELU
                                 ? __fmul_rn(v, Hs[i] > 0.0f ? 1.0f : 0.0f)
                                 : ffnn_dev_act_backward_basic((ffnn_activation)p.act, v, Hs[i]);
            h.dZs[i] = dz;
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
                v[u] = fmaf(dls[b * C + cq[u]], kq[u] == 0 ? 1.0f : Hs[b * JB + kq[u] - 1], v[u]);
        }
        warp_sum3(v[0], v[1], v[2]);
        if (lane == 0)
#pragma unroll
            for (int u = 0; u < 3; u++)
                if (q0 + u < NW2) gtmp[q0 + u] = v[u];
    }
}

/* tf32: dW1 on the tensor cores, word groups q = warp, warp + PWARPS, ... (dw1_tc);
 * lane (gq, tq) owns units 2 tq and 2 tq + 1 of word 8 q + gq. R > 1: the sums meet as
 * in dw1_phase_fp32, in row-group order. */
template <int JB, bool U8>
static __device__ __forceinline__ void dw1_phase_tc(const pjob_dev &p, const pshm &h,
                                                    const pblk &k, int rows, ploop &lp)
{
    const int t = k.t, lane = k.lane, warp = k.warp, g = k.g, hg = k.hg, Hg = k.Hg;
    const int j0 = k.j0;
    float4 *W14 = (float4 *)h.W1s;
    const int NQ = (p.D4 + 7) / 8, gq = lane >> 2, tq = lane & 3;
    const int WP = wpart_floats(JB, p.D4, k.C), NS = k.C * (1 + JB) + JB;
    float4 *wp4 = p.R > 1 ? (float4 *)(p.wpart + (size_t)g * WP) : NULL;
    if (p.R > 1) __syncthreads(); /* gtmp's db1 */
    for (int q = warp; q < NQ; q += PWARPS) {
        float4 sq[2];
        dw1_tc<JB>((const unsigned *)h.Xs, h.dZs, p.D4, p.D4s, rows, q, sq[0], sq[1]);
        const int wi = 8 * q + gq;
#pragma unroll
        for (int u = 0; u < 2; u++) {
            const int j = 2 * tq + u;
            if (j >= JB || wi >= p.D4) continue;
            if (p.R > 1)
                wp4[j * p.D4 + wi] = sq[u];
            else if (j0 + j < p.H)
                sgd_w1<U8>(W14, p.D4s, j, wi, k.lr, sq[u]);
        }
    }
    if (p.R > 1) {
        float *wp = (float *)wp4;
        for (int q = t; q < NS; q += PT) wp[4 * JB * p.D4 + q] = h.gtmp[q];
        grid_barrier(p.gbar + hg, lp.gtarget += p.R);
        for (int q = warp; q < NQ; q += PWARPS) {
            const int wi = 8 * q + gq;
#pragma unroll
            for (int u = 0; u < 2; u++) {
                const int j = 2 * tq + u;
                if (j >= JB || wi >= p.D4 || j0 + j >= p.H) continue;
                const float4 *w4 = (const float4 *)(p.wpart + (size_t)hg * WP) + j * p.D4 + wi;
                float4 a = __ldcg(w4);
                for (int r = 1; r < p.R; r++) {
                    const float4 v = __ldcg(w4 + (size_t)r * Hg * (WP / 4));
                    a.x += v.x, a.y += v.y, a.z += v.z, a.w += v.w;
                }
                sgd_w1<U8>(W14, p.D4s, j, wi, k.lr, a);
            }
        }
        small_sums_meet<JB>(p, h.gtmp, h.W2s, h.b1s, h.b2s, j0, hg, Hg, WP, NS);
    }
}

/* fp32: dW1[J, :] = dz1[:, J]^T x, this thread's column `col` over the rows r = grp,
 * grp + NG, ... of every chunk (reloading the chunks when the rows are more than one;
 * the chunk in Xs is the last one of phase A); with NG > 1 groups the partial sums
 * meet in shared memory (NGs) in group order (deterministic) in group 0's acc */
template <int JB, bool U8>
static __device__ __forceinline__ void dw1_sums_fp32(const pjob_dev &p, const pshm &h,
                                                     const pstep &st, int col, int grp,
                                                     bool mine, float4 (&acc)[JB])
{
    const int rows = st.rows;
#pragma unroll
    for (int j = 0; j < JB; j++) acc[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int c0 = 0; c0 < rows; c0 += p.RC) {
        const int rc = min(p.RC, rows - c0);
        if (rows > p.RC) { /* the chunk in Xs is the last one of phase A */
            __syncthreads();
            load_x(p, h.Xs, h.sidx, st.row0 + c0, rc, 0);
            __syncthreads();
        }
        if (mine) {
            const int step_r = p.NG; /* 1 for wide inputs: a plain unit-stride loop */
            if (step_r == 1) {
                for (int r = 0; r < rc; r++) dw1_row<JB, U8>(h.Xs, h.dZs, p.D4s, col, c0, r, acc);
            } else {
                for (int r = grp; r < rc; r += step_r)
                    dw1_row<JB, U8>(h.Xs, h.dZs, p.D4s, col, c0, r, acc);
            }
        }
    }
    if (p.NG > 1) {
        float4 *scr = (float4 *)h.NGs; /* [NG - 1][JB][D4] */
        if (mine && grp > 0)
#pragma unroll
            for (int j = 0; j < JB; j++) scr[((grp - 1) * JB + j) * p.D4 + col] = acc[j];
        __syncthreads();
        if (mine && grp == 0)
            for (int q = 1; q < p.NG; q++)
#pragma unroll
                for (int j = 0; j < JB; j++) {
                    const float4 v = scr[((q - 1) * JB + j) * p.D4 + col];
                    acc[j].x += v.x, acc[j].y += v.y, acc[j].z += v.z, acc[j].w += v.w;
                }
    }
}

/* R > 1: the R blocks of this hidden slice: each writes its sums over its rows to
 * wpart, meets the others at their counter, then adds all R in row-group order (rg =
 * 0, 1, ...): the same bits in each. wpart[g] is written again only after the next
 * step's grid barrier, which waits for these reads. */
template <int JB>
static __device__ __forceinline__ void dw1_meet_fp32(const pjob_dev &p, const pshm &h,
                                                     const pblk &k, int col, bool first,
                                                     ploop &lp, float4 (&acc)[JB])
{
    const int hg = k.hg, Hg = k.Hg;
    const int WP = wpart_floats(JB, p.D4, k.C), NS = k.C * (1 + JB) + JB;
    float *wp = p.wpart + (size_t)k.g * WP;
    __syncthreads(); /* gtmp's db1 */
    if (first)
#pragma unroll
        for (int j = 0; j < JB; j++) ((float4 *)wp)[j * p.D4 + col] = acc[j];
    for (int q = k.t; q < NS; q += PT) wp[4 * JB * p.D4 + q] = h.gtmp[q];
    grid_barrier(p.gbar + hg, lp.gtarget += p.R);
    if (first) {
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
    small_sums_meet<JB>(p, h.gtmp, h.W2s, h.b1s, h.b2s, k.j0, hg, Hg, WP, NS);
}

/* fp32 dW1 and its update: thread t owns float4 column t % D4p of x and the rows of
 * group grp = t / D4p (dw1_sums_fp32); group 0 applies the SGD step */
template <int JB, bool U8>
static __device__ __forceinline__ void dw1_phase_fp32(const pjob_dev &p, const pshm &h,
                                                      const pblk &k, const pstep &st,
                                                      ploop &lp)
{
    const int t = k.t;
    const int D4p = (p.D4 + 31) & ~31, col = t % D4p, grp = t / D4p;
    const bool mine = col < p.D4 && grp < p.NG;
    float4 acc[JB];
    dw1_sums_fp32<JB, U8>(p, h, st, col, grp, mine, acc);
    if (p.R > 1) dw1_meet_fp32<JB>(p, h, k, col, mine && grp == 0, lp, acc);
    if (mine && grp == 0) {
#pragma unroll
        for (int j = 0; j < JB; j++)
            if (k.j0 + j < p.H) sgd_w1<U8>((float4 *)h.W1s, p.D4s, j, col, k.lr, acc[j]);
    }
}

#endif
