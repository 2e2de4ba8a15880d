// tf32x3_probe.cu - can fp32 matmuls run faster on the tensor cores at fp32's accuracy?
// The "3xTF32" split (CUTLASS's name; Ootomo & Yokota, "Recovering single precision
// accuracy from Tensor Cores while surpassing the FP32 theoretical peak performance",
// IJHPCA 2022): x = big + small with big = tf32(x), small = tf32(x - big), and
// A B ~= A_big B_big + A_big B_small + A_small B_big (the small x small term, ~2^-22
// relative, dropped), each product on the TF32 tensor cores with fp32 sums.
// For the wide net's five matmuls (784-1024x2-10 at batch 1024, the layouts of
// src/backend/cuda/cublas.cu) it times, in one process, cuBLASLt's heuristic pick for:
//   fp32     COMPUTE_32F on the fp32 operands (what --precision fp32 runs)
//   tf32     COMPUTE_32F_FAST_TF32, one product
//   3x       three TF32 launches chained through beta = 1 (small terms first)
//   3xK      one TF32 launch over K' = 3K: [A_big A_big A_small] [B_big; B_small; B_big]
//   3xKs     the same with the small terms first: [A_small A_big A_big] [B_big; B_small; B_big]
//            (what src/backend/cuda/cublas.cu runs for --precision tf32x3)
//   split    the kernel that writes big and small (3xK: the K' layout) of one operand
// and the error of each against a double sum on the host of the fp32 operands, at 512
// sampled outputs: max |d - ref| / sum_k |a_k b_k| (fp32's own is ~ K 2^-24 at worst,
// ~sqrt(K) 2^-24 typical). Outside libffnn; on a GPU:
//   nvcc -O2 -std=c++17 -gencode arch=compute_90,code=sm_90 bench/tf32x3_probe.cu \
//       -o tf32x3_probe -lcublasLt && ./tf32x3_probe
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <cmath>
#include <vector>

#include "cuda_probe.cuh"

// Column-major D [m, n] = op(A) op(B), op(A) m x k, op(B) k x n (cuBLASLt's view of the
// row-major training tensors, as lt_search.cu).
struct Case {
    const char *name;
    cublasOperation_t opa, opb;
    int m, n, k;
};

static __device__ __forceinline__ float tf32_rna(float x)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

// big[i] = tf32(x[i]), small[i] = tf32(x[i] - big[i]) (x - big is exact in fp32).
__global__ void split2(const float *__restrict__ x, float *__restrict__ big,
                       float *__restrict__ small, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n / 4;
         i += (size_t)gridDim.x * blockDim.x) {
        const float4 v = ((const float4 *)x)[i];
        float4 b, s;
        b.x = tf32_rna(v.x), s.x = tf32_rna(v.x - b.x);
        b.y = tf32_rna(v.y), s.y = tf32_rna(v.y - b.y);
        b.z = tf32_rna(v.z), s.z = tf32_rna(v.z - b.z);
        b.w = tf32_rna(v.w), s.w = tf32_rna(v.w - b.w);
        ((float4 *)big)[i] = b;
        ((float4 *)small)[i] = s;
    }
}

// The K' = 3K operand of x (column-major rows x cols, ld rows). red_is_col: the
// reduction index is the column (op N on A, op T on B): the three parts are three
// consecutive blocks; else it is the row: each column holds rows [p0; p1; p2] (ld 3 rows).
// parts: which of big (0) / small (1) each of the three is.
__global__ void split3(const float *__restrict__ x, float *__restrict__ out, int rows, int cols,
                       int red_is_col, int p0, int p1, int p2)
{
    const size_t n = (size_t)rows * cols;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const float v = x[i];
        const float part[2] = {tf32_rna(v), 0.0f};
        const float s = tf32_rna(v - part[0]);
        const float p[3] = {p0 ? s : part[0], p1 ? s : part[0], p2 ? s : part[0]};
        if (red_is_col) {
#pragma unroll
            for (int q = 0; q < 3; q++) out[q * n + i] = p[q];
        } else {
            const size_t r = i % rows, c = i / rows;
#pragma unroll
            for (int q = 0; q < 3; q++) out[c * 3 * (size_t)rows + q * rows + r] = p[q];
        }
    }
}

struct Lt {
    cublasLtHandle_t lt;
    cudaStream_t st;
    void *ws;
    size_t ws_bytes = 32u << 20;
};

struct Mm {  // one prepared matmul
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulAlgo_t algo;
};

// D [m, n] = op(A) op(B) with op(A) [m, k], op(B) [k, n], both stored packed; k: the
// reduction length (3 K for the 3K launch).
static Mm prepare(Lt &x, cublasComputeType_t comp, cublasOperation_t opa, cublasOperation_t opb,
                  int m, int n, int k)
{
    Mm r;
    CK(cublasLtMatmulDescCreate(&r.desc, comp, CUDA_R_32F));
    CK(cublasLtMatmulDescSetAttribute(r.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
    CK(cublasLtMatmulDescSetAttribute(r.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
    const int ar = opa == CUBLAS_OP_N ? m : k, ac = opa == CUBLAS_OP_N ? k : m;
    const int br = opb == CUBLAS_OP_N ? k : n, bc = opb == CUBLAS_OP_N ? n : k;
    CK(cublasLtMatrixLayoutCreate(&r.la, CUDA_R_32F, ar, ac, ar));
    CK(cublasLtMatrixLayoutCreate(&r.lb, CUDA_R_32F, br, bc, br));
    CK(cublasLtMatrixLayoutCreate(&r.ld, CUDA_R_32F, m, n, m));
    cublasLtMatmulPreference_t pref;
    CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                            &x.ws_bytes, sizeof x.ws_bytes));
    cublasLtMatmulHeuristicResult_t h;
    int found = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(x.lt, r.desc, r.la, r.lb, r.ld, r.ld, pref, 1, &h, &found));
    if (!found) {
        printf("no heuristic pick\n");
        exit(1);
    }
    r.algo = h.algo;
    cublasLtMatmulPreferenceDestroy(pref);
    return r;
}

static void run(Lt &x, const Mm &r, const float *A, const float *B, float *D, float beta)
{
    const float one = 1.0f;
    CK(cublasLtMatmul(x.lt, r.desc, &one, A, r.la, B, r.lb, &beta, D, r.ld, D, r.ld, &r.algo,
                      x.ws, x.ws_bytes, x.st));
}

// element (i, j) of op(X) where X is column-major with ld rows-of-storage
static double el(const std::vector<float> &X, cublasOperation_t op, int ld, int i, int j)
{
    return op == CUBLAS_OP_N ? X[(size_t)j * ld + i] : X[(size_t)i * ld + j];
}

int main()
{
    Lt x;
    CK(cublasLtCreate(&x.lt));
    CK(cudaStreamCreateWithFlags(&x.st, cudaStreamNonBlocking));
    CK(cudaMalloc(&x.ws, x.ws_bytes));
    const Case cases[] = {
        {"fwd0 1024x1024x784", CUBLAS_OP_T, CUBLAS_OP_N, 1024, 1024, 784},
        {"fwd1 1024x1024x1024", CUBLAS_OP_T, CUBLAS_OP_N, 1024, 1024, 1024},
        {"dx1 1024x1024x1024", CUBLAS_OP_N, CUBLAS_OP_N, 1024, 1024, 1024},
        {"dW1 1024x1024 k1024", CUBLAS_OP_N, CUBLAS_OP_T, 1024, 1024, 1024},
        {"dW0 784x1024 k1024", CUBLAS_OP_N, CUBLAS_OP_T, 784, 1024, 1024},
    };
    const size_t maxel = 1024 * 1024;
    float *A, *B, *Ab, *As, *Bb, *Bs, *A3, *B3, *A3s, *D;
    for (float **p : {&A, &B, &Ab, &As, &Bb, &Bs, &D}) CK(cudaMalloc(p, maxel * 4));
    CK(cudaMalloc(&A3, 3 * maxel * 4));
    CK(cudaMalloc(&A3s, 3 * maxel * 4));
    CK(cudaMalloc(&B3, 3 * maxel * 4));
    __nv_bfloat16 *scratch;
    CK(cudaMalloc(&scratch, maxel * 2));
    printf("case                  fp32_us  tf32_us  3x_us  3xK_us 3xKs_us split2_us split3_us | "
           "err/sum|ab|: fp32 tf32 3x 3xK 3xKs\n");
    for (const Case &c : cases) {
        const int ar = c.opa == CUBLAS_OP_N ? c.m : c.k, ac = c.opa == CUBLAS_OP_N ? c.k : c.m;
        const int br = c.opb == CUBLAS_OP_N ? c.k : c.n, bc = c.opb == CUBLAS_OP_N ? c.n : c.k;
        const size_t na = (size_t)ar * ac, nb = (size_t)br * bc, nd = (size_t)c.m * c.n;
        // activations-like operands: uniform [-1, 1) scaled, not tf32-exact
        probe_fill<<<512, 256, 0, x.st>>>(A, scratch, na, 11u);
        probe_fill<<<512, 256, 0, x.st>>>(B, scratch, nb, 23u);
        split2<<<528, 256, 0, x.st>>>(A, Ab, As, na);
        split2<<<528, 256, 0, x.st>>>(B, Bb, Bs, nb);
        // A3 = [Ab Ab As] along k, B3 = [Bb; Bs; Bb]
        split3<<<528, 256, 0, x.st>>>(A, A3, ar, ac, c.opa == CUBLAS_OP_N, 0, 0, 1);
        split3<<<528, 256, 0, x.st>>>(B, B3, br, bc, c.opb == CUBLAS_OP_T, 0, 1, 0);
        split3<<<528, 256, 0, x.st>>>(A, A3s, ar, ac, c.opa == CUBLAS_OP_N, 1, 0, 0);
        CK(cudaStreamSynchronize(x.st));
        Mm f32 = prepare(x, CUBLAS_COMPUTE_32F, c.opa, c.opb, c.m, c.n, c.k);
        Mm t32 = prepare(x, CUBLAS_COMPUTE_32F_FAST_TF32, c.opa, c.opb, c.m, c.n, c.k);
        // the K' = 3K launch: layouts with 3K along the reduction index
        Mm t3 = prepare(x, CUBLAS_COMPUTE_32F_FAST_TF32, c.opa, c.opb, c.m, c.n, 3 * c.k);
        auto three = [&] {
            run(x, t32, As, Bb, D, 0.0f);
            run(x, t32, Ab, Bs, D, 1.0f);
            run(x, t32, Ab, Bb, D, 1.0f);
        };
        const float us_f = graph_us(x.st, 5, [&] { run(x, f32, A, B, D, 0.0f); });
        const float us_t = graph_us(x.st, 5, [&] { run(x, t32, A, B, D, 0.0f); });
        const float us_3 = graph_us(x.st, 5, three);
        const float us_3k = graph_us(x.st, 5, [&] { run(x, t3, A3, B3, D, 0.0f); });
        const float us_3ks = graph_us(x.st, 5, [&] { run(x, t3, A3s, B3, D, 0.0f); });
        const float us_s2 = graph_us(x.st, 5, [&] { split2<<<528, 256, 0, x.st>>>(A, Ab, As, na); });
        const float us_s3 = graph_us(x.st, 5, [&] {
            split3<<<528, 256, 0, x.st>>>(A, A3, ar, ac, c.opa == CUBLAS_OP_N, 0, 0, 1);
        });
        // errors at sampled outputs
        std::vector<float> hA(na), hB(nb), hD(nd);
        CK(cudaMemcpy(hA.data(), A, na * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hB.data(), B, nb * 4, cudaMemcpyDeviceToHost));
        double err[5] = {0, 0, 0, 0, 0};
        for (int v = 0; v < 5; v++) {
            if (v == 0) run(x, f32, A, B, D, 0.0f);
            if (v == 1) run(x, t32, A, B, D, 0.0f);
            if (v == 2) three();
            if (v == 3) run(x, t3, A3, B3, D, 0.0f);
            if (v == 4) run(x, t3, A3s, B3, D, 0.0f);
            CK(cudaStreamSynchronize(x.st));
            CK(cudaMemcpy(hD.data(), D, nd * 4, cudaMemcpyDeviceToHost));
            for (int s = 0; s < 512; s++) {
                const int i = (int)((s * 2654435761u) % c.m), j = (int)((s * 40503u + 7) % c.n);
                double ref = 0, mag = 0;
                for (int q = 0; q < c.k; q++) {
                    const double p = el(hA, c.opa, ar, i, q) * el(hB, c.opb, br, q, j);
                    ref += p;
                    mag += fabs(p);
                }
                err[v] = std::max(err[v], fabs(hD[(size_t)j * c.m + i] - ref) / mag);
            }
        }
        printf("%-20s %8.2f %8.2f %6.2f %7.2f %7.2f %8.2f %9.2f | %.2e %.2e %.2e %.2e %.2e\n",
               c.name, us_f, us_t, us_3, us_3k, us_3ks, us_s2, us_s3, err[0], err[1], err[2],
               err[3], err[4]);
    }
    printf("(fp32 unit roundoff 2^-24 = %.2e; tf32 2^-11 = %.2e)\n", ldexp(1.0, -24),
           ldexp(1.0, -11));
    return 0;
}
