/*
 * eval.c - evaluation of the trainer's model on a data set (its own device copy,
 * cached), the host <-> device model copies, and the exact-gradient hook of the
 * gradient check and parity tests (train_internal.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "data/dataset.h"
#include "train/train_internal.h"
#include "train/trainer.h"

/* The loss's float targets for a batch gathered from d: the run's tgt, or NULL
 * with labels. */
static const float *batch_targets(const ffnn_run *r, const ffnn_device_data *d)
{
    return d->targets ? r->tgt : NULL;
}

/* 1 unless data has a float target other than 0 and 1 (regression: no accuracy). */
static int only_zero_one(const ffnn_dataset *data)
{
    for (size_t i = 0; data->targets && i < data->count * data->target_width; i++)
        if (data->targets[i] != 0.0f && data->targets[i] != 1.0f)
            return 0;
    return 1;
}

/* data fits the trainer's model and loss (ffnn_trainer_evaluate's checks). */
static ffnn_status check_eval_data(const ffnn_trainer *t, const ffnn_dataset *data)
{
    const ffnn_model *m = t->run.model;
    if (!data || data->count == 0)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "evaluate: empty data set");
    if (data->features != m->input_size)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "evaluate: the network takes %zu inputs, the data has %zu features",
                         m->input_size, data->features);
    size_t width = m->layers[m->layer_count - 1].out;
    if (data->target_width && (t->cfg.loss == FFNN_LOSS_SOFTMAX_CE ||
                               data->target_width != width))
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "evaluate: the data has %zu float targets per sample; loss %s with "
                         "%zu outputs needs class labels or %zu targets", data->target_width,
                         ffnn_loss_name(t->cfg.loss), width, width);
    if (t->cfg.loss == FFNN_LOSS_SOFTMAX_CE && (size_t)data->classes > width)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT,
                         "evaluate: the data has labels up to %d, the network %zu outputs",
                         data->classes - 1, width);
    return FFNN_OK;
}

ffnn_status ffnn_trainer_set_validation(ffnn_trainer *t, const ffnn_dataset *val)
{
    ffnn_status st;
    if (!t)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_trainer_set_validation: NULL trainer");
    if (val && (st = check_eval_data(t, val)) != FFNN_OK)
        return ffnn_fail_context(st, "validation set");
    t->val = val;
    return FFNN_OK;
}

ffnn_status ffnn_trainer_evaluate(ffnn_trainer *t, const ffnn_dataset *data, double *loss,
                                  double *accuracy)
{
    ffnn_status st;
    if (!t || !loss || !accuracy)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_trainer_evaluate: NULL argument");
    if ((st = check_eval_data(t, data)) != FFNN_OK)
        return st;
    size_t width = t->run.model->layers[t->run.model->layer_count - 1].out;
    /* evaluation has its own device copy (in file order), cached by data set */
    ffnn_device_data *d = &t->eval;
    if (d->host != data) {
        ffnn_device_data_free(t, d);
        if ((st = ffnn_device_data_upload(t, data, d)) != FFNN_OK)
            return st;
    }
    size_t n = data->count;
    /* with EMA on, the EMA weights are the model evaluated (the forward reads
     * run.params: pointed at them for the loop) */
    float *trained = t->run.params;
    if (t->run.ema)
        t->run.params = t->run.ema;
    st = FFNN_OK;
    for (size_t first = 0; first < n && st == FFNN_OK; first += t->cfg.eval_batch_size) {
        size_t batch = n - first < t->cfg.eval_batch_size ? n - first : t->cfg.eval_batch_size;
        float *output;
        const ffnn_gather_source src = ffnn_step_gather_source(d);
        if ((st = t->run.ops->gather(t->run.ctx, &src, d->index + first, batch, t->run.x, t->run.y,
                                     t->run.tgt)) ||
            (st = ffnn_step_forward(&t->run, batch, 0, &output)) ||
            (st = t->run.ops->loss(t->run.ctx, t->cfg.loss, output, t->run.y,
                                   batch_targets(&t->run, d), batch, width, NULL,
                                   d->row_loss + first, d->row_correct + first)))
            break;
    }
    t->run.params = trained;
    if (st != FFNN_OK)
        return st;
    float *rows = malloc(n * sizeof *rows);
    uint8_t *correct = malloc(n);
    if (!rows || !correct) {
        free(rows);
        free(correct);
        return ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    }
    if ((st = t->run.ops->download(t->run.ctx, rows, d->row_loss, n * sizeof *rows)) == FFNN_OK &&
        (st = t->run.ops->download(t->run.ctx, correct, d->row_correct, n)) == FFNN_OK) {
        size_t right = 0;
        for (size_t i = 0; i < n; i++)
            right += correct[i];
        *loss = ffnn_mean_of(rows, n);
        *accuracy = only_zero_one(data) ? (double)right / (double)n : NAN;
    }
    free(rows);
    free(correct);
    return st;
}

ffnn_status ffnn_trainer_sync_model(ffnn_trainer *t)
{
    if (!t)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_trainer_sync_model: NULL trainer");
    /* with EMA on, the EMA weights are the model */
    ffnn_status st = t->run.ops->download(t->run.ctx, t->run.model->params,
                                          t->run.ema ? t->run.ema : t->run.params,
                                          t->run.model->parameter_count * sizeof(float));
    if (st == FFNN_OK)
        t->run.model->stale = 0;
    return st;
}

/* The model's sync hook (core/model.h): the trainer's parameters into the model. */
ffnn_status ffnn_trainer_sync_hook(void *trainer)
{
    return ffnn_trainer_sync_model(trainer);
}

ffnn_status ffnn_trainer_evaluate_metrics(ffnn_trainer *t, const ffnn_dataset *data,
                                          ffnn_metrics *metrics, uint64_t *confusion)
{
    if (!t)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "ffnn_trainer_evaluate_metrics: NULL "
                         "trainer");
    ffnn_status st = ffnn_model_sync(t->run.model);
    if (st != FFNN_OK)
        return st;
    return ffnn_model_evaluate_metrics(t->run.model, data, t->cfg.eval_batch_size,
                                       metrics, confusion);
}

ffnn_status ffnn_trainer_upload_model(ffnn_trainer *t)
{
    ffnn_run_params_changed(&t->run); /* the bf16 shadow, if any, is made again */
    return t->run.ops->upload(t->run.ctx, t->run.params, t->run.model->params,
                          t->run.model->parameter_count * sizeof(float));
}

ffnn_status ffnn_trainer_gradient(ffnn_trainer *t, const int32_t *rows, size_t batch,
                                  double *loss, float *grads)
{
    return ffnn_trainer_gradient_dropout(t, rows, batch, 0, loss, grads);
}

ffnn_status ffnn_trainer_gradient_dropout(ffnn_trainer *t, const int32_t *rows, size_t batch,
                                          uint64_t dropout_step, double *loss, float *grads)
{
    const ffnn_model *m = t->run.model;
    if (batch < 1 || batch > t->run.capacity)
        return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "gradient: batch %zu outside [1, %zu]",
                         batch, t->run.capacity);
    for (size_t i = 0; i < batch; i++)
        if (rows[i] < 0 || (size_t)rows[i] >= t->run.train.host->count)
            return ffnn_fail(FFNN_ERR_INVALID_ARGUMENT, "gradient: row %d out of range",
                             rows[i]);
    int32_t *index = NULL;   /* [batch] device */
    float *row_loss = NULL;  /* [batch] device */
    uint8_t *row_correct = NULL; /* [batch] device: unread, but cuda's loss writes it */
    float *host_rows = malloc(batch * sizeof *host_rows);
    size_t width = m->layers[m->layer_count - 1].out;
    const ffnn_gather_source src = ffnn_step_gather_source(&t->run.train);
    float *output;
    ffnn_status st = host_rows ? FFNN_OK : ffnn_fail(FFNN_ERR_NO_MEMORY, "out of memory");
    if (st == FFNN_OK &&
        !((st = ffnn_trainer_alloc(t, &index, batch, sizeof *index)) ||
          (st = ffnn_trainer_alloc(t, &row_loss, batch, sizeof *row_loss)) ||
          (st = ffnn_trainer_alloc(t, &row_correct, batch, sizeof *row_correct)) ||
          (st = t->run.ops->upload(t->run.ctx, index, rows, batch * sizeof *index)) ||
          (st = t->run.ops->gather(t->run.ctx, &src, index, batch, t->run.x, t->run.y,
                                   t->run.tgt)) ||
          (st = ffnn_step_forward(&t->run, batch, dropout_step, &output)) ||
          (st = t->run.ops->loss(t->run.ctx, t->cfg.loss, output, t->run.y,
                                 batch_targets(&t->run, &t->run.train), batch, width,
                                 t->run.grad_buf[0], row_loss, row_correct)) ||
          (t->run.train.weights &&
           (st = t->run.ops->weights->loss_weights(t->run.ctx, t->run.train.weights, index, batch, width,
                                          t->run.grad_buf[0]))) ||
          (st = ffnn_step_backward(&t->run, batch, dropout_step, NULL)) ||
          (st = t->run.ops->download(t->run.ctx, host_rows, row_loss, batch * sizeof *host_rows)) ||
          (grads && (st = t->run.ops->download(t->run.ctx, grads, t->run.grads,
                                               m->parameter_count * sizeof *grads)))))
        *loss = ffnn_weighted_mean_of(host_rows, rows, t->run.train.host->weights, batch);
    ffnn_trainer_release(t, index);
    ffnn_trainer_release(t, row_loss);
    ffnn_trainer_release(t, row_correct);
    free(host_rows);
    return st;
}

