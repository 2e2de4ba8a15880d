// lt_survey.cu - every cuBLASLt heuristic candidate for the matmuls of the cublaslt
// strategy's steps (784-256-10 at batch 1024 and 256, 784-1024x2-10 at 1024; operands, transposes
// and epilogues as src/backend/cuda/cublas.cu sets them), timed: 20 launches in a CUDA
// graph, best of 5, microseconds per matmul. Prints the first heuristic pick (what
// lt_matmul uses) against the fastest candidate, and the top 4 with their split-K and
// tile. docs/RESULTS.md "The side queue". Outside libffnn; on a GPU:
//   nvcc -O2 -gencode arch=compute_90,code=sm_90 bench/lt_survey.cu -o lt_survey -lcublasLt
//   ./lt_survey
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdio.h>
#include <vector>
#include <algorithm>
#define CK(x) do { auto e_ = (x); if ((int)e_ != 0) { printf("err %d at %s:%d\n", (int)e_, __FILE__, __LINE__); exit(1);} } while (0)
struct Case { const char *name; int prec; /*0 fp32 1 tf32 2 bf16*/
  cublasOperation_t opa; uint64_t ar, ac; cublasOperation_t opb; uint64_t br, bc; uint64_t m, n;
  cublasLtEpilogue_t epi; int d16; };
static void *buf(size_t bytes) { void *p; CK(cudaMalloc(&p, bytes)); CK(cudaMemset(p, 0, bytes)); return p; }
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
  void *A = buf(64 << 20), *B = buf(64 << 20), *D = buf(64 << 20), *bias = buf(1 << 20);
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
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
      cudaGraph_t g; cudaGraphExec_t ge;
      CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
      for (int r = 0; r < 20; r++) cublasLtMatmul(lt, desc, &one, A, la, B, lb, &zero, D, ld, D, ld, &h[i].algo, ws, ws_bytes, st);
      CK(cudaStreamEndCapture(st, &g)); CK(cudaGraphInstantiate(&ge, g, 0));
      CK(cudaGraphLaunch(ge, st));
      float best = 1e9;
      for (int rep = 0; rep < 5; rep++) {
        CK(cudaEventRecord(e0, st)); CK(cudaGraphLaunch(ge, st)); CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); best = std::min(best, ms * 1000 / 20);
      }
      cudaGraphExecDestroy(ge); cudaGraphDestroy(g);
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
  return 0;
}
