/* xt.h - x prepared for the weight gradient (r->ext.xt), owned by xt.c. */
#ifndef FFNN_STRATEGY_XT_H
#define FFNN_STRATEGY_XT_H

#include "strategy/step.h"

/* x and the hidden layers' outputs prepared for the weight gradient (backend.h
 * prepare_xt: x^T, or tf32x3's split x^T), owned by xt.c. */
struct ffnn_xt {
    float *x;                 /* [parts * input_size * batch_size]: x prepared
                                 for layer 0's weight gradient, made by the step's
                                 gather                                         */
    float **act;              /* [layer_count] -> [parts * layer.out *
                                 batch_size]: act[i] prepared so, made on the side
                                 queue after layer i's forward where layer i + 1's
                                 weight gradient takes it, else NULL (or act NULL) */
    size_t parts;             /* floats per element in x and act: backend.h
                                 dense_backward_wants_xt at layer 0 (1 or 3)      */
};

/* r->ext.xt (per_op.c's cublaslt prepare): made where the backend's
 * dense_backward_wants_xt says layer 0's weight gradient runs faster from x prepared
 * (x^T; tf32x3: its split x^T) at
 * batch_size (fp32 ops, dense layer 0 without dropout), else left NULL; with it,
 * its act for each dense hidden layer above it (not the head's) that takes x^T
 * too, when the backend has a second stream. Before the graph cache (r->ext.spare takes
 * an xt then). Errors as the backend's alloc (nothing left allocated).
 * ffnn_step_xt_free releases them. */
ffnn_status ffnn_step_xt_create(ffnn_run *r);
void ffnn_step_xt_free(ffnn_run *r);
/* Layer i's input prepared for its weight gradient at this batch, or NULL (xt.c). */
float *ffnn_xt_for_layer(const ffnn_run *r, int i, size_t batch);

#endif
