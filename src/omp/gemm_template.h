/* gemm_template.h - the matmul kernels of one instruction set; gemm.c includes
 * this once per set, after defining
 *     ISA   the suffix of the names (avx512, avx2, generic)
 *     VEC   floats per vector register
 *     MR    rows of a micro-tile (scalars of A, broadcast)
 *     NV    vectors per micro-tile row (nr = NV * VEC columns of B)
 * The micro-tile's MR x NV accumulators, the NV vectors of B and one broadcast
 * must fit in the register file: avx512 8 x 2 (+3 of 32), avx2 and generic
 * 6 x 2 (+3 of 16). Semantics: omp_kernels.h. Vectors are GCC vector extensions;
 * unaligned loads and stores go through memcpy.
 */
#define OMP_CAT2(a, b) a##_##b
#define OMP_CAT(a, b) OMP_CAT2(a, b)
#define OMP_NAME(n) OMP_CAT(n, ISA)
#define NR (NV * VEC)

typedef float OMP_NAME(vf) __attribute__((vector_size(VEC * sizeof(float))));
#define vf OMP_NAME(vf)

static void OMP_NAME(tile)(const ffnn_omp_gemm *g, size_t i0, size_t j0)
{
    const size_t mvalid = g->M - i0 < MR ? g->M - i0 : MR;
    const size_t nvalid = g->N - j0 < NR ? g->N - j0 : NR;
    const int edge = g->B_edge != NULL && nvalid < NR;
    const float *B = edge ? g->B_edge : g->B + (j0 / NR) * g->b_panel_stride; /* [P][ldb] */
    const size_t ldb = edge ? NR : g->ldb;
    const size_t a_col = g->a_col, P = g->P;

    const float *a[MR]; /* row i of the tile; rows past M repeat the last one */
    vf acc[MR][NV];
    for (int i = 0; i < MR; i++) {
        const size_t row = i0 + ((size_t)i < mvalid ? (size_t)i : mvalid - 1);
        a[i] = g->A + row * g->a_row;
        for (int v = 0; v < NV; v++)
            acc[i][v] = (vf){0};
    }
    for (size_t p = 0; p < P; p++) {
        vf b[NV];
        for (int v = 0; v < NV; v++)
            memcpy(&b[v], B + p * ldb + (size_t)v * VEC, sizeof(vf));
        for (int i = 0; i < MR; i++) {
            const float s = a[i][p * a_col];
            for (int v = 0; v < NV; v++)
                acc[i][v] += s * b[v]; /* one fma per element with -ffp-contract=fast */
        }
    }

    float *C = g->C + i0 * g->ldc + j0;
    if (mvalid == MR && nvalid == NR) {
        vf bias[NV];
        for (int v = 0; v < NV; v++) {
            bias[v] = (vf){0};
            if (g->bias)
                memcpy(&bias[v], g->bias + j0 + (size_t)v * VEC, sizeof(vf));
        }
        for (int i = 0; i < MR; i++)
            for (int v = 0; v < NV; v++) {
                const vf c = g->bias ? acc[i][v] + bias[v] : acc[i][v];
                memcpy(C + (size_t)i * g->ldc + (size_t)v * VEC, &c, sizeof(vf));
            }
    } else {
        float t[MR][NR];
        memcpy(t, acc, sizeof t);
        for (size_t i = 0; i < mvalid; i++)
            for (size_t j = 0; j < nvalid; j++)
                C[i * g->ldc + j] = g->bias ? t[i][j] + g->bias[j0 + j] : t[i][j];
    }
}

static void OMP_NAME(pack_transposed)(const float *W, size_t rows, size_t k_len, size_t j0,
                                      float *dst)
{
    const size_t nvalid = rows - j0 < NR ? rows - j0 : NR;
    const float *w = W + j0 * k_len; /* [nvalid][k_len] */
    for (size_t k = 0; k < k_len; k++) {
        float *d = dst + k * NR;
        for (size_t j = 0; j < nvalid; j++)
            d[j] = w[j * k_len + k];
        for (size_t j = nvalid; j < NR; j++)
            d[j] = 0.0f;
    }
}

static void OMP_NAME(pack_edge)(const float *B, size_t P, size_t ldb, size_t cols, size_t j0,
                                float *dst)
{
    const size_t nvalid = cols - j0;
    for (size_t p = 0; p < P; p++) {
        memcpy(dst + p * NR, B + p * ldb + j0, nvalid * sizeof(float));
        for (size_t j = nvalid; j < NR; j++)
            dst[p * NR + j] = 0.0f;
    }
}

static const ffnn_omp_gemm_isa OMP_NAME(gemm_isa) = {
    .name = OMP_STR(ISA),
    .mr = MR,
    .nr = NR,
    .tile = OMP_NAME(tile),
    .pack_transposed = OMP_NAME(pack_transposed),
    .pack_edge = OMP_NAME(pack_edge),
};

#undef vf
#undef NR
#undef OMP_NAME
#undef OMP_CAT
#undef OMP_CAT2
