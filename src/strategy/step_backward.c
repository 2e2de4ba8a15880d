/* step_backward.c - the backward pass of the step (step.h, step_phases.h): the
 * plain ops, the fused dense ops (with sgd inside), the bf16 pipeline, and the
 * buckets of the gradient all-reduce. */
#include "core/error.h"
#include "strategy/mixed.h"
#include "strategy/step_phases.h"
#include "strategy/xt.h"

/* After layer i's backward: begin the all-reduce of the layers done since the
 * last bucket once they hold FFNN_BUCKET_BYTES, or at the first layer. */
ffnn_status ffnn_step_sync_layer(ffnn_grad_sync *g, ffnn_run *r, int i)
{
    size_t begin = i == 0 ? 0 : r->model->layers[i].weight_offset;
    if (i != 0 && (g->pending - begin) * sizeof(float) < FFNN_BUCKET_BYTES)
        return FFNN_OK;
    ffnn_status st = g->comm->ops->allreduce_begin(g->comm, r->grads + begin, g->pending - begin,
                                                   g->scale, g->stream);
    g->pending = begin;
    return st;
}

/* 1 when layer i's weight gradient may run on the second stream, beside the layer
 * below's f' and weight gradient (the ops' dw_side; *side then 1: the caller joins
 * before the step ends): layer 1 only, whose dz buffer no later op of the
 * backward writes (layer 0 has no dx) and whose input and weights none touches
 * before the join; not under data parallelism (the all-reduce reads dW on the
 * main stream) nor for a caller without a join (side NULL). */
static int weight_grad_beside(const ffnn_run *r, int i, const ffnn_grad_sync *sync, int *side)
{
    if (i != 1 || sync != NULL || side == NULL || !ffnn_step_has_side(r))
        return 0;
    *side = 1;
    return 1;
}

/* The backward pass in bf16 (ffnn_mixed), from the fp32 d(output) in grad_buf[0]:
 * the output layer's f' in fp32 (its saved output is the fp32 act[L-1]), then one
 * rounding into grad16[0] (rows ffnn_bf16_ld(out) apart: 16-byte rows for the
 * tensor cores); each layer's op writes dW, db (fp32) and the next
 * layer's dz in bf16 (grad16 ping-pong); sync as backward's. No update here: the
 * pipeline's update writes the bf16 shadows too, after the backward (per_op.c). */
static ffnn_status backward_bf16(ffnn_run *r, size_t batch, ffnn_grad_sync *sync, int head,
                                 ffnn_early_plan *early, int *side)
{
    const ffnn_model *m = r->model;
    ffnn_mixed *mx = r->ext.mixed;
    const ffnn_layer *top = &m->layers[m->layer_count - 1];
    ffnn_status st;
    int cur = 0; /* grad16[cur] holds dL/dz of layer i (rows dz_ld apart) */
    size_t dz_ld = ffnn_bf16_ld(top->out);
    int db_done = 0; /* layer i's db was summed by the op of layer i + 1 */
    int i = m->layer_count - 1;
    if (head) { /* the head wrote layer L-2's dz (rows of its width) and db */
        dz_ld = top->in;
        db_done = 1;
        i--;
    } else if ((top->act != FFNN_ACT_IDENTITY &&
                (st = r->ops->activation_backward(r->ctx, top->act, top->act_param,
                                                  r->act[m->layer_count - 1], r->grad_buf[0],
                                                  r->grad_buf[0], batch * top->out))) ||
               (st = r->ops->bf16->to_bf16(r->ctx, r->grad_buf[0], mx->grad16[0], batch, top->out,
                                     ffnn_bf16_ld(top->out)))) {
        return st;
    }
    for (; i >= 0; i--) {
        const ffnn_layer *l = &m->layers[i];
        const int has_b = l->has_bias;
        float *dx_db = ffnn_step_below_db(r, i);
        const int dw_side = weight_grad_beside(r, i, sync, side);
        if ((st = r->ops->bf16->dense_backward_bf16(
                 r->ctx, i == 0 ? mx->x16 : mx->act16[i - 1], mx->params16 + l->weight_offset,
                 mx->grad16[cur], dz_ld, i == 0 ? NULL : mx->grad16[1 - cur],
                 r->grads + l->weight_offset,
                 has_b && !db_done ? r->grads + l->bias_offset : NULL, dx_db, batch, l->in,
                 l->out, i == 0 ? FFNN_ACT_IDENTITY : m->layers[i - 1].act, dw_side)))
            return st;
        db_done = dx_db != NULL;
        cur = 1 - cur;
        dz_ld = l->in; /* the dx written above: rows of the layer's input width */
        if ((sync && (st = ffnn_step_sync_layer(sync, r, i)) != FFNN_OK) ||
            (st = ffnn_step_queue_early(r, early, i)) != FFNN_OK)
            return st;
    }
    return FFNN_OK;
}

/* What a layer's backward op reads and writes. */
typedef struct backward_io {
    const float *x; /* [batch, in] the input the forward saw                   */
    float *dz;      /* [batch, out] dL/dz (plain ops: dL/da with f' applied)    */
    float *dx;      /* [batch, in] dL/dx for the layer below, NULL for layer 0 */
    float *db;      /* [out] the bias gradient, or NULL (none, or summed above) */
} backward_io;

/* Layer i's plain backward op (dense, local1d or embedding): dW, db and dx from dz. */
static ffnn_status backward_plain(ffnn_run *r, int i, size_t batch, const backward_io *io)
{
    const ffnn_layer *l = &r->model->layers[i];
    float *W = r->params + l->weight_offset;  /* [out, fan_in] */
    float *dW = r->grads + l->weight_offset;  /* [out, fan_in] */
    const float *x = io->x;
    float *dz = io->dz, *dx = io->dx, *db = io->db;
    ffnn_status st;
    switch (l->kind) {
    case FFNN_LAYER_DENSE:
        st = r->ops->dense_backward(r->ctx, x, W, dz, dx, dW, db, batch, l->in, l->out);
        break;
    case FFNN_LAYER_LOCAL1D:
        st = r->ops->local1d_backward(r->ctx, x, W, dz, dx, dW, db, batch, l->in,
                                      l->spec.local1d.R, l->spec.local1d.padding);
        break;
    case FFNN_LAYER_EMBEDDING: /* layer 0: dW alone (the codes have no gradient) */
        st = r->ops->embedding_backward(r->ctx, x, dz, dW, batch, &l->spec.embedding);
        break;
    default:
        st = ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "layer %d: unknown kind %d", i,
                       (int)l->kind);
    }
    return st;
}

/* Layer i's fused dense backward op: act' of x in the dx epilogue, the bias
 * gradient below summed with it (ffnn_step_below_db), with sgd the update inside
 * (layer 0: what the ops leave queued first, ffnn_step_queue_rest), x prepared
 * for dW where the step made it (its second stream joined first), the weight
 * gradient beside where weight_grad_beside says so. */
static ffnn_status backward_fused(ffnn_run *r, int i, size_t batch, const backward_io *io,
                                  const ffnn_optimizer_step *sgd, int head,
                                  ffnn_grad_sync *sync, int *side, int *xt_side)
{
    const ffnn_model *m = r->model;
    const ffnn_layer *l = &m->layers[i];
    float *W = r->params + l->weight_offset;  /* [out, fan_in] */
    float *dW = r->grads + l->weight_offset;  /* [out, fan_in] */
    const float *x = io->x;
    float *dz = io->dz, *dx = io->dx, *db = io->db;
    ffnn_status st;
    const ffnn_activation x_act = i == 0 ? FFNN_ACT_IDENTITY : m->layers[i - 1].act;
    float *dx_db = ffnn_step_below_db(r, i);
    if (sgd && i == 0 && ffnn_step_rest_to_update(r, head) &&
        (st = ffnn_step_queue_rest(r, sgd, head, side)) != FFNN_OK)
        return st;
    const float *xt = xt_side ? ffnn_xt_for_layer(r, i, batch) : NULL; /* the step's */
    if (xt && i > 0 && *xt_side) { /* made on the second stream: joined first */
        if ((st = r->ops->side->side_join(r->ctx)) != FFNN_OK)
            return st;
        *xt_side = 0;
    }
    /* b: updated by the op with sgd, unless its db came from above */
    return r->ops->fused->dense_backward_fused(r->ctx, x, W, db ? r->params + l->bias_offset : NULL,
                                        dz, dx, dW, db, dx_db, batch, l->in, l->out, x_act,
                                        sgd, xt, weight_grad_beside(r, i, sync, side));
}

/* Backward pass from d(output) in grad_buf[0]; writes every layer's dW, db.
 * t: the optimizer step whose dropout masks the forward applied (0: none).
 * sgd (only when r->plan.fused_sgd, else NULL): the parameters are updated too, p -=
 * lr g: by the layers' ops, the rest by ffnn_step_queue_rest (side: as there).
 * sync (or NULL): the all-reduce of the gradients, begun bucket by bucket.
 * xt_side (or NULL: the step made no x^T, e.g. ffnn_step_backward's caller
 * gathered the batch itself): as forward's; the layers' ops take ffnn_xt_for_layer, a hidden
 * layer's joined first while *xt_side. */
ffnn_status ffnn_step_backward_pass(ffnn_run *r, size_t batch, uint64_t t,
                                    const ffnn_optimizer_step *sgd, ffnn_grad_sync *sync,
                                    int *side, ffnn_early_plan *early, int *xt_side)
{
    const ffnn_model *m = r->model;
    ffnn_status st;
    const int head = ffnn_step_head_runs(r, t); /* the last layer's backward ran in the head */
    if (ffnn_mixed_step(r, t))
        return backward_bf16(r, batch, sync, head, early, side);
    int cur = 0;       /* grad_buf[cur] holds dL/da of layer i ...             */
    int is_dz = head;  /* ... or dL/dz when the layer above applied act' already */
    for (int i = m->layer_count - 1 - head; i >= 0; i--) {
        const ffnn_layer *l = &m->layers[i];
        float *dz = r->grad_buf[cur]; /* [batch, out] */
        /* dropout: dL/da = dropout(dL/dd), the forward's mask (the fused ops are off
         * for nets with dropout: is_dz is 0 here) */
        if (t > 0 && l->has_dropout &&
            (st = ffnn_step_dropout(r, i, t, dz, dz, batch * l->out)))
            return st;
        /* f' from the saved value: z for the activations that need it, else a */
        if (!is_dz && l->act != FFNN_ACT_IDENTITY &&
            (st = r->ops->activation_backward(r->ctx, l->act, l->act_param,
                                              r->pre[i] ? r->pre[i] : r->act[i], dz, dz,
                                              batch * l->out)))
            return st;
        const float *x = i == 0                                    ? r->x
                         : t > 0 && m->layers[i - 1].has_dropout ? r->drop[i - 1]
                                                                    : r->act[i - 1];
        /* x [batch, in]: the input the forward saw */
        float *dx = i == 0 ? NULL : r->grad_buf[1 - cur];
        const int db_done = ffnn_step_db_from_above(r, i, head); /* the op above summed db */
        float *db = l->has_bias && !db_done ? r->grads + l->bias_offset : NULL;
        is_dz = 0;
        if (r->plan.fused && l->kind == FFNN_LAYER_DENSE) { /* act' of x in the dx epilogue */
            const backward_io io = {x, dz, dx, db};
            if ((st = backward_fused(r, i, batch, &io, sgd, head, sync, side, xt_side)))
                return st;
            is_dz = 1;
            cur = 1 - cur;
            if ((sync && (st = ffnn_step_sync_layer(sync, r, i)) != FFNN_OK) ||
                (st = ffnn_step_queue_early(r, early, i)) != FFNN_OK)
                return st;
            continue;
        }
        const backward_io io = {x, dz, dx, db};
        st = backward_plain(r, i, batch, &io);
        if (st != FFNN_OK || (sync && (st = ffnn_step_sync_layer(sync, r, i)) != FFNN_OK) ||
            (st = ffnn_step_queue_early(r, early, i)) != FFNN_OK)
            return st;
        cur = 1 - cur;
    }
    return FFNN_OK;
}

ffnn_status ffnn_step_backward(ffnn_run *r, size_t batch, uint64_t t,
                               const ffnn_optimizer_step *sgd)
{
    return ffnn_step_backward_pass(r, batch, t, sgd, NULL, NULL, NULL, NULL);
}
