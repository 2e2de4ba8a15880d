// lt_search.cu - beyond cuBLASLt's heuristic: every algorithm id cuBLASLt lists for the
// types of a matmul (cublasLtMatmulAlgoGetIds), each with every tile and stage count it
// declares (CUBLASLT_ALGO_CAP_TILE_IDS, _STAGES_IDS), six cluster shapes and its first four
// custom options, then split-K, CTA swizzling and more custom options and cluster shapes
// on the eight fastest of those and on the heuristic's pick, each configuration checked
// by cublasLtMatmulAlgoCheck, run, and timed. The matmuls are the wide net's
// (784-1024x2-10 at batch 1024) as src/backend/cuda/cublas.cu queues them (operands,
// transposes, epilogue, alpha/beta of plain SGD in the weight-gradient matmul), in fp32,
// tf32 and bf16 (and tf32x3's K' = 3K shapes, "x3"). Prints the heuristic's first pick (what lt_matmul uses) and the ten
// fastest configurations, re-timed (20 launches in a CUDA graph, best of 5) and checked
// against the pick's output (max |d - d_pick| / max |d_pick|, alpha 1 beta 0).
// docs/RESULTS.md "cuBLASLt beyond its heuristic". Outside libffnn; on a GPU:
//   nvcc -O2 -gencode arch=compute_90,code=sm_90 bench/lt_search.cu -o lt_search -lcublasLt
//   ./lt_search [case-substring]
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <cmath>
#include <vector>

#include "cuda_probe.cuh"

// One matmul: column-major D [m, n] = alpha op(A) op(B) + beta D.
struct Case {
  const char *name;
  int prec;  // 0 fp32, 1 tf32, 2 bf16 (bf16 operands)
  cublasOperation_t opa;
  uint64_t ar, ac;
  cublasOperation_t opb;
  uint64_t br, bc;
  uint64_t m, n;
  cublasLtEpilogue_t epi;
  int d16;   // D in bf16
  int sgd;   // alpha -lr, beta 1 (the update in the epilogue)
};
struct Config {
  int id;
  uint32_t tile, stages, swizzle, custom, red;
  int splitk;
  uint16_t cluster;
  float us;
  float waves;
  size_t ws;
};

static void *buf(size_t bytes) {
  void *p;
  CK(cudaMalloc(&p, bytes));
  CK(cudaMemset(p, 0, bytes));
  return p;
}
struct Ctx {
  cublasLtHandle_t lt;
  cudaStream_t st;
  void *ws;
  size_t ws_bytes;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, ld;
  const void *A, *B;
  void *D;
  float alpha, beta;
};

static bool set_cfg(cublasLtMatmulAlgo_t *a, const Config &c) {
  bool ok = true;
  ok &= cublasLtMatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_TILE_ID, &c.tile,
                                             sizeof c.tile) == 0;
  ok &= cublasLtMatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_STAGES_ID, &c.stages,
                                             sizeof c.stages) == 0;
  ok &= cublasLtMatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &c.splitk,
                                             sizeof c.splitk) == 0;
  ok &= cublasLtMatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &c.red,
                                             sizeof c.red) == 0;
  ok &= cublasLtMatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &c.swizzle,
                                             sizeof c.swizzle) == 0;
  ok &= cublasLtMatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &c.custom,
                                             sizeof c.custom) == 0;
  ok &= cublasLtMatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID,
                                             &c.cluster, sizeof c.cluster) == 0;
  return ok;
}

// Time one configuration (0 when cuBLASLt refuses it): check, 3 warm-up runs, then the
// mean of 10 launches between events.
static float try_cfg(Ctx &x, const cublasLtMatmulAlgo_t &base, Config &c,
                     cublasLtMatmulAlgo_t *out) {
  cublasLtMatmulAlgo_t a = base;
  if (!set_cfg(&a, c)) return 0;
  cublasLtMatmulHeuristicResult_t r;
  if (cublasLtMatmulAlgoCheck(x.lt, x.desc, x.la, x.lb, x.ld, x.ld, &a, &r) != 0) return 0;
  if (r.workspaceSize > x.ws_bytes) return 0;
  for (int w = 0; w < 3; w++)
    if (cublasLtMatmul(x.lt, x.desc, &x.alpha, x.A, x.la, x.B, x.lb, &x.beta, x.D, x.ld, x.D,
                       x.ld, &a, x.ws, x.ws_bytes, x.st) != 0) {
      cudaGetLastError();
      return 0;
    }
  if (cudaStreamSynchronize(x.st) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaEventRecord(e0, x.st));
  for (int i = 0; i < 10; i++)
    cublasLtMatmul(x.lt, x.desc, &x.alpha, x.A, x.la, x.B, x.lb, &x.beta, x.D, x.ld, x.D, x.ld,
                   &a, x.ws, x.ws_bytes, x.st);
  CK(cudaEventRecord(e1, x.st));
  CK(cudaEventSynchronize(e1));
  float ms;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  c.us = ms * 100;
  c.waves = r.wavesCount;
  c.ws = r.workspaceSize;
  if (out) *out = a;
  return c.us;
}

template <typename T>
static std::vector<T> cap_list(const cublasLtMatmulAlgo_t &a,
                               cublasLtMatmulAlgoCapAttributes_t at) {
  size_t sz = 0;
  std::vector<T> v;
  if (cublasLtMatmulAlgoCapGetAttribute(&a, at, NULL, 0, &sz) != 0 || sz == 0) return v;
  v.resize(sz / sizeof(T));
  if (cublasLtMatmulAlgoCapGetAttribute(&a, at, v.data(), sz, &sz) != 0) v.clear();
  return v;
}
template <typename T>
static T cap_one(const cublasLtMatmulAlgo_t &a, cublasLtMatmulAlgoCapAttributes_t at) {
  T v = 0;
  size_t sz;
  if (cublasLtMatmulAlgoCapGetAttribute(&a, at, &v, sizeof v, &sz) != 0) return 0;
  return v;
}
static Config cfg_of(const cublasLtMatmulAlgo_t &a) {
  Config c = {};
  size_t sz;
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_ID, &c.id, sizeof c.id, &sz);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_TILE_ID, &c.tile, sizeof c.tile,
                                       &sz);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_STAGES_ID, &c.stages,
                                       sizeof c.stages, &sz);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &c.splitk,
                                       sizeof c.splitk, &sz);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &c.red,
                                       sizeof c.red, &sz);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &c.swizzle,
                                       sizeof c.swizzle, &sz);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &c.custom,
                                       sizeof c.custom, &sz);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &c.cluster,
                                       sizeof c.cluster, &sz);
  return c;
}
static void print_cfg(const char *tag, const Config &c) {
  printf("    %-8s %8.2f us  id %3d tile %2u stages %2u splitk %d red %u swz %u custom %2u "
         "cluster %2u waves %.2f ws %zu\n",
         tag, c.us, c.id, c.tile, c.stages, c.splitk, c.red, c.swizzle, c.custom,
         (unsigned)c.cluster, c.waves, c.ws);
}

int main(int argc, char **argv) {
  const char *only = argc > 1 ? argv[1] : NULL;
  Ctx x = {};
  CK(cublasLtCreate(&x.lt));
  x.ws_bytes = 32u << 20;  // FFNN_CUBLAS_WORKSPACE_BYTES
  x.ws = buf(x.ws_bytes);
  CK(cudaStreamCreate(&x.st));
  const size_t n_el = 4u << 20;
  float *Af = (float *)buf(n_el * 4), *Bf = (float *)buf(n_el * 4);
  __nv_bfloat16 *Ah = (__nv_bfloat16 *)buf(n_el * 2), *Bh = (__nv_bfloat16 *)buf(n_el * 2);
  probe_fill<<<512, 256>>>(Af, Ah, n_el, 1u);
  probe_fill<<<512, 256>>>(Bf, Bh, n_el, 7u);
  void *D = buf(n_el * 4), *Dref = buf(n_el * 4), *bias = buf(1 << 20), *dbias = buf(1 << 20);
  CK(cudaDeviceSynchronize());
  const char *pn[3] = {"fp32", "tf32", "bf16"};
  std::vector<Case> cases;
  for (int p = 0; p < 3; p++) {
    const int bf = p == 2;
    cases.push_back({"fwd0 1024x1024x784", p, CUBLAS_OP_T, 784, 1024, CUBLAS_OP_N, 784, 1024,
                     1024, 1024, CUBLASLT_EPILOGUE_RELU_BIAS, bf, 0});
    cases.push_back({"fwd1 1024x1024x1024", p, CUBLAS_OP_T, 1024, 1024, CUBLAS_OP_N, 1024,
                     1024, 1024, 1024, CUBLASLT_EPILOGUE_RELU_BIAS, bf, 0});
    cases.push_back({"dx1 1024x1024x1024", p, CUBLAS_OP_N, 1024, 1024, CUBLAS_OP_N, 1024, 1024,
                     1024, 1024, CUBLASLT_EPILOGUE_DEFAULT, bf, 0});
    if (p == 1) {  // tf32x3 (cublas.cu "tf32x3"): K' = 3K, both operands K-major
      cases.push_back({"x3 fwd0 1024x1024 k2352", p, CUBLAS_OP_T, 2352, 1024, CUBLAS_OP_N, 2352,
                       1024, 1024, 1024, CUBLASLT_EPILOGUE_RELU_BIAS, 0, 0});
      cases.push_back({"x3 fwd1 1024x1024 k3072", p, CUBLAS_OP_T, 3072, 1024, CUBLAS_OP_N, 3072,
                       1024, 1024, 1024, CUBLASLT_EPILOGUE_RELU_BIAS, 0, 0});
      cases.push_back({"x3 dx1 1024x1024 k3072", p, CUBLAS_OP_T, 3072, 1024, CUBLAS_OP_N, 3072,
                       1024, 1024, 1024, CUBLASLT_EPILOGUE_DEFAULT, 0, 0});
      cases.push_back({"x3 dW1 sgd 1024x1024 k3072", p, CUBLAS_OP_T, 3072, 1024, CUBLAS_OP_N,
                       3072, 1024, 1024, 1024, CUBLASLT_EPILOGUE_DEFAULT, 0, 1});
      cases.push_back({"x3 dW0 sgd 784x1024 k3072", p, CUBLAS_OP_T, 3072, 784, CUBLAS_OP_N,
                       3072, 1024, 784, 1024, CUBLASLT_EPILOGUE_DEFAULT, 0, 1});
    }
    if (p == 1) {  // tf32: x^T as op_T (K-major), SGD in the epilogue
      cases.push_back({"dW1 sgd xT 1024x1024 k1024", p, CUBLAS_OP_T, 1024, 1024, CUBLAS_OP_T,
                       1024, 1024, 1024, 1024, CUBLASLT_EPILOGUE_DEFAULT, 0, 1});
      cases.push_back({"dW0 sgd xT 784x1024 k1024", p, CUBLAS_OP_T, 1024, 784, CUBLAS_OP_T,
                       1024, 1024, 784, 1024, CUBLASLT_EPILOGUE_DEFAULT, 0, 1});
    } else if (p == 0) {  // fp32: x as stored, SGD in the epilogue
      cases.push_back({"dW1 sgd 1024x1024 k1024", p, CUBLAS_OP_N, 1024, 1024, CUBLAS_OP_T, 1024,
                       1024, 1024, 1024, CUBLASLT_EPILOGUE_DEFAULT, 0, 1});
      cases.push_back({"dW0 sgd 784x1024 k1024", p, CUBLAS_OP_N, 784, 1024, CUBLAS_OP_T, 1024,
                       1024, 784, 1024, CUBLASLT_EPILOGUE_DEFAULT, 0, 1});
    } else {  // bf16: fp32 dW with the bias gradient
      cases.push_back({"dW1 bgrad 1024x1024 k1024", p, CUBLAS_OP_N, 1024, 1024, CUBLAS_OP_T,
                       1024, 1024, 1024, 1024, CUBLASLT_EPILOGUE_BGRADB, 0, 0});
      cases.push_back({"dW0 bgrad 784x1024 k1024", p, CUBLAS_OP_N, 784, 1024, CUBLAS_OP_T, 1024,
                       1024, 784, 1024, CUBLASLT_EPILOGUE_BGRADB, 0, 0});
    }
  }
  for (auto &c : cases) {
    if (only && !strstr(c.name, only) && !strstr(pn[c.prec], only)) continue;
    const int bf = c.prec == 2;
    const cublasComputeType_t comp =
        c.prec == 1 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    const cudaDataType_t ab = bf ? CUDA_R_16BF : CUDA_R_32F, dt = c.d16 ? CUDA_R_16BF : CUDA_R_32F;
    CK(cublasLtMatmulDescCreate(&x.desc, comp, CUDA_R_32F));
    CK(cublasLtMatmulDescSetAttribute(x.desc, CUBLASLT_MATMUL_DESC_TRANSA, &c.opa, sizeof c.opa));
    CK(cublasLtMatmulDescSetAttribute(x.desc, CUBLASLT_MATMUL_DESC_TRANSB, &c.opb, sizeof c.opb));
    CK(cublasLtMatmulDescSetAttribute(x.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &c.epi, sizeof c.epi));
    if (c.epi != CUBLASLT_EPILOGUE_DEFAULT) {
      void *bp = c.epi == CUBLASLT_EPILOGUE_BGRADB ? dbias : bias;
      /* a bf16 D takes its bias in bf16 (cublas.cu: cuBLASLt has no fp32 one there) */
      const cudaDataType_t bt = c.epi == CUBLASLT_EPILOGUE_RELU_BIAS && c.d16 ? CUDA_R_16BF
                                                                              : CUDA_R_32F;
      CK(cublasLtMatmulDescSetAttribute(x.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof bp));
      CK(cublasLtMatmulDescSetAttribute(x.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt,
                                        sizeof bt));
    }
    CK(cublasLtMatrixLayoutCreate(&x.la, ab, c.ar, c.ac, c.ar));
    CK(cublasLtMatrixLayoutCreate(&x.lb, ab, c.br, c.bc, c.br));
    CK(cublasLtMatrixLayoutCreate(&x.ld, dt, c.m, c.n, c.m));
    x.A = bf ? (const void *)Ah : Af;
    x.B = bf ? (const void *)Bh : Bf;
    x.D = D;
    x.alpha = c.sgd ? -0.1f : 1.0f;
    x.beta = c.sgd ? 1.0f : 0.0f;
    cublasLtMatmulPreference_t pref;
    CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                            &x.ws_bytes, sizeof x.ws_bytes));
    cublasLtMatmulHeuristicResult_t h;
    int found = 0;
    if (cublasLtMatmulAlgoGetHeuristic(x.lt, x.desc, x.la, x.lb, x.ld, x.ld, pref, 1, &h,
                                       &found) != 0 || found == 0) {
      printf("%s %s: no heuristic pick\n", pn[c.prec], c.name);
      continue;
    }
    Config pick = cfg_of(h.algo);
    try_cfg(x, h.algo, pick, NULL);
    printf("%s %s (%llu x %llu)\n", pn[c.prec], c.name, (unsigned long long)c.m,
           (unsigned long long)c.n);
    // stage 1: every id x tile x stages, defaults otherwise
    int ids[512], nid = 0;
    CK(cublasLtMatmulAlgoGetIds(x.lt, comp, CUDA_R_32F, ab, ab, dt, dt, 512, ids, &nid));
    std::vector<Config> all;
    std::vector<cublasLtMatmulAlgo_t> bases;
    int tried = 0;
    for (int k = 0; k < nid; k++) {
      cublasLtMatmulAlgo_t a;
      if (cublasLtMatmulAlgoInit(x.lt, comp, CUDA_R_32F, ab, ab, dt, dt, ids[k], &a) != 0) continue;
      std::vector<uint32_t> tiles = cap_list<uint32_t>(a, CUBLASLT_ALGO_CAP_TILE_IDS);
      std::vector<uint32_t> stages = cap_list<uint32_t>(a, CUBLASLT_ALGO_CAP_STAGES_IDS);
      if (tiles.empty()) tiles.push_back(0);
      if (stages.empty()) stages.push_back(0);
      const int32_t custom_max = cap_one<int32_t>(a, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX);
      const uint16_t clusters[] = {0, 2, 3, 5, 6, 9};
      for (uint32_t t : tiles)
        for (uint32_t s : stages)
          for (uint16_t cl : clusters)
            for (int32_t cu = 0; cu <= std::min(custom_max, 3); cu++) {
              Config cf = {ids[k], t, s, 0, (uint32_t)cu, 0, 1, cl, 0, 0, 0};
              tried++;
              if (try_cfg(x, a, cf, NULL) > 0) {
                all.push_back(cf);
                bases.push_back(a);
              }
            }
    }
    all.push_back(pick); /* the heuristic's pick is expanded in stage 2 too */
    bases.push_back(h.algo);
    std::vector<int> order(all.size());
    for (size_t i = 0; i < order.size(); i++) order[i] = (int)i;
    std::sort(order.begin(), order.end(), [&](int p, int q) { return all[p].us < all[q].us; });
    printf("  ids %d, id x tile x stages x cluster x custom tried %d, ran %zu\n", nid, tried,
           all.size());
    // stage 2: the 8 fastest with split-K, swizzling, custom options, cluster shapes
    std::vector<Config> fin;
    std::vector<cublasLtMatmulAlgo_t> finb;
    for (size_t r = 0; r < order.size() && r < 8; r++) {
      const Config c0 = all[order[r]];
      const cublasLtMatmulAlgo_t &a = bases[order[r]];
      const int splitk_ok = cap_one<int32_t>(a, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT);
      const uint32_t red_mask = cap_one<uint32_t>(a, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK);
      const uint32_t swz_ok = cap_one<uint32_t>(a, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT);
      const int32_t custom_max = cap_one<int32_t>(a, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX);
      const int splits[] = {1, 2, 3, 4};
      const uint16_t clusters[] = {0, 2, 3, 5, 6};
      for (int sk : splits) {
        if (sk > 1 && !splitk_ok) continue;
        for (uint32_t red = 0; red <= 4; red = red ? red * 2 : 1) {
          if ((sk == 1) != (red == 0)) continue;
          if (red && !(red_mask & red)) continue;
          for (uint32_t swz = 0; swz <= (swz_ok ? 1u : 0u); swz++)
            for (int32_t cu = 0; cu <= std::min(custom_max, 7); cu++)
              for (uint16_t cl : clusters) {
                Config cf = c0;
                cf.splitk = sk;
                cf.red = red;
                cf.swizzle = swz;
                cf.custom = (uint32_t)cu;
                cf.cluster = cl;
                if (try_cfg(x, a, cf, NULL) > 0) {
                  fin.push_back(cf);
                  finb.push_back(a);
                }
              }
        }
      }
    }
    std::vector<int> o2(fin.size());
    for (size_t i = 0; i < o2.size(); i++) o2[i] = (int)i;
    std::sort(o2.begin(), o2.end(), [&](int p, int q) { return fin[p].us < fin[q].us; });
    // stage 3: re-time the pick and the 10 fastest in graphs; check against the pick
    const float one = 1.0f, zero = 0.0f;
    const size_t dbytes = (size_t)c.m * c.n * (c.d16 ? 2 : 4);
    CK(cudaMemset(Dref, 0, dbytes));
    CK(cublasLtMatmul(x.lt, x.desc, &one, x.A, x.la, x.B, x.lb, &zero, Dref, x.ld, Dref, x.ld,
                      &h.algo, x.ws, x.ws_bytes, x.st));
    std::vector<float> ref(c.m * c.n), got(c.m * c.n);
    auto fetch = [&](const void *p, std::vector<float> &v) {
      if (!c.d16) {
        CK(cudaMemcpy(v.data(), p, dbytes, cudaMemcpyDeviceToHost));
        return;
      }
      std::vector<__nv_bfloat16> t(c.m * c.n);
      CK(cudaMemcpy(t.data(), p, dbytes, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < t.size(); i++) v[i] = __bfloat162float(t[i]);
    };
    CK(cudaStreamSynchronize(x.st));
    fetch(Dref, ref);
    float refmax = 0;
    for (float v : ref) refmax = std::max(refmax, std::fabs(v));
    pick.us = graph_us(x.st, 5, [&]() {
      cublasLtMatmul(x.lt, x.desc, &x.alpha, x.A, x.la, x.B, x.lb, &x.beta, x.D, x.ld, x.D, x.ld,
                     &h.algo, x.ws, x.ws_bytes, x.st);
    });
    print_cfg("pick", pick);
    for (size_t r = 0; r < o2.size() && r < 10; r++) {
      Config cf = fin[o2[r]];
      cublasLtMatmulAlgo_t a;
      if (try_cfg(x, finb[o2[r]], cf, &a) <= 0) continue;
      CK(cudaMemset(D, 0, dbytes));
      CK(cublasLtMatmul(x.lt, x.desc, &one, x.A, x.la, x.B, x.lb, &zero, D, x.ld, D, x.ld, &a,
                        x.ws, x.ws_bytes, x.st));
      CK(cudaStreamSynchronize(x.st));
      fetch(D, got);
      float dmax = 0;
      for (size_t i = 0; i < got.size(); i++) dmax = std::max(dmax, std::fabs(got[i] - ref[i]));
      cf.us = graph_us(x.st, 5, [&]() {
        cublasLtMatmul(x.lt, x.desc, &x.alpha, x.A, x.la, x.B, x.lb, &x.beta, x.D, x.ld, x.D,
                       x.ld, &a, x.ws, x.ws_bytes, x.st);
      });
      char tag[32];
      snprintf(tag, sizeof tag, "#%zu", r + 1);
      print_cfg(tag, cf);
      printf("             diff vs pick %.2e (relative to max %.3g)\n", dmax / refmax, refmax);
    }
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(x.la);
    cublasLtMatrixLayoutDestroy(x.lb);
    cublasLtMatrixLayoutDestroy(x.ld);
    cublasLtMatmulDescDestroy(x.desc);
    fflush(stdout);
  }
  return 0;
}
