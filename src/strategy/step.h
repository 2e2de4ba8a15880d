/* step.h - one training step on a backend, op by op: what every strategy that
 * queues ops (per_op, fused, graph) builds on, and what the trainer's evaluation
 * and gradient hook reuse (src/strategy/step.c and its phases, step_phases.h).
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

/* How the shared step runs each phase: chosen by the strategy's prepare (all 0:
 * the plain ops, one by one; src/strategy/fused.c, per_op.c). */
typedef struct ffnn_step_plan {
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
} ffnn_step_plan;

/* The state of the features that only some strategies turn on, each struct owned
 * (made, freed, its contents read) by its own file; NULL: off. */
typedef struct ffnn_mixed ffnn_mixed;                 /* mixed.h    */
typedef struct ffnn_head ffnn_head;                   /* head.h     */
typedef struct ffnn_xt ffnn_xt;                       /* xt.h       */
typedef struct ffnn_batch_buffers ffnn_batch_buffers; /* prefetch.h */
typedef struct ffnn_capture_scalars {
    const float *adam;        /* device float[2 count]: step opt_t's
                                 {step_size, bias_correction2_sqrt} at 2 (opt_t - t0),
                                 refilled before every launch
                                 (ffnn_optimizer_step.device_scalars)            */
    uint64_t t0;              /* the optimizer step of adam[0]                  */
} ffnn_capture_scalars;
typedef struct ffnn_step_ext {
    ffnn_mixed *mixed;        /* the bf16 pipeline's buffers (mixed.h; cublaslt
                                 bf16), or NULL: every step in the fp32 buffers   */
    ffnn_head *head;          /* the output layer and its loss as one op (head.h;
                                 cublaslt, where ffnn_step_head_applies)         */
    ffnn_xt *xt;              /* x and the hidden outputs prepared for the weight
                                 gradient (xt.h; cublaslt, where the backend's
                                 dense_backward_wants_xt says so)                 */
    ffnn_batch_buffers *spare; /* the graph runs' second set of batch buffers
                                 (prefetch.h): during step s of a run the batch of
                                 s + 1 is gathered into it on the backend's side
                                 queue; the sets trade places between the steps
                                 and are back in place after the run. NULL: no
                                 second stream, data parallelism, or a strategy
                                 without runs                                  */
    const ffnn_capture_scalars *scalars; /* while graph.c captures an adam(w) run:
                                 its table of per-step scalars; else NULL        */
} ffnn_step_ext;

/* Everything a strategy runs steps over: the model, the backend context, the
 * device buffers and the training data. Owned by the trainer (src/train); the
 * strategies read it and write only the buffers, the plan and ext. */
typedef struct ffnn_run {
    ffnn_model *model;        /* the net trained (layers, offsets; host params) */
    const ffnn_train_config *cfg; /* the trainer's configuration               */
    const ffnn_backend_ops *ops;  /* the backend's ops table                   */
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
    ffnn_comm *comm;          /* data parallelism: this rank's communicator, or NULL
                                 (one process). Each step then computes this rank's
                                 shard of the batch (ffnn_shard_range) and sums the
                                 gradients over the ranks before the update      */
    size_t steps_per_epoch;   /* ceil(train count / batch_size): the schedule's epochs */
    const ffnn_plateau *plateau; /* reduce-on-plateau's state (the trainer's)    */
    ffnn_step_plan plan;      /* which variant of each phase runs               */
    ffnn_step_ext ext;        /* the features' state (all NULL: none on)        */
} ffnn_run;

/* The trainer wrote r->params from the host: the shadow must be made again. */
void ffnn_run_params_changed(ffnn_run *r);

/* The optimizer step t (1-based over the run) with the schedule's learning rate
 * (core/schedule.h): what every strategy applies at that step. */
ffnn_optimizer_step ffnn_run_update_at(const ffnn_run *r, uint64_t t);

/* Where gather reads the device copy d. */
ffnn_gather_source ffnn_step_gather_source(const ffnn_device_data *d);

/* Batch size of step s (0-based) of an epoch of n samples: the last may be short. */
size_t ffnn_step_batch(size_t n, size_t batch_size, size_t s);

/* Forward pass of `batch` rows already gathered into r->x; *output [batch, out]
 * is the last layer's activation buffer. t: the optimizer step whose dropout
 * masks apply (core/dropout.h), or 0: evaluation, no dropout. */
ffnn_status ffnn_step_forward(ffnn_run *r, size_t batch, uint64_t t, float **output);

/* Backward pass from d(output) in r->grad_buf[0]; writes every layer's dW, db
 * into r->grads. t: as the forward's (the same masks). sgd (only when
 * r->plan.fused_sgd, else NULL): every parameter is updated too, p -= lr g (by the
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
 * r->ext.spare, each step but the last also gathers the next step's batch on the
 * backend's second stream after its forward pass (the same values: the bits of the
 * run do not change). */
ffnn_status ffnn_step_queue_run(ffnn_run *r, size_t first, size_t count, uint64_t opt_t);

#endif
