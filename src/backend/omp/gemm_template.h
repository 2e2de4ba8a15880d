/* gemm_template.h - the matmul kernels of one instruction set; gemm.c includes
 * this once per set, after defining
 *     ISA   the suffix of the names (avx512, avx2, baseline)
 *     VEC   floats per vector register
 *     MR    rows of a micro-tile (scalars of A, broadcast; a multiple of 3)
 *     NV    vectors per micro-tile row (nr = NV * VEC columns of B)
 * and undefines the four at its end (ready for the next set).
 * The micro-tile's MR x NV accumulators, the NV vectors of B and one broadcast
 * must fit in the register file: avx512 12 x 2 (+3 of 32), avx2 and baseline
 * 6 x 2 (+3 of 16). The loop over p is unrolled 4 times (fewer pointer updates
 * per multiply-add). Semantics: omp_kernels.h. Vectors are GCC vector extensions;
 * unaligned loads and stores go through memcpy.
 */
#define OMP_CAT2(a, b) a##_##b
#define OMP_CAT(a, b) OMP_CAT2(a, b)
#define OMP_NAME(n) OMP_CAT(n, ISA)
#define NR (NV * VEC)

typedef float OMP_NAME(vf) __attribute__((vector_size(VEC * sizeof(float))));
#define vf OMP_NAME(vf)

/* One step p of an r x nv micro-tile: acc[i][v] += A(i, p) * B(p, v*VEC ..), brow = B's
 * row p. */
#define OMP_TILE_STEP(brow, r, nv)                                               \
    do {                                                                         \
        vf b[NV];                                                                \
        for (int v = 0; v < (nv); v++)                                           \
            memcpy(&b[v], (brow) + (size_t)v * VEC, sizeof(vf));                 \
        for (int i = 0; i < (r); i++) {                                          \
            const float s = a[i][p * a_col];                                     \
            for (int v = 0; v < (nv); v++)                                       \
                acc[i][v] += s * b[v]; /* one fma with -ffp-contract=fast */     \
        }                                                                        \
    } while (0)

/* The micro-tile at (i0, j0) computed as r rows of nv vectors (compile-time constants
 * once inlined: r <= MR, nv <= NV, with mvalid <= r and nvalid <= nv * VEC), so that a
 * partial tile (the last rows of a batch, a layer narrower than nr) does no more
 * multiply-adds than the r x nv block that covers it. Every sum the same as the full
 * tile's: over p in order, one fma each. */
static inline __attribute__((always_inline)) void
OMP_NAME(tile_block)(const ffnn_omp_gemm *g, const float *B, size_t ldb, size_t i0, size_t j0,
                     size_t mvalid, size_t nvalid, const int r, const int nv)
{
    const size_t a_col = g->a_col, P = g->P;
    const float *a[MR]; /* row i of the tile; rows past M repeat the last one */
    vf acc[MR][NV];
    for (int i = 0; i < r; i++) {
        const size_t row = i0 + ((size_t)i < mvalid ? (size_t)i : mvalid - 1);
        a[i] = g->A + row * g->a_row;
        for (int v = 0; v < nv; v++)
            acc[i][v] = (vf){0};
    }
#pragma GCC unroll 4
    for (size_t p = 0; p < P; p++)
        OMP_TILE_STEP(B + p * ldb, r, nv);

    float *C = g->C + i0 * g->ldc + j0;
    if (mvalid == (size_t)r && nvalid == (size_t)nv * VEC) {
        vf bias[NV];
        for (int v = 0; v < nv; v++) {
            bias[v] = (vf){0};
            if (g->bias)
                memcpy(&bias[v], g->bias + j0 + (size_t)v * VEC, sizeof(vf));
        }
        for (int i = 0; i < r; i++)
            for (int v = 0; v < nv; v++) {
                const vf c = g->bias ? acc[i][v] + bias[v] : acc[i][v];
                memcpy(C + (size_t)i * g->ldc + (size_t)v * VEC, &c, sizeof(vf));
            }
    } else {
        for (size_t i = 0; i < mvalid; i++)
            for (int v = 0; v < nv; v++) {
                float t[VEC];
                memcpy(t, &acc[i][v], sizeof t);
                for (size_t j = (size_t)v * VEC; j < nvalid && j < (size_t)(v + 1) * VEC; j++)
                    C[i * g->ldc + j] = g->bias ? t[j - (size_t)v * VEC] + g->bias[j0 + j]
                                                : t[j - (size_t)v * VEC];
            }
    }
}

/* The micro-tile at (i0, j0): the smallest of r = MR, 2 MR / 3, MR / 3 rows that
 * covers the rows left, and one vector of columns when that covers the columns left. */
static void OMP_NAME(tile)(const ffnn_omp_gemm *g, const float *panel, size_t i0, size_t j0)
{
    const size_t mvalid = g->M - i0 < MR ? g->M - i0 : MR;
    const size_t nvalid = g->N - j0 < NR ? g->N - j0 : NR;
    const float *B = panel ? panel : g->B + j0; /* row p at B + p * ldb */
    const size_t ldb = panel ? NR : g->ldb;
    if (nvalid <= VEC) {
        if (mvalid <= MR / 3)
            OMP_NAME(tile_block)(g, B, ldb, i0, j0, mvalid, nvalid, MR / 3, 1);
        else if (mvalid <= 2 * MR / 3)
            OMP_NAME(tile_block)(g, B, ldb, i0, j0, mvalid, nvalid, 2 * MR / 3, 1);
        else
            OMP_NAME(tile_block)(g, B, ldb, i0, j0, mvalid, nvalid, MR, 1);
    } else if (mvalid <= MR / 3) {
        OMP_NAME(tile_block)(g, B, ldb, i0, j0, mvalid, nvalid, MR / 3, NV);
    } else if (mvalid <= 2 * MR / 3) {
        OMP_NAME(tile_block)(g, B, ldb, i0, j0, mvalid, nvalid, 2 * MR / 3, NV);
    } else {
        OMP_NAME(tile_block)(g, B, ldb, i0, j0, mvalid, nvalid, MR, NV);
    }
}

/* Row i0 of C over `panels` (1 .. FFNN_OMP_ROW_PANELS) consecutive packed panels
 * [P][NR] from column j0: the tile's sums for that row in the same order (the
 * same bits), several panels at once so that the fma chains overlap. */
static void OMP_NAME(row)(const ffnn_omp_gemm *g, const float *packed, size_t panels, size_t i0,
                          size_t j0)
{
    const float *a = g->A + i0 * g->a_row;
    const size_t a_col = g->a_col, P = g->P;
    const float *pp[FFNN_OMP_ROW_PANELS]; /* unused slots repeat the first panel */
    vf acc[FFNN_OMP_ROW_PANELS][NV];
    for (size_t q = 0; q < FFNN_OMP_ROW_PANELS; q++) {
        pp[q] = packed + (q < panels ? q : 0) * P * NR;
        for (int v = 0; v < NV; v++)
            acc[q][v] = (vf){0};
    }
    for (size_t p = 0; p < P; p++) {
        const float s = a[p * a_col];
        for (size_t q = 0; q < FFNN_OMP_ROW_PANELS; q++)
            for (int v = 0; v < NV; v++) {
                vf b;
                memcpy(&b, pp[q] + p * NR + (size_t)v * VEC, sizeof b);
                acc[q][v] += s * b; /* one fma with -ffp-contract=fast, as the tile's */
            }
    }
    float t[FFNN_OMP_ROW_PANELS][NR];
    memcpy(t, acc, sizeof t);
    float *C = g->C + i0 * g->ldc;
    for (size_t q = 0; q < panels; q++)
        for (size_t j = 0; j < NR && j0 + q * NR + j < g->N; j++) {
            const size_t col = j0 + q * NR + j;
            C[col] = g->bias ? t[q][j] + g->bias[col] : t[q][j];
        }
}

typedef float OMP_NAME(v4) __attribute__((vector_size(4 * sizeof(float))));
#define v4 OMP_NAME(v4)

/* Lanes i0..i3 of the 8 of (a, b): __builtin_shufflevector where the compiler has
 * it (clang; gcc 12+), else gcc's __builtin_shuffle with a mask vector. */
#ifndef OMP_SHUFFLE4
#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define OMP_SHUFFLE4(a, b, i0, i1, i2, i3) __builtin_shufflevector(a, b, i0, i1, i2, i3)
#endif
#endif
#ifndef OMP_SHUFFLE4
#define OMP_SHUFFLE4(a, b, i0, i1, i2, i3) __builtin_shuffle(a, b, (v4i){i0, i1, i2, i3})
#endif
#endif

/* W^T's columns j0 .. j0+nr into dst [k_len][nr]: 4 x 4 blocks transposed in
 * registers (two rounds of shuffles), the edges one value at a time. */
static void OMP_NAME(pack_transposed)(const float *W, size_t rows, size_t k_len, size_t j0,
                                      float *dst)
{
    const size_t nvalid = rows - j0 < NR ? rows - j0 : NR, n4 = nvalid / 4 * 4;
    const float *w = W + j0 * k_len; /* [nvalid][k_len] */
    size_t k = 0;
    for (; k + 4 <= k_len; k += 4) {
        float *d = dst + k * NR; /* rows k .. k+3 of the panel */
        for (size_t j = 0; j < n4; j += 4) {
            v4 r0, r1, r2, r3; /* W[j0+j+i][k .. k+3] */
            memcpy(&r0, w + (j + 0) * k_len + k, sizeof r0);
            memcpy(&r1, w + (j + 1) * k_len + k, sizeof r1);
            memcpy(&r2, w + (j + 2) * k_len + k, sizeof r2);
            memcpy(&r3, w + (j + 3) * k_len + k, sizeof r3);
            const v4 t0 = OMP_SHUFFLE4(r0, r1, 0, 4, 1, 5);
            const v4 t1 = OMP_SHUFFLE4(r0, r1, 2, 6, 3, 7);
            const v4 t2 = OMP_SHUFFLE4(r2, r3, 0, 4, 1, 5);
            const v4 t3 = OMP_SHUFFLE4(r2, r3, 2, 6, 3, 7);
            const v4 o0 = OMP_SHUFFLE4(t0, t2, 0, 1, 4, 5);
            const v4 o1 = OMP_SHUFFLE4(t0, t2, 2, 3, 6, 7);
            const v4 o2 = OMP_SHUFFLE4(t1, t3, 0, 1, 4, 5);
            const v4 o3 = OMP_SHUFFLE4(t1, t3, 2, 3, 6, 7);
            memcpy(d + 0 * NR + j, &o0, sizeof o0);
            memcpy(d + 1 * NR + j, &o1, sizeof o1);
            memcpy(d + 2 * NR + j, &o2, sizeof o2);
            memcpy(d + 3 * NR + j, &o3, sizeof o3);
        }
        for (size_t kk = 0; kk < 4; kk++) {
            for (size_t j = n4; j < nvalid; j++)
                d[kk * NR + j] = w[j * k_len + k + kk];
            for (size_t j = nvalid; j < NR; j++)
                d[kk * NR + j] = 0.0f;
        }
    }
    for (; k < k_len; k++) {
        float *d = dst + k * NR;
        for (size_t j = 0; j < nvalid; j++)
            d[j] = w[j * k_len + k];
        for (size_t j = nvalid; j < NR; j++)
            d[j] = 0.0f;
    }
}

/* B's columns j0 .. cols (fewer than nr) into dst [P][nr], zero beyond. */
static void OMP_NAME(pack_edge)(const float *B, size_t P, size_t ldb, size_t cols, size_t j0,
                                float *dst)
{
    const size_t nvalid = cols - j0;
    for (size_t p = 0; p < P; p++) {
        memcpy(dst + p * NR, B + p * ldb + j0, nvalid * sizeof(float));
        memset(dst + p * NR + nvalid, 0, (NR - nvalid) * sizeof(float));
    }
}

static const ffnn_omp_gemm_isa OMP_NAME(gemm_isa) = {
    .name = OMP_STR(ISA),
    .mr = MR,
    .mr_min = MR / 3 >= 4 ? MR / 3 : 2 * MR / 3,
    .nr = NR,
    .tile = OMP_NAME(tile),
    .row = OMP_NAME(row),
    .pack_transposed = OMP_NAME(pack_transposed),
    .pack_edge = OMP_NAME(pack_edge),
};

#undef OMP_TILE_STEP
#undef v4
#undef vf
#undef NR
#undef OMP_NAME
#undef OMP_CAT
#undef OMP_CAT2
#undef ISA
#undef VEC
#undef MR
#undef NV
