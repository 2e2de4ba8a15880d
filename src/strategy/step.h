/* step.h - one training step on a backend, op by op: what every strategy that
 * queues ops (per_op, fused, graph) builds on, and what the trainer's evaluation
 * and gradient hook reuse (src/strategy/step.c).
 *
 * One step (all on the backend, no host copy):
 *   gather x [B, in0], y [B] (or float targets [B, out]) by the device permutation
 *   for each layer l:  a_l = f_l(a_{l-1} W_l^T + b_l)         (in place; z_l kept in
 *                                                              pre[l] when f_l' reads z)
 *                      (local1d layers: local1d_forward instead of the matmul)
 *   loss(a_L, y or targets) -> row_loss[step*B .. +B), d a_L  (mean over batch)
 *                      (a layer with dropout: d_l = dropout(a_l), the next one's input)
 *   for l = L..1:  (dropout: da = dropout(dd), the same mask); dz = da * f_l'(a_l or z_l);
 *                  dW_l, db_l, da_{l-1}
 *   grad_clip(grads)                            (clip_grad_value / clip_grad_norm)
 *   optimizer_update(params, grads, state)      (one arena each: sgd, momentum, adam)
 *   ema_update(ema, params)                     (ema_decay)
 */
#ifndef FFNN_STRATEGY_STEP_H
#define FFNN_STRATEGY_STEP_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "core/model.h"
#include "core/schedule.h"
#include "ffnn.h"
#include "parallel/comm.h"

/* The device copy of one data set (uploaded once by the trainer). */
typedef struct ffnn_device_data {
    const ffnn_dataset *host; /* the data set this copy was made from          */
    uint8_t *images;          /* [count, features] uint8 features, or NULL      */
    float *values;            /* [count, features] float features, or NULL      */
    int32_t *labels;          /* [count] class labels, or NULL                  */
    float *targets;           /* [count, target_width] float targets, or NULL   */
    int32_t *index;           /* [count] permutation or 0..count-1              */
    float *row_loss;          /* [count] per-sample loss                        */
    uint8_t *row_correct;     /* [count] 1 when classified right                */
    float *weights;           /* [count] per-sample weights (host->weights), or NULL */
} ffnn_device_data;

/* The mixed-precision pipeline (--precision bf16 on cublaslt: ffnn_mixed_create in
 * per_op.c when the backend has the bf16 ops and the net runs the fused dense ops),
 * as PyTorch's autocast but without a cast per matmul. Which tensor is kept in
 * which type, and why:
 *   fp32  params (master weights and biases), grads, opt_state: the update adds
 *         lr*g, far below a bf16 ulp of w; the logits act[L-1] and the loss's
 *         dL/dlogits grad_buf[0]: softmax and log-sum-exp need fp32; the bias
 *         inside the epilogues; dW and db (fp32 accumulation over the batch)
 *   bf16  params16: a shadow of params (same offsets), written by the optimizer
 *         update in the kernel that updates the fp32 value, and by ffnn_mixed_sync
 *         after params came from the host (start, checkpoint load); x16 (the
 *         batch, rounded once per step); act16[l] (hidden outputs, written by the
 *         forward matmul's epilogue: their consumers are the next matmul, the
 *         weight-gradient matmul and f' (relu: only the sign)); grad16 (dL/dz of
 *         each layer: the operand of its dW and dx matmuls; the dx matmul writes
 *         it in bf16, f' applied in place)
 * Evaluation (t == 0) runs the fp32 buffers and the bf16 conversions of the fused
 * ops: it reads params (or the EMA weights), whatever the shadow holds. */
typedef struct ffnn_mixed {
    uint16_t *params16;   /* [parameter_count] bf16 shadow of params            */
    uint16_t *x16;        /* [capacity, input_size]                             */
    uint16_t **act16;     /* [layer_count] -> [capacity, layer.out]; NULL for the
                             last layer (its output stays fp32 in act[L-1])      */
    uint16_t *grad16[2];  /* each [capacity, the widest layer or ffnn_bf16_ld of the
                             output width]: the loss's dz has padded rows     */
    int stale;            /* 1: params16 is not bf16(params) yet                 */
} ffnn_mixed;

/* The buffers a training batch is gathered into (gather; gather_bf16 for a
 * mixed step: x16 instead of x). */
typedef struct ffnn_batch_buffers {
    float *x;             /* [batch_size, input_size]                            */
    int32_t *y;           /* [batch_size] class labels                           */
    float *tgt;           /* [batch_size, output width] float targets            */
    uint16_t *x16;        /* [batch_size, input_size] bf16 (r->mixed), else NULL */
    float *xt;            /* [xt_parts * input_size * batch_size] x prepared for
                             layer 0's weight gradient (r->xt), else NULL       */
} ffnn_batch_buffers;

/* Everything a strategy runs steps over: the model, the backend context, the
 * device buffers and the training data. Owned by the trainer (src/train); the
 * strategies read it and write only the buffers. */
typedef struct ffnn_run {
    ffnn_model *model;
    const ffnn_train_config *cfg;
    const ffnn_backend_ops *ops;
    void *ctx;                /* the backend context                            */
    size_t capacity;          /* rows of the activation buffers: max(batch, eval batch) */
    float *params;            /* [parameter_count] on the device                */
    float *grads;             /* [parameter_count]                              */
    float *opt_state;         /* [state_count * parameter_count] optimizer state in one
                                 allocation (momentum: buf; adam: m then v), laid out
                                 like the parameter arena; NULL for sgd          */
    float *x;                 /* [capacity, input_size]                         */
    int32_t *y;               /* [capacity] class labels of a batch             */
    float *tgt;               /* [capacity, output width] a batch's float targets */
    float **act;              /* [layer_count] -> [capacity, layer.out]         */
    float **pre;              /* [layer_count] -> [capacity, layer.out] the pre-
                                 activation z of a layer whose activation's backward
                                 reads z (ffnn_act_grad_from_input: gelu, silu ...),
                                 else NULL (the backward reads act[i])            */
    float **drop;             /* [layer_count] -> [capacity, layer.out] the dropout
                                 output of a layer with dropout (else NULL)       */
    float *grad_norm;         /* [steps_per_epoch] the clipping norm of each step of
                                 the epoch (clip_grad_norm > 0; else NULL)        */
    float *ema;               /* [parameter_count] the EMA weights (ema_decay > 0) */
    size_t dropout_row0;      /* the step's first row this rank computes (data
                                 parallelism; 0 in one process): its dropout masks
                                 continue the single-process stream from there  */
    float *grad_buf[2];       /* each [capacity, widest layer] (backprop ping-pong) */
    ffnn_device_data train;   /* the training set on the device                 */
    int fused;                /* 1: dense layers run the backend's fused ops    */
    int fused_sgd;            /* 1: fused, every layer dense and plain sgd (not
                                 the bf16 pipeline): the update runs inside the
                                 backward's ops (own kernels: the weight-gradient
                                 kernels; cublaslt: W in the dW matmul's
                                 epilogue), what they leave (the head's layer,
                                 biases summed by the op above) in the step  */
    int early_update;         /* 1 (cublaslt): the update after the backward (not
                                 fused_sgd) of layers 1.. on the second stream, each
                                 once its own backward op is done (step_update.c
                                 ffnn_early_plan; off with clipping, all-reduce)     */
    int bias_grad_from_dx;    /* 1 (fused; cublaslt): a dense layer's
                                 backward op also sums the dx it writes into the
                                 bias gradient of the dense layer below (dx_db:
                                 one pass with f'), whose op then gets db NULL    */
    ffnn_comm *comm;          /* data parallelism: this rank's communicator, or NULL
                                 (one process). Each step then computes this rank's
                                 shard of the batch (ffnn_shard_range) and sums the
                                 gradients over the ranks before the update      */
    size_t steps_per_epoch;   /* ceil(train count / batch_size): the schedule's epochs */
    const ffnn_plateau *plateau; /* reduce-on-plateau's state (the trainer's)    */
    ffnn_mixed *mixed;        /* the bf16 pipeline's buffers (ffnn_mixed), or NULL:
                                 every step in the fp32 buffers                  */
    const float *adam_scalars; /* while graph.c captures an adam(w) run: device
                                 float[2 count], step opt_t's {step_size,
                                 bias_correction2_sqrt} at 2 (opt_t -
                                 adam_scalars_t0), refilled before every launch
                                 (ffnn_optimizer_step.device_scalars); else NULL */
    uint64_t adam_scalars_t0; /* the optimizer step of adam_scalars[0]          */
    float *head_scratch;      /* [ffnn_head_scratch_floats(batch_size, in, C)] when a
                                 training step runs its output layer and loss as one
                                 op (backend.h softmax_ce_head; cublaslt, where
                                 ffnn_step_head_applies), else NULL              */
    float *xt;                /* [xt_parts * input_size * batch_size]: x prepared
                                 for layer 0's weight gradient (backend.h
                                 prepare_xt: x^T, or tf32x3's split x^T), made by
                                 the step's gather where that gradient takes it
                                 (ffnn_step_xt_create), else NULL                */
    float **act_t;            /* [layer_count] -> [xt_parts * layer.out *
                                 batch_size]: act[i] prepared so, made on the side
                                 queue after layer i's forward where layer i + 1's
                                 weight gradient takes it (ffnn_step_xt_create),
                                 else NULL (or act_t NULL)                       */
    size_t xt_parts;          /* floats per element in xt and act_t: backend.h
                                 dense_backward_wants_xt at layer 0 (1 or 3)      */
    ffnn_batch_buffers *spare; /* the graph runs' second set of batch buffers
                                 (prefetch.c): during step s of a run the batch of
                                 s + 1 is gathered into it on the backend's side
                                 queue; the sets trade places between the steps
                                 and are back in place after the run. NULL: no
                                 second stream, data parallelism, or a strategy
                                 without runs                                  */
} ffnn_run;

/* r->xt (per_op.c's cublaslt prepare): made where the backend's
 * dense_backward_wants_xt says layer 0's weight gradient runs faster from x prepared
 * (x^T; tf32x3: its split x^T) at
 * batch_size (fp32 ops, dense layer 0 without dropout), else left NULL; with it,
 * r->act_t for each dense hidden layer above it (not the head's) that takes x^T
 * too, when the backend has a second stream. Before the graph cache (r->spare takes
 * an xt then). Errors as the backend's alloc (nothing left allocated).
 * ffnn_step_xt_free releases them. */
ffnn_status ffnn_step_xt_create(ffnn_run *r);
void ffnn_step_xt_free(ffnn_run *r);

/* The mixed-precision buffers of r (per_op.c's cublaslt prepare): allocated on
 * r's backend, params16 marked stale. FFNN_ERR_UNSUPPORTED when the backend has
 * no bf16 ops; allocation errors as the backend's alloc. */
ffnn_status ffnn_mixed_create(ffnn_run *r);
/* Release r->mixed (NULL: nothing) and set it to NULL. */
void ffnn_mixed_free(ffnn_run *r);
/* The trainer wrote r->params from the host: the shadow must be made again. */
void ffnn_run_params_changed(ffnn_run *r);
/* params16 = bf16(params) when stale (queued; not while a graph is captured:
 * the strategies call it before a capture). */
ffnn_status ffnn_mixed_sync(ffnn_run *r);

/* The optimizer step t (1-based over the run) with the schedule's learning rate
 * (core/schedule.h): what every strategy applies at that step. */
ffnn_optimizer_step ffnn_run_update_at(const ffnn_run *r, uint64_t t);

/* Where gather reads the device copy d. */
ffnn_gather_source ffnn_step_gather_source(const ffnn_device_data *d);

/* Batch size of step s (0-based) of an epoch of n samples: the last may be short. */
size_t ffnn_step_batch(size_t n, size_t batch_size, size_t s);

/* 1 when r's training steps can run the output layer and its loss as one op
 * (backend.h softmax_ce_head): the backend has it, r runs the fused dense ops
 * (with fused_sgd, the step updates the head's parameters: step_head.c ffnn_step_head,
 * step_update.c update_rest), softmax_ce on class labels, no data parallelism, the last layer
 * dense with identity activation, no dropout, at most FFNN_HEAD_CMAX outputs and
 * FFNN_HEAD_MAX_WEIGHTS weights, fed by a dense layer whose activation is
 * identity, relu, sigmoid or tanh, its width a multiple of 4, the weights 16-byte
 * aligned. */
int ffnn_step_head_applies(const ffnn_run *r);
/* Allocate r->head_scratch when ffnn_step_head_applies (else leave it NULL);
 * errors as the backend's alloc. ffnn_step_head_free releases it. */
ffnn_status ffnn_step_head_create(ffnn_run *r);
void ffnn_step_head_free(ffnn_run *r);

/* Forward pass of `batch` rows already gathered into r->x; *output [batch, out]
 * is the last layer's activation buffer. t: the optimizer step whose dropout
 * masks apply (core/dropout.h), or 0: evaluation, no dropout. */
ffnn_status ffnn_step_forward(ffnn_run *r, size_t batch, uint64_t t, float **output);

/* Backward pass from d(output) in r->grad_buf[0]; writes every layer's dW, db
 * into r->grads. t: as the forward's (the same masks). sgd (only when
 * r->fused_sgd, else NULL): every parameter is updated too, p -= lr g (by the
 * layers' ops and, for the rest, on the ops' queue; r->grads then unspecified). */
ffnn_status ffnn_step_backward(ffnn_run *r, size_t batch, uint64_t t,
                               const ffnn_optimizer_step *sgd);

/* The rows of step s (0-based) of an epoch that this rank computes: rows
 * [*first, *first + *count) of the permutation (the step's whole batch without
 * a communicator, else this rank's shard of it), of *rows in the step. */
void ffnn_step_rows(const ffnn_run *r, size_t s, size_t *first, size_t *count, size_t *rows);

/* Queue training step s (0-based) of the current epoch (rows index[s*B ..]) as
 * optimizer step opt_t (1-based): gather, forward, loss (row losses at
 * row_loss[s*B ..]), backward, [with r->comm: this rank's shard only, and the
 * gradients summed over the ranks in buckets as the backward pass produces
 * them], update. */
ffnn_status ffnn_step_queue(ffnn_run *r, size_t s, uint64_t opt_t);

/* The optimizer stage of a step: update (its scalars, ffnn_optimizer_step_at)
 * applied to r->params from r->grads and r->opt_state (per weight and bias when
 * weight decay skips the biases). Clipping and any gradient reduction between
 * devices come before it. */
ffnn_status ffnn_step_update(ffnn_run *r, const ffnn_optimizer_step *update);

/* Steps [first, first + count) one after the other (ffnn_step_queue), as optimizer
 * steps opt_t + 1 ...: the run_steps of the strategies that queue ops. With
 * r->spare, each step but the last also gathers the next step's batch on the
 * backend's second stream after its forward pass (the same values: the bits of the
 * run do not change). */
ffnn_status ffnn_step_queue_run(ffnn_run *r, size_t first, size_t count, uint64_t opt_t);

/* r->spare (prefetch.c): made when the backend has the second stream (backend.h
 * side_begin) and r has no communicator, batch_size rows (with r->mixed also
 * x16, with r->xt also xt); else left NULL. Errors as the backend's alloc (nothing left allocated).
 * ffnn_prefetch_free releases it; ffnn_prefetch_swap trades r's batch buffers
 * (x, y, tgt, the mixed x16, xt) with the second set's. */
ffnn_status ffnn_prefetch_create(ffnn_run *r);
void ffnn_prefetch_free(ffnn_run *r);
void ffnn_prefetch_swap(ffnn_run *r);

#endif
