/*
 * backend.h - the interface every compute backend fills in: a table of function
 * pointers over opaque device memory. The strategies (src/strategy/), the trainer
 * and the predictor (src/train/) call only this table.
 *
 * All tensor pointers below are *device* pointers of the backend (host pointers
 * for cpu) obtained from alloc(); shapes are given in the comments, row-major.
 * Every function returns FFNN_OK or an error status with the message set
 * (ffnn_fail). Calls are ordered (one stream); only download() synchronises.
 *
 * The table has two parts:
 *   core        ffnn_backend_ops's function entries: lifetime, memory, copies,
 *               synchronize, and the ops every backend has (gather, dense, local1d,
 *               embedding, activation, loss, optimizer_update, grad_clip, dropout, ema_update).
 *               ffnn_backend_ops_complete() checks that every one is set.
 *   extensions  named groups of optional entries, one pointer each
 *               (ops->fused, ->xt, ->graph, ->persistent, ->device, ->bf16, ->head,
 *               ->side, ->packed, ->weights, ->models): NULL means the backend lacks the
 *               capability (the only capability query: `if (ops->side) ...`); a
 *               backend that sets an extension sets every entry in it.
 * (caps, FFNN_CAP_*, say which ffnn_backend_options a context accepts.)
 *
 * Files and names: an op has the same file name in every backend folder -
 * cpu/dense.c, omp/dense.c, cuda/dense.cu; likewise gather, local1d, activation
 * (with dropout), loss (with loss_weights) and update (optimizer_update, grad_clip,
 * ema_update); backend.c / backend.cu holds the table, lifetime and memory. An
 * extension's ops live in the file of the op they extend (packed: dense.c) or in
 * a file of the extension's name (cuda/fused.cu, head.cu, persistent.cu). A
 * backend function is named ffnn_<backend>_<op>_<direction>[_<variant>]
 * (ffnn_omp_dense_forward, ffnn_cuda_local1d_backward, ffnn_cuda_dense_act_forward_bf16);
 * <op>_<direction> is the entry's name in the table. ffnn_cpu_* take no context
 * (the reference kernels, also called by omp, the predictor and the tests); the
 * cpu table wraps them in cpu/backend.c. Static helpers drop the ffnn_ prefix
 * (cpu_copy, ompb_* - omp_ is OpenMP's - cuda_create).
 *
 * Adding an op every backend has: its entry in ffnn_backend_ops with shapes and
 * rounding stated here, a check in ffnn_backend_ops_complete (backend.c), and an
 * implementation in each of cpu/, omp/, cuda/ in a file of the op's name, set in
 * each table (cuda/backend.cu's static_assert counts the entries).
 * Adding an extension: a struct ffnn_ops_<name> below with its entries documented,
 * a `const struct ffnn_ops_<name> *<name>;` member at the end of ffnn_backend_ops,
 * a `static const ffnn_ops_<name>` in the backends that have it (the others leave
 * the member NULL), and callers that test `ops-><name>` before calling through it.
 * Adding a backend: a folder with those files, a `const ffnn_backend_ops` with every
 * core entry set and its extensions, and one line in the trainer's pick_backend()
 * (src/train/trainer.c) and the predictor's pick() (src/train/predictor.c).
 */
#ifndef FFNN_BACKEND_H
#define FFNN_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "ffnn.h"
#include "core/embedding.h"
#include "core/local1d.h"
#include "core/optim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where gather reads a data set (backend.h gather): device arrays, n samples. */
typedef struct ffnn_gather_source {
    const uint8_t *images;  /* uint8 features [n, features] (x = value / 255), or NULL */
    const float *values;    /* float32 features [n, features], or NULL            */
    size_t features;        /* values per sample                                  */
    const int32_t *labels;  /* int32 class labels [n], or NULL                    */
    const float *targets;   /* float32 targets [n, target_width], or NULL         */
    size_t target_width;    /* floats per target row (0 without targets)          */
} ffnn_gather_source;

struct ffnn_persistent_job;

/* Which kernels a context's plain matmul ops (dense_forward, dense_backward) and
 * local1d ops run; a backend with one kind of kernel ignores it. */
typedef enum ffnn_matmul_variant {
    FFNN_MATMUL_TILED = 0,   /* shared-memory tiled kernels (the default)          */
    FFNN_MATMUL_NAIVE = 1,   /* one thread per output element                      */
    FFNN_MATMUL_LIBRARY = 2, /* the vendor library (cuBLAS), the named comparator  */
    FFNN_MATMUL_LIBRARY_LT = 3 /* cuBLAS for the plain ops, cuBLASLt with its       */
                               /* epilogues for the fused ops (cublaslt strategy)   */
} ffnn_matmul_variant;

/* What a context is created with. Each backend reads the fields it has a use for
 * (capabilities below) and ignores the rest; 0 means the default everywhere. */
typedef struct ffnn_backend_options {
    int threads;                 /* host threads: 0 all cores (omp_get_max_threads())  */
    ffnn_matmul_variant matmul;  /* the plain matmul ops' kernels                      */
    ffnn_precision precision;    /* matmul arithmetic: tf32 or bf16 for the fused ops
                                    and the library matmul; the plain dense ops of the
                                    own kernels stay fp32                               */
    int block_1d;                /* threads per block of the 1-D element-wise kernels
                                    (a multiple of 32 in [32, 1024]); 0: default 256    */
    int block_2d;                /* the naive matmul's square block edge (8, 16, 32)   */
} ffnn_backend_options;

/* Capabilities (ffnn_backend_ops.caps): what a backend can do beyond the ops every
 * backend has. The strategies ask for these; no code outside a backend names one. */
enum {
    FFNN_CAP_THREADS = 1 << 0,   /* runs ops over options.threads host threads       */
    FFNN_CAP_DEVICE = 1 << 1,    /* memory is a GPU's: the cuda strategies apply      */
    FFNN_CAP_TF32 = 1 << 2,      /* options.precision tf32 (fused ops, library matmul) */
    FFNN_CAP_BF16 = 1 << 3,      /* options.precision bf16 (fused ops, library matmul) */
    FFNN_CAP_LIBRARY_MATMUL = 1 << 4 /* options.matmul FFNN_MATMUL_LIBRARY (and _LT)  */
};

/* softmax_ce_head_sums's plain-SGD update: p -= lr g for each parameter whose
 * gradient g the call sums, rounded as optimizer_update (the gradients are written
 * all the same): W [C, in] by dW, b [C] by db, b_below [in] (the layer below's
 * bias) by dh_db; a NULL pointer (or a NULL gradient) is not updated. */
typedef struct ffnn_head_sgd {
    float *W, *b, *b_below;
    float lr;
} ffnn_head_sgd;

/* ---- extension "fused": the dense ops with their element-wise neighbours in the
 * matmul's epilogues (cuda; the fused, graph, cublaslt strategies). NULL: the
 * strategies run dense_forward + activation_forward and their backwards. ---- */
typedef struct ffnn_ops_fused {
    /* Dense forward with bias and activation in the matmul's epilogue:
     *   a = act(x W^T (+ b))    x [batch, in], W [out, in], b [out] or NULL,
     *                           a [batch, out]
     * Same values as dense_forward then activation_forward. */
    ffnn_status (*dense_act_forward)(void *ctx, const float *x, const float *W,
                                     const float *b, float *a, size_t batch, size_t in,
                                     size_t out, ffnn_activation act);

    /* Dense backward with the input layer's activation derivative in the dx
     * epilogue and, when sgd is set, the SGD update in the gradient kernels:
     *   dx = (dz W) * f'(x)   [batch, in]  f' of x_act written through x, the
     *                         previous layer's output (as activation_backward);
     *                         skipped when dx is NULL
     *   dW = dz^T x [out, in], db = sum_b dz[b,:] [out] (db skipped when NULL)
     *   dx_db = sum_b dx[b,:] [in] of the dx written (the bias gradient of the
     *     layer below, whose own call then passes db NULL), or NULL; needs dx. On
     *     cuBLASLt one pass with f' (saves the BGRADB epilogue's kernel); the own
     *     kernels sum dz^T's rows inside the dW matmul, so their strategies pass
     *     NULL (given, they sum dx in a second kernel)
     *   xt (or NULL): x prepared for the weight gradient by prepare_xt, in the
     *     form dense_backward_wants_xt names: x^T [in, batch] (tf32 tensor-core
     *     kernels take only K-major operands, and dW's K is the batch:
     *     docs/RESULTS.md "x^T from the gather"), or tf32x3's split x^T [in, 3
     *     batch] (the three TF32 parts that matmul reads). Only a backend with
     *     dense_backward_wants_xt takes it
     *   sgd != NULL (kind FFNN_OPT_SGD): then W -= lr dW and b -= lr db (b NULL:
     *     no bias update; the caller updates a bias whose gradient another op
     *     summed); dx reads W before the update. The own kernels round each
     *     element as optimizer_update does and write dW too; cuBLASLt updates W in
     *     its matmul's epilogue (alpha -lr, beta 1: its rounding) and leaves dW
     *     unwritten. After a call with sgd, dW's contents are unspecified.
     *   dw_side: 1 lets the backend queue the weight-gradient half (dW, db and the
     *     update) on the second stream (side_begin), after dx's matmul and
     *     concurrently with f', dx_db and what the caller queues next; it does so
     *     where that measured faster (cuda: gemm_plan.h ffnn_lt_dw_beside), else
     *     queues it in order. The caller must then side_join before any op that
     *     writes x, xt or dz or reads W, b, dW or db. 0: everything in order.
     * x [batch, in], W [out, in], b [out] or NULL, dz [batch, out]. */
    ffnn_status (*dense_backward_fused)(void *ctx, const float *x, float *W, float *b,
                                        const float *dz, float *dx, float *dW, float *db,
                                        float *dx_db, size_t batch, size_t in, size_t out,
                                        ffnn_activation x_act,
                                        const ffnn_optimizer_step *sgd, const float *xt,
                                        int dw_side);
} ffnn_ops_fused;

/* ---- extension "xt": x prepared for the dense_backward_fused weight
 * gradient (cuda). NULL: dense_backward_fused is passed xt NULL. Needs "fused". ---- */
typedef struct ffnn_ops_xt {
    /* The floats per element of x of the xt that dense_backward_fused on this
     * context at these shapes takes, where its weight gradient runs faster given
     * it: 1 (x^T), 3 (tf32x3's split x^T), else 0 (none). */
    int (*dense_backward_wants_xt)(void *ctx, size_t batch, size_t in, size_t out);
    /* xt [dense_backward_wants_xt(batch, in, ...) * batch * in floats] = x [batch,
     * in] (fp32) in that form: x^T [in, batch], xt[c * batch + r] = x[r * in + c],
     * exact (every precision but tf32x3, whatever the shape), or in tf32x3 the split
     * x^T (each input unit's row [small | big | big] of batch values each:
     * cuda/cublas.cu "tf32x3"). */
    ffnn_status (*prepare_xt)(void *ctx, const float *x, size_t batch, size_t in, float *xt);
} ffnn_ops_xt;

/* ---- extension "graph": recording queued ops and replaying them (cuda graphs;
 * the graph strategy). NULL: every step is queued op by op. ---- */
typedef struct ffnn_ops_graph {
    /* Capture: every op queued between capture_begin and capture_end is recorded,
     * not run, into *graph, which graph_launch then runs (all of it, in order,
     * as if queued again) any number of times; graph_free releases it. */
    ffnn_status (*capture_begin)(void *ctx);
    ffnn_status (*capture_end)(void *ctx, void **graph);
    ffnn_status (*graph_launch)(void *ctx, void *graph);
    void (*graph_free)(void *ctx, void *graph);
} ffnn_ops_graph;

/* ---- extension "persistent": whole steps in one kernel (cuda; the persistent
 * strategy). NULL: that strategy is not offered. ---- */
typedef struct ffnn_ops_persistent {
    /* Whole steps in one kernel (persistent strategy); see ffnn_persistent_job.
     * persistent_supported: 1 when train_persistent can run this job's shapes on
     * this context's device (it holds W1/W2 slices on chip), else 0 with the
     * reason in ffnn_last_error(). */
    ffnn_status (*train_persistent)(void *ctx, const struct ffnn_persistent_job *job);
    int (*persistent_supported)(void *ctx, const struct ffnn_persistent_job *job);
} ffnn_ops_persistent;

/* ---- extension "device": a context on a device with its own memory and queue
 * (cuda). NULL for the host backends, whose memory is the host's: the trainer then
 * skips its free-memory estimate and refuses a device communicator. ---- */
typedef struct ffnn_ops_device {
    /* Change options.precision of a live context (read at every matmul call);
     * FFNN_ERR_INVALID_ARGUMENT for an unknown value. Which strategy takes which
     * precision is the strategies' rule (strategy.h), not the backend's. */
    ffnn_status (*set_precision)(void *ctx, ffnn_precision precision);


    /* The bytes the context's device can still allocate (cudaMemGetInfo's free), for
     * the trainer's estimate before it allocates (train/trainer.c). */
    ffnn_status (*memory_available)(void *ctx, size_t *free_bytes);
    /* The native stream every op of ctx is queued on (cudaStream_t), for a device
     * communicator (src/parallel/) to order its collectives after the ops. */
    void *(*native_stream)(void *ctx);
} ffnn_ops_device;

/* ---- extension "bf16": mixed precision (--precision bf16 on the cublaslt
 * strategy: strategy/step.h ffnn_mixed). A bf16 tensor is uint16_t [n], the
 * bfloat16 bits: the fp32 value rounded to nearest even to 8 significant bits (the
 * high half of its fp32 bits after rounding). Operands bf16, products accumulated
 * in fp32; master weights, gradients and optimizer state stay fp32. NULL: the
 * strategies refuse bf16. ---- */
typedef struct ffnn_ops_bf16 {
    /* dst16[r * ld + c] = bf16(src[r * cols + c]) for r < rows, c < cols (ld >=
     * cols; the cells past cols of a row are not written). src [rows, cols] fp32,
     * dst16 [rows, ld] bf16. */
    ffnn_status (*to_bf16)(void *ctx, const float *src, uint16_t *dst16, size_t rows,
                           size_t cols, size_t ld);

    /* gather, with the features rounded to bf16 (gather's x, rounded to nearest
     * even) into x16 [batch, features] instead of x; y and t as gather's. */
    ffnn_status (*gather_bf16)(void *ctx, const ffnn_gather_source *src, const int32_t *index,
                               size_t batch, uint16_t *x16, int32_t *y, float *t);

    /* optimizer_update, and in the same pass shadow16[i] = bf16(params[i]) of
     * the updated value. shadow16 [n] bf16; the rest as optimizer_update. */
    ffnn_status (*optimizer_update_bf16)(void *ctx, const ffnn_optimizer_step *step,
                                         float *params, const float *grads, float *state,
                                         size_t n, uint16_t *shadow16);

    /* a = act(x16 W16^T (+ b)), bf16 operands, fp32 accumulation, the bias (fp32
     * b, or its bf16 copy b16 where the library wants the output's type) added
     * to the fp32 sum, then act, then one rounding to the output's type: into
     * a16 [batch, out] (bf16) when a16 is not NULL, else into a [batch, out]
     * (fp32). x16 [batch, in], W16 [out, in], b [out] / b16 [out] or both NULL.
     * act: identity, relu, sigmoid, tanh. */
    ffnn_status (*dense_act_forward_bf16)(void *ctx, const uint16_t *x16, const uint16_t *W16,
                                          const float *b, const uint16_t *b16, float *a,
                                          uint16_t *a16, size_t batch, size_t in, size_t out,
                                          ffnn_activation act);

    /* Its backward, from dz16 = dL/dz [batch, out] (bf16; rows dz_ld >= out
     * apart, ffnn_bf16_ld(out) for the loss's gradient):
     *   dx16 = bf16(bf16(dz16 W16) * f'(x16))  [batch, in] bf16 (skipped when NULL;
     *                                           f' of x_act from the saved output x16)
     *   dW = dz16^T x16   [out, in] fp32 (fp32 accumulation)
     *   db = sum_b dz16   [out] fp32 (skipped when NULL)
     *   dx_db = sum_b dx16 [in] fp32 of the rounded dx16 (as dense_backward_fused's
     *           dx_db), or NULL; needs dx16
     * x16 [batch, in], W16 [out, in] (the weights' bf16 shadow; may be NULL without
     * dx16). No update: the pipeline's optimizer_update_bf16 writes W and its shadow
     * in one pass after the backward. dw_side: as dense_backward_fused's (the
     * caller joins before any op that writes x16 or dz16 or reads dW or db). */
    ffnn_status (*dense_backward_bf16)(void *ctx, const uint16_t *x16, const uint16_t *W16,
                                       const uint16_t *dz16, size_t dz_ld, uint16_t *dx16,
                                       float *dW, float *db, float *dx_db, size_t batch,
                                       size_t in, size_t out, ffnn_activation x_act,
                                       int dw_side);
} ffnn_ops_bf16;

/* ---- extension "head": the output layer and its loss in one op (cuda; the
 * cublaslt strategy's training steps). NULL: the output layer runs as dense_forward,
 * loss, dense_backward. ---- */
typedef struct ffnn_ops_head {
    ffnn_status (*softmax_ce_head)(void *ctx, int bf16, const void *h, const void *W,
                                   const float *b, const int32_t *y, size_t batch, size_t in,
                                   size_t C, ffnn_activation act, float *dW, float *db,
                                   void *dh, float *dh_db, float *row_loss,
                                   uint8_t *row_correct, float *scratch);
    /* The sums a softmax_ce_head call with dW NULL left in scratch (the same batch,
     * in, C): dW [C, in], db [C] (NULL: not wanted), dh_db [in] (NULL: not wanted),
     * as softmax_ce_head would have written them (the same bits). sgd (or NULL):
     * plain SGD of the parameters whose gradients these are, in the same pass
     * (ffnn_head_sgd). */
    ffnn_status (*softmax_ce_head_sums)(void *ctx, size_t batch, size_t in, size_t C,
                                        float *dW, float *db, float *dh_db,
                                        const float *scratch, const ffnn_head_sgd *sgd);
} ffnn_ops_head;

/* ---- extension "side": a second queue (cuda). NULL: the strategies queue every
 * op in order (and dense_backward_fused's dw_side is ignored). ---- */
typedef struct ffnn_ops_side {
    ffnn_status (*side_begin)(void *ctx);
    ffnn_status (*side_end)(void *ctx);
    ffnn_status (*side_join)(void *ctx);
} ffnn_ops_side;

/* ---- extension "packed": weights packed once for inference (omp; the
 * predictor). NULL: the predictor calls dense_forward. ---- */
typedef struct ffnn_ops_packed {
    /* Floats of W [out, in] packed for dense_forward_packed on this context. */
    size_t (*dense_pack_floats)(void *ctx, size_t in, size_t out);
    /* packed [dense_pack_floats(in, out)] = W [out, in] in the matmul's layout. */
    ffnn_status (*dense_pack)(void *ctx, const float *W, size_t in, size_t out, float *packed);
    /* dense_forward's z = x W^T (+ b) [batch, out] from the packed W: the same bits. */
    ffnn_status (*dense_forward_packed)(void *ctx, const float *x, const float *packed,
                                        const float *b, float *z, size_t batch, size_t in,
                                        size_t out);
    /* dense_forward_packed on one share of W's column panels, on the calling thread:
     * of the ceil(out / nr) panels, the contiguous part `part` (0 .. parts - 1) of
     * `parts`, z[:, *j0 .. *j1) [batch, out] (z's other columns untouched; *j0 ==
     * *j1: no panel). Each column the bits dense_forward_packed gives it. */
    ffnn_status (*dense_forward_packed_part)(void *ctx, const float *x, const float *packed,
                                             const float *b, float *z, size_t batch,
                                             size_t in, size_t out, int part, int parts,
                                             size_t *j0, size_t *j1);
} ffnn_ops_packed;

/* ---- extension "weights": per-sample weights (cpu, omp). NULL: the trainer
 * refuses a weighted data set. ---- */
typedef struct ffnn_ops_weights {
    /* After loss, for the batch rows index [batch] (int32) of weights w [n]:
     *   W = sum_b w[index[b]],  s_b = w[index[b]] * batch / W
     *   dout[b, :] *= s_b       dout [batch, width], as loss wrote it (the
     *                           gradient of the batch mean) -> that of the
     *                           weighted mean sum_b w_b l_b / W
     * W == 0 (a batch of zero weights): dout zeroed. W summed in double, in order. */
    ffnn_status (*loss_weights)(void *ctx, const float *weights, const int32_t *index,
                                size_t batch, size_t width, float *dout);
} ffnn_ops_weights;

/* ---- extension "models": ops over a model axis (cuda; ffnn_sweep's batched
 * engine, src/train/sweep_batched.c): `count` models of one shape in one launch
 * per op. Model z's tensors start z times their stride (floats) past the pointer
 * given; a stride of 0 gives every model the same tensor (a shared input). Each
 * model's values are those of the fused op on it alone with an unsplit plan (the
 * same kernel and tile; the fused ops split K for some shapes, which changes the
 * order of a sum). fp32 only. NULL: no batched sweep. ---- */
typedef struct ffnn_ops_models {
    /* fused dense_act_forward per model: a = act(x W^T + b)
     *   x [count][batch, in] (stride x_stride), W [count][out, in] and b [count][out]
     *   (stride p_stride, b NULL: no bias), a [count][batch, out] (stride batch*out) */
    ffnn_status (*dense_act_forward)(void *ctx, const float *x, size_t x_stride,
                                     const float *W, const float *b, size_t p_stride,
                                     float *a, size_t batch, size_t in, size_t out,
                                     ffnn_activation act, size_t count);
    /* fused dense_backward_fused with plain SGD per model (learning rate lr[z], lr a
     * device array [count]), in its order:
     *   dx = (dz W) * f'(x)  [count][batch, in] (skipped when dx is NULL; reads W
     *                        before the update), f' of x_act through x
     *   dW = dz^T x [count][out, in] (stride p_stride; contents unspecified after),
     *   db = sum_b dz, W -= lr dW, b -= lr db (b NULL: no bias)
     * x [count][batch, in] (stride x_stride), dz [count][batch, out]. */
    ffnn_status (*dense_backward_sgd)(void *ctx, const float *x, size_t x_stride, float *W,
                                      float *b, float *dW, size_t p_stride, const float *dz,
                                      float *dx, ffnn_activation x_act, const float *lr,
                                      size_t batch, size_t in, size_t out, size_t count);
    /* loss per model: out [count][batch, width] (contiguous), labels y: model z's row
     * b reads y[z * y_stride + b] (y_stride 0: shared labels [batch]); dout as loss,
     * the gradient of each model's batch mean; row_loss, row_correct [count * batch]. */
    ffnn_status (*loss)(void *ctx, ffnn_loss loss, const float *out, const int32_t *y,
                        size_t y_stride, size_t batch, size_t width, size_t count,
                        float *dout, float *row_loss, uint8_t *row_correct);
} ffnn_ops_models;

typedef struct ffnn_backend_ops {
    const char *name;
    unsigned caps;          /* FFNN_CAP_* bits                                     */

    /* ---- lifetime and memory ---- */
    /* Create a backend context (stream, handles) with *options (NULL: defaults);
     * FFNN_ERR_INVALID_ARGUMENT for a value out of range, FFNN_ERR_UNSUPPORTED for
     * an option the backend lacks the capability for. */
    ffnn_status (*create)(const ffnn_backend_options *options, void **ctx);
    void (*destroy)(void *ctx);
    /* Host threads a context runs its ops on (1 for a single-threaded backend). */
    int (*threads)(const void *ctx);
    /* Allocate `bytes` of device memory (contents unspecified). */
    ffnn_status (*alloc)(void *ctx, size_t bytes, void **ptr);
    void (*release)(void *ctx, void *ptr);
    /* Host -> device and device -> host copies; download waits for all prior work. */
    ffnn_status (*upload)(void *ctx, void *dst, const void *src, size_t bytes);
    ffnn_status (*download)(void *ctx, void *dst, const void *src, size_t bytes);
    /* Block until all queued work is done (used around timers). */
    ffnn_status (*synchronize)(void *ctx);

    /* ---- ops ---- */

    /* Batch gather: for b < batch, with r = index[b] (index: int32 [batch]),
     *   x[b, f] = images[r, f] / 255       when src->images (uint8 [n, features])
     *   x[b, f] = values[r, f]             when src->values (float32 [n, features])
     *   y[b]    = labels[r]                when src->labels (uint8 [n]); y [batch]
     *   t[b, j] = targets[r, j]            when src->targets (float32
     *                                      [n, target_width]); t [batch, target_width]
     * Exactly one of images/values is set; labels and targets are each optional
     * (y, t may be NULL when theirs is). src: a host pointer, read before the
     * call returns; the arrays in it are device pointers. */
    ffnn_status (*gather)(void *ctx, const ffnn_gather_source *src, const int32_t *index,
                          size_t batch, float *x, int32_t *y, float *t);

    /* Dense forward, pre-activation:  z = x W^T (+ b)
     *   x [batch, in], W [out, in], b [out] or NULL, z [batch, out] */
    ffnn_status (*dense_forward)(void *ctx, const float *x, const float *W,
                                 const float *b, float *z, size_t batch, size_t in,
                                 size_t out);

    /* Dense backward, given dz = dL/dz [batch, out]:
     *   dW = dz^T x        [out, in]     (overwritten)
     *   db = sum_b dz[b,:] [out]         (overwritten; skipped when db is NULL)
     *   dx = dz W          [batch, in]   (overwritten; skipped when dx is NULL)
     * x [batch, in], W [out, in]. */
    ffnn_status (*dense_backward)(void *ctx, const float *x, const float *W,
                                  const float *dz, float *dx, float *dW, float *db,
                                  size_t batch, size_t in, size_t out);

    /* 1-D locally connected layer (local1d/local1d.h has the formulas), with
     * M = ffnn_local1d_output_size(N, R, padding) >= 1:
     *   z[b,m] = act( sum_{r<R} W[m,r] x[b, m+r-pad] (+ b[m]) )
     * x [batch, N], W [M, R], b [M] or NULL, z [batch, M]. The trainer passes act
     * identity and runs activation_forward after it, as for dense layers; any other
     * act runs with its default parameter (core/activation.h), and the cuda backend
     * takes identity, relu, sigmoid and tanh only. */
    ffnn_status (*local1d_forward)(void *ctx, const float *x, const float *W,
                                   const float *b, float *z, size_t batch, size_t N,
                                   size_t R, ffnn_local1d_padding padding,
                                   ffnn_activation act);

    /* Its backward, given dz = dL/dz [batch, M]:
     *   dW[m,r] = sum_b dz[b,m] x[b, m+r-pad]   [M, R]  (overwritten)
     *   db[m]   = sum_b dz[b,m]                 [M]     (overwritten; skipped when NULL)
     *   dx[b,n] = sum over (m, r) with m+r-pad = n of dz[b,m] W[m,r]
     *                                           [batch, N] (overwritten; skipped when NULL)
     * x [batch, N], W [M, R]. Each value is summed by one thread, in a fixed order. */
    ffnn_status (*local1d_backward)(void *ctx, const float *x, const float *W,
                                    const float *dz, float *dx, float *dW, float *db,
                                    size_t batch, size_t N, size_t R,
                                    ffnn_local1d_padding padding);

    /* Embedding layer (core/embedding.h has the formulas and the order of the
     * sums); spec: a host pointer, read before the call returns:
     *   a = embedding(x)   x [batch, spec->in], W [spec->weights],
     *                      a [batch, spec->out] */
    ffnn_status (*embedding_forward)(void *ctx, const float *x, const float *W, float *a,
                                     size_t batch, const ffnn_embedding_spec *spec);
    /* Its backward, given dz [batch, spec->out]: dW [spec->weights] (overwritten)
     * summed over the batch in order, each table column by one thread; no dx. */
    ffnn_status (*embedding_backward)(void *ctx, const float *x, const float *dz, float *dW,
                                      size_t batch, const ffnn_embedding_spec *spec);

    /* Element-wise activation: a = f(z) over n values (a may equal z). param: the
     * activation's parameter (core/activation.h: leaky_relu's negative slope, elu's
     * alpha; unused by the others). The formulas: src/backend/cpu/cpu_math.h. */
    ffnn_status (*activation_forward)(void *ctx, ffnn_activation act, float param,
                                      const float *z, float *a, size_t n);
    /* dz = da * f'(z) over n values, f' from the forward's saved value [n]: the
     * output a = f(z) (relu: a > 0; sigmoid: a(1-a); tanh: 1-a^2; leaky_relu,
     * elu, softplus), or the pre-activation z for the activations of
     * ffnn_act_grad_from_input (gelu, gelu_tanh, silu, mish, hardswish); not read
     * for identity. dz may equal da. */
    ffnn_status (*activation_backward)(void *ctx, ffnn_activation act, float param,
                                       const float *saved, const float *da, float *dz,
                                       size_t n);

    /* Loss of the network output `out` [batch, width] against labels y [batch]
     * or float targets [batch, width]:
     *   row_loss[b]  : loss of sample b (for mse and bce the mean over its width)
     *   row_correct[b]: 1 when sample b is classified right (see below), else 0
     *   dout (unless NULL) = dL/dout of the batch mean loss, i.e. divided by batch
     *     (and by width for mse/bce, PyTorch's reduction='mean').
     * Targets: with targets NULL, softmax_ce takes y as the class index; mse and
     * sigmoid_bce take one-hot(y) when width > 1 and y itself (0/1 or a value)
     * when width == 1; correct is argmax == y (first on ties), for width 1
     * (out > threshold) == (y != 0), threshold 0 for logits, 0.5 for mse.
     * With targets set (mse and sigmoid_bce only; y is not read and may be NULL),
     * t[b, j] = targets[b, j] and correct is 1 when every output is on its
     * target's side: (out[b,j] > threshold) == (targets[b,j] > 0.5) for all j -
     * for 0/1 targets of width 1 the same as the label rule. */
    ffnn_status (*loss)(void *ctx, ffnn_loss loss, const float *out, const int32_t *y,
                        const float *targets, size_t batch, size_t width, float *dout,
                        float *row_loss, uint8_t *row_correct);

    /* One optimizer step over the parameter arena, element by element (i < n),
     * in float32 with PyTorch's CPU rounding (src/backend/cpu/update.c spells it out):
     *   sgd       p -= lr g                                        state: none
     *   momentum  buf = first_step ? g : momentum buf + g          state: buf [n]
     *             p -= lr (nesterov ? g + momentum buf : buf)
     *   adam      m = lerp(m, g, 1-beta1); v = beta2 v + (1-beta2) g g
     *             p -= step_size m / (sqrt(v) / bias_correction2_sqrt + eps)
     *                                                  state: m [n] then v [n]
     * params [n], grads [n], state [ffnn_optimizer_state_count(step->kind) * n]
     * (NULL for sgd). step: a host pointer, read before the call returns. */
    ffnn_status (*optimizer_update)(void *ctx, const ffnn_optimizer_step *step,
                                    float *params, const float *grads, float *state,
                                    size_t n);

    /* Gradient clipping over the whole gradient arena grads [n], in place, before
     * the optimizer step (after any reduction of the gradients between devices):
     *   max_value > 0: g = min(max(g, -max_value), max_value)
     *                  (torch.nn.utils.clip_grad_value_)
     *   max_norm > 0:  norm = sqrt(sum_i g_i^2) (summed in double, then rounded),
     *                  coef = min(max_norm / (norm + 1e-6), 1) in float; g *= coef
     *                  (torch.nn.utils.clip_grad_norm_); *norm_out = norm (a device
     *                  float; the norm before clipping), when norm_out is not NULL
     * value first, then norm. Nothing on the host: capturable in a graph. */
    ffnn_status (*grad_clip)(void *ctx, float *grads, size_t n, float max_norm,
                             float max_value, float *norm_out);

    /* Inverted dropout, out[i] = keep(i) ? in[i] * scale : 0 over n values (out may
     * equal in), scale = 1 / (1 - p) rounded to float, keep(i) = the 32 high bits
     * of SplitMix64 at counter i of the stream `key` are >= threshold
     * (ffnn_dropout_threshold(p)): the same mask on every backend for the same key
     * (core/dropout.h makes keys from seed, step, layer). The backward applies the
     * same call to the gradient. */
    ffnn_status (*dropout)(void *ctx, const float *in, float *out, size_t n, uint64_t key,
                           uint32_t threshold, float scale);

    /* Exponential moving average of the parameters: ema = ema decay + (1 - decay) p,
     * element-wise (the product rounded, then one fma: torch's ema.mul_(decay)
     * .add_(p, alpha=1 - decay)); one_minus_decay = (float)(1 - decay) from the
     * decimal value. ema [n], params [n]. */
    ffnn_status (*ema_update)(void *ctx, float *ema, const float *params, size_t n,
                              float decay, float one_minus_decay);

    /* ---- extensions: NULL when the backend lacks one (the capability query:
     * `if (ops->graph)`); a non-NULL extension has every entry set. ---- */
    const struct ffnn_ops_fused *fused;
    const struct ffnn_ops_xt *xt;
    const struct ffnn_ops_graph *graph;
    const struct ffnn_ops_persistent *persistent;
    const struct ffnn_ops_device *device;
    const struct ffnn_ops_bf16 *bf16;
    const struct ffnn_ops_head *head;
    const struct ffnn_ops_side *side;
    const struct ffnn_ops_packed *packed;
    const struct ffnn_ops_weights *weights;
    const struct ffnn_ops_models *models;
} ffnn_backend_ops;

/* softmax_ce_head's limits and scratch (one copy for the backend and the strategy
 * that allocates it): at most FFNN_HEAD_CMAX classes and FFNN_HEAD_MAX_WEIGHTS
 * weights. Up to FFNN_HEAD_FUSED_MAX_IN inputs the op is one kernel whose blocks
 * take ffnn_head_rows_per_block rows each, a slice per block; wider, its backward
 * runs on tiles of FFNN_HEAD_TILE_COLS columns times slices of the batch's rows,
 * about 256 blocks (two a multiprocessor), at least 16 rows a slice. Each slice's
 * partial sums (dW [C, in], dh_db [in], db [C], padded to 4 floats) are added in
 * slice order. */
#define FFNN_HEAD_CMAX 16
#define FFNN_HEAD_MAX_WEIGHTS 16384 /* C * in: W staged in 64 KiB of shared memory */
#define FFNN_HEAD_TILE_COLS 128
#define FFNN_HEAD_FUSED_MAX_IN 512
/* about 128 blocks, and at least the rows a block of 8 warps runs at once: 8 /
 * ceil(in / 128) (a row's 4-column groups over the warps' 32 lanes) */
static inline size_t ffnn_head_rows_per_block(size_t batch, size_t in)
{
    const size_t at_once = 8 / ((in + 127) / 128), r = (batch + 127) / 128;
    return r < at_once ? at_once : r;
}
static inline size_t ffnn_head_slices(size_t batch, size_t in)
{
    if (in <= FFNN_HEAD_FUSED_MAX_IN) {
        const size_t r = ffnn_head_rows_per_block(batch, in);
        return (batch + r - 1) / r;
    }
    const size_t tiles = (in + FFNN_HEAD_TILE_COLS - 1) / FFNN_HEAD_TILE_COLS;
    size_t s = (256 + tiles - 1) / tiles;
    if (s > (batch + 15) / 16) s = (batch + 15) / 16;
    if (s < 1) s = 1;
    const size_t rows = (batch + s - 1) / s;
    return (batch + rows - 1) / rows; /* no empty slice */
}
static inline size_t ffnn_head_slice_floats(size_t in, size_t C)
{
    return C * in + in + (C + 3) / 4 * 4;
}
static inline size_t ffnn_head_dlog_floats(size_t batch, size_t C)
{
    return (batch * C + 3) / 4 * 4;
}
static inline size_t ffnn_head_scratch_floats(size_t batch, size_t in, size_t C)
{
    return ffnn_head_dlog_floats(batch, C) + ffnn_head_slices(batch, in) *
                                                 ffnn_head_slice_floats(in, C);
}

/* The row stride of a bf16 gradient that the loss hands to a narrow output layer:
 * cols rounded up to 8 values (16 bytes), so that the tensor-core matmuls take
 * it (a 10-wide dz with rows 20 bytes apart sent cuBLASLt to a CUDA-core kernel,
 * 275 us of a 2 ms step on the H200: docs/PERFORMANCE.md). */
static inline size_t ffnn_bf16_ld(size_t cols) { return (cols + 7) / 8 * 8; }

/* Steps [first_step, first_step + steps) of an epoch of a dense net
 *   x [B, in] -> h = act(x W1^T + b1) [B, hidden] -> logits = h W2^T + b2 [B, out]
 * with softmax cross-entropy on data.labels or mean squared error on data.targets
 * (target_width == out), and plain SGD, as the per-op path runs them: for
 * each step s, rows index[s*batch_size ...] (the last batch may be short: n rows
 * in all), its per-row loss and correctness written at row_loss/row_correct
 * [s*batch_size ...]. */
typedef struct ffnn_persistent_job {
    ffnn_gather_source data;    /* images or values, and labels                    */
    const int32_t *index;       /* [n] the epoch's permutation (device)            */
    size_t n;                   /* samples in the epoch                            */
    size_t batch_size;
    size_t first_step, steps;
    size_t in, hidden, out;
    ffnn_activation hidden_act;
    ffnn_loss loss;             /* FFNN_LOSS_SOFTMAX_CE or FFNN_LOSS_MSE           */
    float *W1, *b1;             /* [hidden, in], [hidden] or NULL                  */
    float *W2, *b2;             /* [out, hidden], [out] or NULL                    */
    float lr;                   /* sgd learning rate (float, as optimizer_update)  */
    float *row_loss;            /* [n]                                             */
    uint8_t *row_correct;       /* [n]                                             */
} ffnn_persistent_job;

/* 1 when ops has a name and every core entry set (checked by the trainer before
 * use); the extensions are not checked (NULL: not supported). */
int ffnn_backend_ops_complete(const ffnn_backend_ops *ops);

/* The backends. ffnn_cuda_backend is NULL in a build without nvcc. */
extern const ffnn_backend_ops ffnn_cpu_backend;
/* The reference ops split over OpenMP threads, with vectorised matmuls (src/backend/omp/). */
extern const ffnn_backend_ops ffnn_omp_backend;
const ffnn_backend_ops *ffnn_cuda_backend(void);
#ifdef __cplusplus
}
#endif
#endif
