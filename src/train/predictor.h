/* predictor.h - what the library's own inference paths (predict.c) use of the
 * predictor besides the public calls (include/ffnn.h ffnn_predictor_*). */
#ifndef FFNN_TRAIN_PREDICTOR_H
#define FFNN_TRAIN_PREDICTOR_H

#include "ffnn.h"

/* The network on x [batch, in] (host) -> y [batch, out] (host), in chunks of
 * max_batch rows; standardize 1: x is in the data's units and the model's
 * standardisation is applied first (x itself is not written). */
ffnn_status ffnn_predictor_forward_raw(ffnn_predictor *p, const float *x, size_t batch,
                                       int standardize, float *y);

/* An ensemble's predictor (core/ensemble.c) gives, whatever standardize says,
 * the mean over its members of each member's outputs read as the loss reads
 * them (each member's standardisation applied): y are probabilities (ce, bce)
 * or outputs in the targets' units (mse). 1 when p is one. */
int ffnn_predictor_is_ensemble(const ffnn_predictor *p);

/* A plain model's outputs o [batch, width] read as loss reads them, in place:
 * regression (mse) outputs into the targets' units, softmax / sigmoid
 * probabilities (predict.c). */
void ffnn_predict_read_rows(const ffnn_model *m, ffnn_loss loss, float *o, size_t batch);

/* The multiply-adds a lane needs before a job of few rows is split by output
 * columns (default COLUMN_MIN_WORK in predictor.c; 1: whenever rows < lanes).
 * For tests, which force the column split on small nets. */
void ffnn_predictor_set_column_work(ffnn_predictor *p, size_t min_work);

#endif
