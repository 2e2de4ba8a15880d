/* modular.h - what the parts of `ffnn bench modular` share (modular.c: options, rows,
 * part a - training - the output and the suite; modular_step.c: parts b - one step op
 * by op - and c - the reduction lab - on the GPU): the options, the rows, the ops of
 * part b. */
#ifndef FFNN_BENCH_MODULAR_H
#define FFNN_BENCH_MODULAR_H

#include <stddef.h>
#include <stdio.h>

#include "ffnn.h"
#include "harness.h"

#define MAX_LIST 16
#define MAX_REPEATS 1001
#define INNER 10        /* op copies between two events */
#define SPIN_US 300.0   /* GPU busy time queued ahead of them */
#define STEP_TOL 1e-4   /* part b: max |gpu - cpu| / max |cpu| */
#define LAB_TOL 1e-5    /* part c: relative error of the sum */
#define LAB_C 10
#define LR 0.01f       /* SGD's learning rate, every part (the seed's base code's) */


typedef struct options {
    int quick;
    const char *out, *data;
    int repeats, threads, cpu_full_epochs;
    int step_batch[MAX_LIST], n_step_batch;
    int lab_batch[MAX_LIST], n_lab_batch;
    int gpu, cpu;
    int seed;
} options;

typedef struct row {
    const char *part;    /* train | step | lab */
    char task[48];       /* points, binary, full_ce, full_mse | op | variant */
    char backend[24];    /* cuda_tiled | cpu_omp | cuda */
    char arch[48], loss[8];
    int batch, epochs, threads, repeats;
    double lr;
    long samples, test_samples, steps;
    double train_s, total_s, loss0, test_loss, test_acc;
    double us, us_min, us_max, err;
    double seed_value;   /* the seed's figure (NaN: none) */
    const char *seed_unit;
    char status[512];
    char device[224];
} row;

/* part a's data sets */
typedef struct data_sets {
    ffnn_dataset *points_train, *points_test;
    ffnn_dataset *full_train, *full_test, *bin_train, *bin_test;
    char image_skip[300]; /* why the image tasks are skipped ("" : loaded) */
} data_sets;

/* One run of the suite. */
typedef struct modular {
    ffnn_bench_run run;
    options o;
    data_sets d;
} modular;

/* A new row of part (train | step | lab), its numbers NaN, its device that of backend. */
row *mod_new_row(modular *s, const char *part, const char *task, const char *backend);
/* A row's status: "skipped: why" or "failed: why" for all rows of a part not measured. */
void mod_set_status(row *r, const char *status);

/* ------------------------------------------------------------ part b's ops */

enum {
    OP_GATHER, OP_FWD1, OP_RELU1, OP_FWD2, OP_RELU2, OP_FWD3, OP_LOSS, OP_BWD3, OP_RELUB2,
    OP_BWD2, OP_RELUB1, OP_BWD1, OP_SGD, N_OPS
};
/* the ops' names, and the seed's table 1.7 time of each (us; NaN: no counterpart) */
extern const char *const mod_op_names[N_OPS];
extern const double mod_op_seed_us[N_OPS];

/* Part b at batch B (modular_step.c), or its rows marked skipped (skip: why; a build
 * without CUDA: skipped). */
void mod_run_step_part(modular *s, size_t B, const char *skip);
/* Part c, or its rows marked skipped (skip: why). */
void mod_run_lab(modular *s, const char *skip);

#endif
