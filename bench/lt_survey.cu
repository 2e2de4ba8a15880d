// lt_survey.cu - every cuBLASLt heuristic candidate for the matmuls of the cublaslt
// strategy's steps (784-256-10 at batch 1024 and 256, 784-1024x2-10 at 1024; operands, transposes
// and epilogues as src/backend/cuda/cublas.cu sets them), timed: 20 launches in a CUDA
// graph, best of 5, microseconds per matmul. Prints the first heuristic pick (what
// lt_matmul uses) against the fastest candidate, and the top 4 with their split-K and
// tile; fp32's and tf32's weight gradients also with K-major copies of dz or a, and
// what such a copy costs: a [rows, cols] fp32 transposed by a 32 x 32 shared-memory
// kernel, cublasLtMatrixTransform and cublasSgeam (src/backend/cuda/cublas.cu's),
// each checked against the first. docs/RESULTS.md "The side queue", "tf32's weight
// gradients through x^T". Outside libffnn; on a GPU:
//   nvcc -O2 -gencode arch=compute_90,code=sm_90 bench/lt_survey.cu -o lt_survey \
//        -lcublasLt -lcublas
//   ./lt_survey
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdio.h>
#include <vector>
#include <algorithm>
#include <string.h>
#include "cuda_probe.cuh"
struct Case { const char *name; int prec; /*0 fp32 1 tf32 2 bf16*/
  cublasOperation_t opa; uint64_t ar, ac; cublasOperation_t opb; uint64_t br, bc; uint64_t m, n;
  cublasLtEpilogue_t epi; int d16; };
static void *buf(size_t bytes) { void *p; CK(cudaMalloc(&p, bytes)); CK(cudaMemset(p, 0, bytes)); return p; }
__global__ void transpose32(const float *__restrict__ a, float *__restrict__ t, size_t rows,
                            size_t cols) {
  __shared__ float tile[32][33];
  const size_t c0 = (size_t)blockIdx.x * 32, r0 = (size_t)blockIdx.y * 32;
  for (unsigned k = threadIdx.y; k < 32; k += 8) { const size_t r = r0 + k, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[k][threadIdx.x] = a[r * cols + c]; }
  __syncthreads();
  for (unsigned k = threadIdx.y; k < 32; k += 8) { const size_t c = c0 + k, r = r0 + threadIdx.x;
    if (r < rows && c < cols) t[c * rows + r] = tile[threadIdx.x][k]; }
}
// t [cols, rows] = a^T three ways, 20 launches in a graph, best of 7, checked against the first
static void transposes(cublasLtHandle_t lt, cudaStream_t st) {
  cublasHandle_t hb; CK(cublasCreate(&hb)); CK(cublasSetStream(hb, st));
  float *X, *T, *T0; CK(cudaMalloc(&X, 64 << 20)); CK(cudaMalloc(&T, 64 << 20)); CK(cudaMalloc(&T0, 64 << 20));
  std::vector<float> h(16 << 20); for (size_t i = 0; i < h.size(); i++) h[i] = (float)i - 1e6f;
  CK(cudaMemcpy(X, h.data(), 64 << 20, cudaMemcpyHostToDevice));
  const size_t shapes[][2] = {{1024, 1024}, {1024, 784}, {4096, 4096}, {4096, 784}};
  const char *nm[] = {"32x32 smem kernel", "cublasLtMatrixTransform", "cublasSgeam"};
  for (auto &sh : shapes) {
    const size_t rows = sh[0], cols = sh[1];
    cublasLtMatrixTransformDesc_t td; CK(cublasLtMatrixTransformDescCreate(&td, CUDA_R_32F));
    cublasOperation_t opt = CUBLAS_OP_T;
    CK(cublasLtMatrixTransformDescSetAttribute(td, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &opt, sizeof opt));
    cublasLtMatrixLayout_t la, lc;
    CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, cols, rows, cols));
    CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, rows, cols, rows));
    const float one = 1, zero = 0;
    for (int mode = 0; mode < 3; mode++) {
      auto launch = [&]() {
        if (mode == 0) transpose32<<<dim3((cols + 31) / 32, (rows + 31) / 32), dim3(32, 8), 0, st>>>(X, T, rows, cols);
        if (mode == 1) CK(cublasLtMatrixTransform(lt, td, &one, X, la, &zero, NULL, NULL, T, lc, st));
        if (mode == 2) CK(cublasSgeam(hb, CUBLAS_OP_T, CUBLAS_OP_T, rows, cols, &one, X, cols, &zero, X, cols, T, rows));
      };
      CK(cudaMemset(T, 0xff, rows * cols * 4)); launch(); CK(cudaStreamSynchronize(st));
      if (mode == 0) CK(cudaMemcpy(T0, T, rows * cols * 4, cudaMemcpyDeviceToDevice));
      std::vector<float> a(rows * cols), b(rows * cols);
      CK(cudaMemcpy(a.data(), T, a.size() * 4, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(b.data(), T0, b.size() * 4, cudaMemcpyDeviceToHost));
      const bool same = memcmp(a.data(), b.data(), a.size() * 4) == 0 && a[1] == h[cols];
      const float best = graph_us(st, 7, launch);
      printf("transpose %zux%zu %-24s %7.2f us %5.2f TB/s %s\n", rows, cols, nm[mode], best,
             2.0 * rows * cols * 4 / best / 1e6, same ? "exact" : "WRONG");
    }
  }
  cudaFree(X); cudaFree(T); cudaFree(T0); cublasDestroy(hb);
}
int main() {
  cublasLtHandle_t lt; CK(cublasLtCreate(&lt));
  size_t ws_bytes = 32u << 20; void *ws = buf(ws_bytes);
  cudaStream_t st; CK(cudaStreamCreate(&st));
  std::vector<Case> cases;
  const char *pn[3] = {"fp32", "tf32", "bf16"};
  for (int p = 0; p < 3; p++) {
    // narrow 784-256-10 b1024: fwd layer0, dW layer0
    cases.push_back({"narrow fwd0 256x1024x784", p, CUBLAS_OP_T, 784, 256, CUBLAS_OP_N, 784, 1024, 256, 1024, CUBLASLT_EPILOGUE_RELU_BIAS, p == 2});
    cases.push_back({"narrow dW0 784x256 k1024", p, CUBLAS_OP_N, 784, 1024, CUBLAS_OP_T, 256, 1024, 784, 256, CUBLASLT_EPILOGUE_DEFAULT, 0});
    // narrow 784-256-10 b256: fwd layer0, dW layer0
    cases.push_back({"b256 fwd0 256x256x784", p, CUBLAS_OP_T, 784, 256, CUBLAS_OP_N, 784, 256, 256, 256, CUBLASLT_EPILOGUE_RELU_BIAS, p == 2});
    cases.push_back({"b256 dW0 784x256 k256", p, CUBLAS_OP_N, 784, 256, CUBLAS_OP_T, 256, 256, 784, 256, CUBLASLT_EPILOGUE_DEFAULT, 0});
    // wide 784-1024-1024-10 b1024
    cases.push_back({"wide fwd0 1024x1024x784", p, CUBLAS_OP_T, 784, 1024, CUBLAS_OP_N, 784, 1024, 1024, 1024, CUBLASLT_EPILOGUE_RELU_BIAS, p == 2});
    cases.push_back({"wide fwd1 1024x1024x1024", p, CUBLAS_OP_T, 1024, 1024, CUBLAS_OP_N, 1024, 1024, 1024, 1024, CUBLASLT_EPILOGUE_RELU_BIAS, p == 2});
    cases.push_back({"wide dx1 1024x1024x1024", p, CUBLAS_OP_N, 1024, 1024, CUBLAS_OP_N, 1024, 1024, 1024, 1024, CUBLASLT_EPILOGUE_DEFAULT, p == 2});
    cases.push_back({"wide dW1 1024x1024 k1024", p, CUBLAS_OP_N, 1024, 1024, CUBLAS_OP_T, 1024, 1024, 1024, 1024, CUBLASLT_EPILOGUE_DEFAULT, 0});
    cases.push_back({"wide dW0 784x1024 k1024", p, CUBLAS_OP_N, 784, 1024, CUBLAS_OP_T, 1024, 1024, 784, 1024, CUBLASLT_EPILOGUE_DEFAULT, 0});
  }
  // fp32 and tf32 weight gradients with K-major copies (dW^T = a^T dz, column-major;
  // K = batch): "dzK" = dz stored feature-major [out][batch], "aK" = a feature-major
  // [in][batch]; v 0 = as the strategy stores them (both MN-major)
  struct Dw { const char *name; uint64_t in, out, b; };
  const Dw dws[] = {{"wide dW1", 1024, 1024, 1024}, {"wide dW0", 784, 1024, 1024},
                    {"narrow dW0", 784, 256, 1024}, {"b256 dW0", 784, 256, 256},
                    {"512 dW1", 512, 512, 1024}, {"4096 dW1", 4096, 4096, 4096},
                    {"784->128 b1024", 784, 128, 1024}, {"784->64 b1024", 784, 64, 1024},
                    {"1024->256 b1024", 1024, 256, 1024}, {"784->256 b2048", 784, 256, 2048},
                    {"784->512 b1024", 784, 512, 1024}, {"256->256 b1024", 256, 256, 1024},
                    {"784->256 b512", 784, 256, 512}};
  static char names[128][48]; int nn = 0;
  for (int p = 0; p < 2; p++)
  for (size_t wi = 0; wi < sizeof dws / sizeof dws[0]; wi++) {
    const Dw &w = dws[wi];
    // v 0 of the first four shapes in tf32: in the cases above already
    for (int v = p == 0 || wi >= 4 ? 0 : 1; v < 4; v++) {
      const bool dzk = v & 1, ak = v & 2;
      snprintf(names[nn], sizeof names[nn], "%s %s", w.name,
               v == 0 ? "MN" : v == 1 ? "dzK" : v == 2 ? "aK" : "dzK+aK");
      cases.push_back({names[nn++], p, ak ? CUBLAS_OP_T : CUBLAS_OP_N, ak ? w.b : w.in, ak ? w.in : w.b,
                       dzk ? CUBLAS_OP_N : CUBLAS_OP_T, dzk ? w.b : w.out, dzk ? w.out : w.b, w.in, w.out,
                       CUBLASLT_EPILOGUE_DEFAULT, 0});
    }
  }
  void *A = buf(64 << 20), *B = buf(64 << 20), *D = buf(64 << 20), *bias = buf(1 << 20);
  for (auto &c : cases) {
    const int bf = c.prec == 2;
    cublasComputeType_t comp = c.prec == 1 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    cudaDataType_t ab = bf ? CUDA_R_16BF : CUDA_R_32F, dt = c.d16 ? CUDA_R_16BF : CUDA_R_32F;
    cublasLtMatmulDesc_t desc; CK(cublasLtMatmulDescCreate(&desc, comp, CUDA_R_32F));
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &c.opa, sizeof c.opa));
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &c.opb, sizeof c.opb));
    CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &c.epi, sizeof c.epi));
    if (c.epi == CUBLASLT_EPILOGUE_RELU_BIAS) {
      CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
      cudaDataType_t bt = CUDA_R_32F;
      CK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt));
    }
    cublasLtMatrixLayout_t la, lb, ld;
    CK(cublasLtMatrixLayoutCreate(&la, ab, c.ar, c.ac, c.ar));
    CK(cublasLtMatrixLayoutCreate(&lb, ab, c.br, c.bc, c.br));
    CK(cublasLtMatrixLayoutCreate(&ld, dt, c.m, c.n, c.m));
    cublasLtMatmulPreference_t pref; CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes));
    cublasLtMatmulHeuristicResult_t h[32]; int found = 0;
    if (cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 32, h, &found) !=
            CUBLAS_STATUS_SUCCESS || found == 0) {
      printf("%s %-28s no algorithm for these types and epilogue\n", pn[c.prec], c.name);
      continue;
    }
    const float one = 1.f, zero = 0.f;
    std::vector<std::pair<float,int>> res;
    for (int i = 0; i < found; i++) {
      if (h[i].state != CUBLAS_STATUS_SUCCESS) continue;
      bool ok = true;
      for (int w = 0; w < 5 && ok; w++)
        ok = cublasLtMatmul(lt, desc, &one, A, la, B, lb, &zero, D, ld, D, ld, &h[i].algo, ws, ws_bytes, st) == CUBLAS_STATUS_SUCCESS;
      if (!ok) { printf("  algo %d failed\n", i); continue; }
      // replay via graph of 20 to avoid launch overhead
      const float best = graph_us(st, 5, [&]() {
        cublasLtMatmul(lt, desc, &one, A, la, B, lb, &zero, D, ld, D, ld, &h[i].algo, ws, ws_bytes, st);
      });
      res.push_back({best, i});
    }
    std::sort(res.begin(), res.end());
    float t0 = -1; for (auto &r : res) if (r.second == 0) t0 = r.first;
    printf("%s %-28s found %2d  heuristic#0 %7.2f us  best #%d %7.2f us (%.0f%%)\n", pn[c.prec], c.name, found, t0,
           res.empty() ? -1 : res[0].second, res.empty() ? 0 : res[0].first, res.empty() ? 0 : 100 * res[0].first / t0);
    for (size_t k = 0; k < res.size() && k < 4; k++) {
      int i = res[k].second; int splitk = 0, red = 0, tile = 0, stages = 0; size_t sz;
      cublasLtMatmulAlgoConfigGetAttribute(&h[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&h[i].algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, sizeof red, &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&h[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&h[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &sz);
      printf("      #%2d %7.2f us splitk %d red %d tile %d stages %d ws %zu\n", i, res[k].first, splitk, red, tile, stages, h[i].workspaceSize);
    }
  }
  transposes(lt, st);
  return 0;
}
