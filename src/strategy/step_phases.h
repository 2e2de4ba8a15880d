/* step_phases.h - the phases of the shared step (step.h), private to src/strategy.
 * One file per phase, each op's variants (fp32 plain, fused, bf16) side by side;
 * the calls go one way, down this list:
 *   step.c           the driver: gather, the queue of one step and of a run of
 *                    steps (with prefetch.c's second set of batch buffers)
 *   step_backward.c  the backward pass (plain, fused, bf16) and the all-reduce buckets
 *   step_update.c    the optimizer stage (after the backward, early on the second
 *                    stream, or what fused sgd leaves)
 *   step_head.c      the output layer and its loss as one op
 *   step_forward.c   the forward pass (plain, fused, bf16)
 *   step_common.c    what the phases share: dropout, the second stream, where a
 *                    bias gradient is summed
 * and the features they call through their narrow interfaces: mixed.c (the bf16
 * buffers), xt.c (x prepared for the weight gradient), prefetch.c. */
#ifndef FFNN_STRATEGY_STEP_PHASES_H
#define FFNN_STRATEGY_STEP_PHASES_H

#include "strategy/step.h"

/* The gradient all-reduce of a backward pass (r->comm): buckets of layers,
 * last layer first, each begun once its layers' gradients are written. */
typedef struct ffnn_grad_sync {
    ffnn_comm *comm;
    float scale;       /* this rank's share of the batch: its rows / the step's rows */
    void *stream;      /* the backend's native stream (device comms), else NULL       */
    size_t pending;    /* the gradients [layer's weight_offset, pending) not reduced  */
} ffnn_grad_sync;


/* The update of a step's layers on the second stream, each as soon as its gradients
 * are complete (after its own backward op: the layers above it are done, its db
 * was summed by then), while the layers below run their backward on the main
 * queue; layer 0's update waits for the end of the backward (queue_step). For
 * the update after the backward (not fused_sgd), without clipping or
 * all-reduce, which need every gradient first. */
typedef struct ffnn_early_plan {
    const ffnn_optimizer_step *update; /* NULL: off                           */
    int from;                          /* layers [from, L) queued so far     */
    int *side;                         /* set to 1 once the second stream has work */
} ffnn_early_plan;


/* step_common.c */
ffnn_status ffnn_step_dropout(ffnn_run *r, int i, uint64_t t, const float *in, float *out,
                              size_t n);
int ffnn_step_has_side(const ffnn_run *r);
ffnn_status ffnn_step_side_open(ffnn_run *r, int *pending);
ffnn_status ffnn_step_side_close(ffnn_run *r, ffnn_status st);
float *ffnn_step_below_db(const ffnn_run *r, int i);
int ffnn_step_db_from_above(const ffnn_run *r, int i, int head);

/* step_forward.c: the first `layers` layers (step.c queue_step; xt_side: xt.c) */
ffnn_status ffnn_step_forward_layers(ffnn_run *r, size_t batch, uint64_t t, float **output,
                                     int x16_gathered, int layers, int *xt_side);

/* step_head.c */
int ffnn_step_head_runs(const ffnn_run *r, uint64_t t);
int ffnn_step_head_sums_apart(const ffnn_run *r);
ffnn_status ffnn_step_head(ffnn_run *r, size_t batch, uint64_t t, size_t first,
                           const ffnn_optimizer_step *sgd, int *side, int *xt_side);

/* step_update.c */
ffnn_status ffnn_step_update_layers(ffnn_run *r, const ffnn_optimizer_step *update, int lo,
                                    int hi);
int ffnn_step_rest_to_update(const ffnn_run *r, int head);
ffnn_status ffnn_step_queue_rest(ffnn_run *r, const ffnn_optimizer_step *sgd, int head,
                                 int *side);
ffnn_status ffnn_step_queue_early(ffnn_run *r, ffnn_early_plan *e, int i);

/* step_backward.c */
ffnn_status ffnn_step_sync_layer(ffnn_grad_sync *g, ffnn_run *r, int i);
ffnn_status ffnn_step_backward_pass(ffnn_run *r, size_t batch, uint64_t t,
                                    const ffnn_optimizer_step *sgd, ffnn_grad_sync *sync,
                                    int *side, ffnn_early_plan *early, int *xt_side);

#endif
