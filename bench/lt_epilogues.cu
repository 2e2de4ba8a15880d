/*
 * lt_epilogues.cu - probe: cuBLASLt's ReLU-mask epilogues (RELU_AUX_BIAS in the
 * forward, DRELU / DRELU_BGRAD in the dx matmul) and BGRADB against the plain
 * matmul, on the wide net's shapes (1024 x 1024 x 1024, the 784-wide first layer)
 * and a 128-wide one at batch 1024, in bf16, tf32 and fp32. Per case: the status
 * (0, else the cuBLAS status; -1: no algorithm), the microseconds per call (50 calls
 * in one CUDA graph, best of 5 replays) and the kernels one call launches (nodes of
 * a captured call); DRELU checked against the plain dx masked by the forward's
 * output, DRELU_BGRAD's db against the row sums of its output. Not part of the
 * build (docs/RESULTS.md "f' with the bias gradient" ran it):
 *   nvcc -O2 -gencode arch=compute_90,code=sm_90 -o lt_epilogues bench/lt_epilogues.cu \
 *        -lcublasLt && ./lt_epilogues
 */

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <vector>
#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            printf("CUDA %s line %d\n", cudaGetErrorString(e_), __LINE__);                         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
static cublasLtHandle_t lt;
static void *ws;
static size_t wsz = 32u << 20;
struct Op {
    const void *p;
    cudaDataType_t t;
    cublasOperation_t op;
    uint64_t r, c;
};
// returns status; sets nk = kernel nodes in a captured call
static int mm(cudaStream_t s, Op a, Op b, void *d, cudaDataType_t dt, uint64_t m, uint64_t n,
              cublasLtEpilogue_t epi, void *bias, cudaDataType_t bt, void *aux, int64_t aux_ld,
              cublasComputeType_t ct, int reps, float *ms, int *nk) {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulDescCreate(&desc, ct, CUDA_R_32F);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &a.op, sizeof a.op);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &b.op, sizeof b.op);
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    if (bias) {
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt);
    }
    if (aux) {
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux,
                                       sizeof aux);
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld,
                                       sizeof aux_ld);
    }
    cublasLtMatrixLayoutCreate(&la, a.t, a.r, a.c, a.r);
    cublasLtMatrixLayoutCreate(&lb, b.t, b.r, b.c, b.r);
    cublasLtMatrixLayoutCreate(&ld, dt, m, n, m);
    cublasLtMatmulPreferenceCreate(&pref);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsz,
                                         sizeof wsz);
    cublasLtMatmulHeuristicResult_t h;
    int found = 0;
    cublasStatus_t hs =
        cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 1, &h, &found);
    if (hs != CUBLAS_STATUS_SUCCESS || !found) {
        return hs == 0 ? -1 : (int)hs;
    }
    const float one = 1, zero = 0;
    // count kernels: capture one call
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    cublasStatus_t st =
        cublasLtMatmul(lt, desc, &one, a.p, la, b.p, lb, &zero, d, ld, d, ld, &h.algo, ws, wsz, s);
    CK(cudaStreamEndCapture(s, &g));
    if (st)
        return 1000 + st;
    size_t nn = 0;
    cudaGraphGetNodes(g, NULL, &nn);
    *nk = (int)nn;
    cudaGraphDestroy(g);
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < reps; i++)
        cublasLtMatmul(lt, desc, &one, a.p, la, b.p, lb, &zero, d, ld, d, ld, &h.algo, ws, wsz, s);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    float best = 1e9;
    for (int k = 0; k < 5; k++) {
        cudaEventRecord(e0, s);
        CK(cudaGraphLaunch(ge, s));
        cudaEventRecord(e1, s);
        CK(cudaEventSynchronize(e1));
        float t;
        cudaEventElapsedTime(&t, e0, e1);
        if (t < best)
            best = t;
    }
    *ms = best * 1000.0f / reps; // us per call
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatmulDescDestroy(desc);
    return 0;
}
static void *dev_rand(size_t n, cudaDataType_t t, float scale) {
    std::vector<float> h(n);
    for (auto &v : h)
        v = scale * ((rand() / (float)RAND_MAX) * 2 - 1);
    void *p;
    size_t es = t == CUDA_R_16BF ? 2 : 4;
    CK(cudaMalloc(&p, n * es));
    if (t == CUDA_R_16BF) {
        std::vector<__nv_bfloat16> b(n);
        for (size_t i = 0; i < n; i++)
            b[i] = __float2bfloat16(h[i]);
        CK(cudaMemcpy(p, b.data(), n * 2, cudaMemcpyHostToDevice));
    } else
        CK(cudaMemcpy(p, h.data(), n * 4, cudaMemcpyHostToDevice));
    return p;
}
static float tof(const void *p, size_t i, cudaDataType_t t) {
    return t == CUDA_R_16BF ? __bfloat162float(((const __nv_bfloat16 *)p)[i])
                            : ((const float *)p)[i];
}
int main() {
    cublasLtCreate(&lt);
    CK(cudaMalloc(&ws, wsz));
    cudaStream_t s;
    cudaStreamCreate(&s);
    const char *names[3] = {"bf16", "tf32", "fp32"};
    for (int pi = 0; pi < 3; pi++) {
        cudaDataType_t t = pi == 0 ? CUDA_R_16BF : CUDA_R_32F;
        cublasComputeType_t ct = pi == 1 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
        const uint64_t IN = 1024, OUT = 1024, B = 1024;
        void *W = dev_rand(IN * OUT, t, 0.05f), *x = dev_rand(IN * B, t, 1.0f),
             *dz = dev_rand(OUT * B, t, 0.01f);
        void *bias = dev_rand(OUT, CUDA_R_32F, 0.1f);
        void *A, *D0, *D1, *db;
        uint8_t *aux;
        size_t es = pi == 0 ? 2 : 4;
        CK(cudaMalloc(&A, OUT * B * es));
        CK(cudaMalloc(&D0, IN * B * es));
        CK(cudaMalloc(&D1, IN * B * es));
        CK(cudaMalloc(&db, IN * 4));
        CK(cudaMalloc(&aux, IN * B / 8));
        float us;
        int nk, rc;
        Op wT = {W, t, CUBLAS_OP_T, IN, OUT}, xb = {x, t, CUBLAS_OP_N, IN, B};
        rc = mm(s, wT, xb, A, t, OUT, B, CUBLASLT_EPILOGUE_RELU_BIAS, bias, CUDA_R_32F, NULL, 0, ct,
                50, &us, &nk);
        printf("%s fwd RELU_BIAS          rc=%d %.2f us kernels=%d\n", names[pi], rc, us, nk);
        rc = mm(s, wT, xb, A, t, OUT, B, CUBLASLT_EPILOGUE_RELU_AUX_BIAS, bias, CUDA_R_32F, aux,
                OUT, ct, 50, &us, &nk);
        printf("%s fwd RELU_AUX_BIAS      rc=%d %.2f us kernels=%d\n", names[pi], rc, us, nk);
        // A is now relu output of layer with OUT = the next layer's input width IN (same 1024)
        Op wN = {W, t, CUBLAS_OP_N, IN, OUT}, zb = {dz, t, CUBLAS_OP_N, OUT, B};
        rc = mm(s, wN, zb, D0, t, IN, B, CUBLASLT_EPILOGUE_DEFAULT, NULL, CUDA_R_32F, NULL, 0, ct,
                50, &us, &nk);
        printf("%s dx DEFAULT             rc=%d %.2f us kernels=%d\n", names[pi], rc, us, nk);
        rc = mm(s, wN, zb, D1, t, IN, B, CUBLASLT_EPILOGUE_DRELU, NULL, CUDA_R_32F, aux, IN, ct, 50,
                &us, &nk);
        printf("%s dx DRELU               rc=%d %.2f us kernels=%d\n", names[pi], rc, us, nk);
        if (rc == 0) { // check D1 == (A > 0 ? D0 : 0)
            CK(cudaStreamSynchronize(s));
            std::vector<char> hA(OUT * B * es), h0(IN * B * es), h1(IN * B * es);
            cudaMemcpy(hA.data(), A, hA.size(), cudaMemcpyDeviceToHost);
            cudaMemcpy(h0.data(), D0, h0.size(), cudaMemcpyDeviceToHost);
            cudaMemcpy(h1.data(), D1, h1.size(), cudaMemcpyDeviceToHost);
            size_t bad = 0, exact = 0, pos = 0;
            double maxd = 0;
            for (size_t i = 0; i < IN * B; i++) {
                float a = tof(hA.data(), i, t), d0 = tof(h0.data(), i, t),
                      d1 = tof(h1.data(), i, t);
                float want = a > 0 ? d0 : 0.0f;
                pos += a > 0;
                if (want == d1)
                    exact++;
                else {
                    double df = fabs(want - d1);
                    if (df > maxd)
                        maxd = df;
                    if (df > 1e-2 * fabs(want) + 1e-6)
                        bad++;
                }
            }
            printf(
                "   DRELU check: %zu of %zu exact, %zu beyond tol, max diff %.3g, frac a>0 %.3f\n",
                exact, (size_t)(IN * B), bad, maxd, pos / (double)(IN * B));
        }
        rc = mm(s, wN, zb, D1, t, IN, B, CUBLASLT_EPILOGUE_DRELU_BGRAD, db, CUDA_R_32F, aux, IN, ct,
                50, &us, &nk);
        printf("%s dx DRELU_BGRAD db fp32 rc=%d %.2f us kernels=%d\n", names[pi], rc, us, nk);
        if (rc != 0 && pi == 0) {
            rc = mm(s, wN, zb, D1, t, IN, B, CUBLASLT_EPILOGUE_DRELU_BGRAD, db, CUDA_R_16BF, aux,
                    IN, ct, 50, &us, &nk);
            printf("%s dx DRELU_BGRAD db bf16 rc=%d %.2f us kernels=%d\n", names[pi], rc, us, nk);
        }
        if (rc == 0 && pi != 0 || rc == 0) { // check db = row sums of D1 over n
            CK(cudaStreamSynchronize(s));
            std::vector<char> h1(IN * B * es);
            std::vector<float> hdb(IN);
            cudaMemcpy(h1.data(), D1, h1.size(), cudaMemcpyDeviceToHost);
            cudaMemcpy(hdb.data(), db, IN * 4, cudaMemcpyDeviceToHost);
            double maxr = 0;
            for (size_t r = 0; r < IN; r++) {
                double sum = 0, asum = 0;
                for (size_t c = 0; c < B; c++) {
                    float v = tof(h1.data(), c * IN + r, t);
                    sum += v;
                    asum += fabs(v);
                }
                double e = fabs(sum - hdb[r]) / (asum + 1e-30);
                if (e > maxr)
                    maxr = e;
            }
            printf("   DRELU_BGRAD db check (fp32 db read): max |err|/sum|v| %.3g\n", maxr);
        }
        Op xa = {x, t, CUBLAS_OP_N, IN, B}, zT = {dz, t, CUBLAS_OP_T, OUT, B};
        void *dW;
        CK(cudaMalloc(&dW, IN * OUT * 4));
        rc = mm(s, xa, zT, dW, CUDA_R_32F, IN, OUT, CUBLASLT_EPILOGUE_DEFAULT, NULL, CUDA_R_32F,
                NULL, 0, ct, 50, &us, &nk);
        printf("%s dW DEFAULT             rc=%d %.2f us kernels=%d\n", names[pi], rc, us, nk);
        rc = mm(s, xa, zT, dW, CUDA_R_32F, IN, OUT, CUBLASLT_EPILOGUE_BGRADB, db, CUDA_R_32F, NULL,
                0, ct, 50, &us, &nk);
        printf("%s dW BGRADB              rc=%d %.2f us kernels=%d\n", names[pi], rc, us, nk);
        // first layer shapes: in 784
        Op wT1 = {W, t, CUBLAS_OP_T, 784, OUT}, xb1 = {x, t, CUBLAS_OP_N, 784, B};
        rc = mm(s, wT1, xb1, A, t, OUT, B, CUBLASLT_EPILOGUE_RELU_BIAS, bias, CUDA_R_32F, NULL, 0,
                ct, 50, &us, &nk);
        printf("%s fwd1 RELU_BIAS         rc=%d %.2f us kernels=%d\n", names[pi], rc, us, nk);
        rc = mm(s, wT1, xb1, A, t, OUT, B, CUBLASLT_EPILOGUE_RELU_AUX_BIAS, bias, CUDA_R_32F, aux,
                OUT, ct, 50, &us, &nk);
        printf("%s fwd1 RELU_AUX_BIAS     rc=%d %.2f us kernels=%d\n", names[pi], rc, us, nk);
        // narrow: 128 wide, batch 1024
        Op wTn = {W, t, CUBLAS_OP_T, 128, 128}, xbn = {x, t, CUBLAS_OP_N, 128, B};
        rc = mm(s, wTn, xbn, A, t, 128, B, CUBLASLT_EPILOGUE_RELU_BIAS, bias, CUDA_R_32F, NULL, 0,
                ct, 50, &us, &nk);
        printf("%s n128 fwd RELU_BIAS     rc=%d %.2f us kernels=%d\n", names[pi], rc, us, nk);
        rc = mm(s, wTn, xbn, A, t, 128, B, CUBLASLT_EPILOGUE_RELU_AUX_BIAS, bias, CUDA_R_32F, aux,
                128, ct, 50, &us, &nk);
        printf("%s n128 fwd RELU_AUX_BIAS rc=%d %.2f us kernels=%d\n", names[pi], rc, us, nk);
        Op wNn = {W, t, CUBLAS_OP_N, 128, 128}, zbn = {dz, t, CUBLAS_OP_N, 128, B};
        rc = mm(s, wNn, zbn, D0, t, 128, B, CUBLASLT_EPILOGUE_DEFAULT, NULL, CUDA_R_32F, NULL, 0,
                ct, 50, &us, &nk);
        printf("%s n128 dx DEFAULT        rc=%d %.2f us kernels=%d\n", names[pi], rc, us, nk);
        rc = mm(s, wNn, zbn, D1, t, 128, B, CUBLASLT_EPILOGUE_DRELU, NULL, CUDA_R_32F, aux, 128, ct,
                50, &us, &nk);
        printf("%s n128 dx DRELU          rc=%d %.2f us kernels=%d\n", names[pi], rc, us, nk);
        rc = mm(s, wNn, zbn, D1, t, 128, B, CUBLASLT_EPILOGUE_DRELU_BGRAD, db, CUDA_R_32F, aux, 128,
                ct, 50, &us, &nk);
        printf("%s n128 dx DRELU_BGRAD    rc=%d %.2f us kernels=%d\n", names[pi], rc, us, nk);
        Op xan = {x, t, CUBLAS_OP_N, 128, B}, zTn = {dz, t, CUBLAS_OP_T, 128, B};
        rc = mm(s, xan, zTn, dW, CUDA_R_32F, 128, 128, CUBLASLT_EPILOGUE_DEFAULT, NULL, CUDA_R_32F,
                NULL, 0, ct, 50, &us, &nk);
        printf("%s n128 dW DEFAULT        rc=%d %.2f us kernels=%d\n", names[pi], rc, us, nk);
        rc = mm(s, xan, zTn, dW, CUDA_R_32F, 128, 128, CUBLASLT_EPILOGUE_BGRADB, db, CUDA_R_32F,
                NULL, 0, ct, 50, &us, &nk);
        printf("%s n128 dW BGRADB         rc=%d %.2f us kernels=%d\n", names[pi], rc, us, nk);
        cudaFree(W);
        cudaFree(x);
        cudaFree(dz);
        cudaFree(bias);
        cudaFree(A);
        cudaFree(D0);
        cudaFree(D1);
        cudaFree(db);
        cudaFree(aux);
        cudaFree(dW);
    }
    return 0;
}
