/* head.h - the output layer and its loss as one op (r->ext.head): the
 * strategies' face of step_head.c. */
#ifndef FFNN_STRATEGY_HEAD_H
#define FFNN_STRATEGY_HEAD_H

#include "strategy/step.h"

/* The head op's scratch (r->ext.head), owned by step_head.c. */
struct ffnn_head {
    float *scratch;           /* [ffnn_head_scratch_floats(batch_size, in, C)]   */
};

/* 1 when r's training steps can run the output layer and its loss as one op
 * (backend.h softmax_ce_head): the backend has it, r runs the fused dense ops
 * (with fused_sgd, the step updates the head's parameters: step_head.c ffnn_step_head,
 * step_update.c update_rest), softmax_ce on class labels, no data parallelism, the last layer
 * dense with identity activation, no dropout, at most FFNN_HEAD_CMAX outputs and
 * FFNN_HEAD_MAX_WEIGHTS weights, fed by a dense layer whose activation is
 * identity, relu, sigmoid or tanh, its width a multiple of 4, the weights 16-byte
 * aligned. */
int ffnn_step_head_applies(const ffnn_run *r);
/* Allocate r->ext.head when ffnn_step_head_applies (else leave it NULL);
 * errors as the backend's alloc. ffnn_step_head_free releases it. */
ffnn_status ffnn_step_head_create(ffnn_run *r);
void ffnn_step_head_free(ffnn_run *r);

#endif
