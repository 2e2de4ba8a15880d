/* op_table.h - the harness of the op table (test_ops.c, test_ops_elementwise.c): the
 * targets (backend x variant x precision contexts), an entry's buffers on a target,
 * the comparison against the reference with a tolerance per output, and a group's
 * one line per entry. */
#ifndef FFNN_OP_TABLE_H
#define FFNN_OP_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "check.h"
#include "test_numeric.h"

enum { MAX_TARGETS = 32 };

typedef struct target {
    const ffnn_backend_ops *ops;
    void *ctx;
    char variant[24];         /* "avx2/3t", "tiled", "cublaslt", ...                */
    ffnn_precision precision; /* the context's options.precision                   */
    ffnn_precision plain;     /* what dense_forward/backward run in: the library's
                                 precision, fp32 for the own kernels (backend.h)    */
    int host;                 /* host memory: element-wise ops give the reference's bits */
    int elementwise;          /* the one target per backend for the non-matmul ops */
} target;

typedef struct targets {
    target t[MAX_TARGETS];
    size_t n;
    char skips[16][160]; /* why a backend or variant is not here */
    size_t nskips;
} targets;

/* The buffers of one entry on one target (device) and on the host; pool_free
 * releases them whatever the outcome. */
enum { POOL_MAX = 48 };
typedef struct pool {
    const target *t;
    void *dev[POOL_MAX];
    size_t ndev;
    void *host[POOL_MAX];
    size_t nhost;
    int failed; /* an allocation or copy failed (the message: ffnn_last_error) */
} pool;

/* |got - want| <= atol + rtol |want| + srel S; all 0: the same bits. */
typedef struct tol {
    double atol, rtol, srel;
} tol;

/* The same bits. */
#define OP_BITS ((tol){0, 0, 0})

/* What one entry compared: the worst over all its outputs. */
typedef struct result {
    double max_abs, max_rel, worst; /* worst: max |diff| / bound (bits: 0 or inf) */
    tol shown;                      /* the tolerance of the worst output            */
    int compared;                   /* outputs compared so far                      */
    int ok;
} result;

#define RESULT_INIT ((result){.ok = 1})

/* One group (a test): counts, and its line per entry. */
typedef struct group {
    targets T; /* the targets, made by group_begin, freed by group_end */
    const char *op;
    size_t entries, failed, skipped;
    uint64_t seed;
    rng r;
} group;

/* Each target t of group g for which `filter` (an expression of t) holds. */
#define FOR_TARGETS(g, t, filter)                                                                  \
    for (const target *t = (g)->T.t; t < (g)->T.t + (g)->T.n; t++)                                 \
        if (filter)

/* The targets of this machine (omp kernel sets x threads, cuda variants x precisions),
 * a line per backend or variant left out (and why). */
void op_targets_make(targets *T);

/* Their contexts destroyed. */
void op_targets_free(targets *T);

/* Every buffer of p released (whatever the outcome of the entry). */
void op_pool_free(pool *p);

/* A host buffer of bytes (at least 1), owned by the pool. */
void *op_hbuf(pool *p, size_t bytes);

/* n floats of op_hbuf. */
float *op_hf32(pool *p, size_t n);

/* A device buffer of bytes: a copy of src, or 0xFF bytes (NaN) when src is NULL. */
void *op_dbuf(pool *p, const void *src, size_t bytes);

/* A new host copy of bytes of device buffer d (NULL on error). */
void *op_fetch(pool *p, const void *d, size_t bytes);

/* n floats of op_fetch. */
float *op_fetch_f32(pool *p, const void *d, size_t n);

/* The matmul bound of a precision over a summed length K (test_ops.c's header). */
tol op_matmul_tol(ffnn_precision p, size_t K);

/* *r = RESULT_INIT. */
void op_result_init(result *r);

/* Compare n floats (S may be NULL: 0) into r; prints the first fault. */
void op_compare(result *r, const char *what, const float *got, const float *want, const float *S,
                size_t n, tol t);

void op_compare_u8(result *r, const char *what, const uint8_t *got, const uint8_t *want, size_t n);

void op_group_begin(group *g, const char *op, uint64_t seed);

void op_entry_line(group *g, const char *op, const target *t, ffnn_precision prec,
                   const char *shape, double flops, const result *r);

/* 1 when a host buffer of hp could not be had: counted as a failure of g, hp freed. */
int op_host_failed(group *g, pool *hp);

test_result op_group_end(group *g, char *why, size_t why_size);

/* One "skip" line per backend of g's targets none of whose targets `runs`. */
void op_say_missing(group *g, int (*runs)(const target *t));

/* The call's status into r (a failed call fails the entry, with its message). */
int op_call_ok(result *r, const char *what, ffnn_status st);

/* A pool's failure (an allocation or copy) into r. */
void op_pool_check(result *r, const pool *p);

int op_any_low_precision(const targets *T);

const char *op_precision_name(ffnn_precision p);

/* The activations of the fused ops: identity, relu, sigmoid, tanh (each
 * 1-Lipschitz: the matmul bound holds after it). */
extern const ffnn_activation op_fused_acts[4];

/* "BATCHxIN->OUT" into buf. */
void op_shape_text(char *buf, size_t size, dense_shape s);

#endif
