/* safetensors.h - the safetensors reader shared by model files (model_load.c)
 * and checkpoints (checkpoint.c); private to the library. docs/FORMATS.md has
 * the format and the order of the checks.
 *
 * Use: zero an st_reader, set path (and kind, for messages), call
 * ffnn_st_read_layout() - every check the safetensors format itself requires -
 * then look at root (the header's JSON) and tensors [count] (sorted by offset),
 * read data with ffnn_st_read_at(), and always ffnn_st_close(). */
#ifndef FFNN_IO_SAFETENSORS_H
#define FFNN_IO_SAFETENSORS_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "ffnn.h"
#include "core/model.h"
#include "io/atomic_file.h"

typedef struct st_dtype {
    const char *name; /* "F32", "F64", ...     */
    unsigned size;    /* bytes per element     */
} st_dtype;

/* One tensor entry of the header. */
typedef struct st_tensor {
    const char *name;     /* the header key (owned by the cJSON tree)           */
    const cJSON *shape;   /* the "shape" array (for messages)                   */
    const st_dtype *dtype;
    int rank;
    uint64_t dims[2];     /* the first two dimensions                           */
    int zero_dim;         /* index of the first zero dimension, -1 if none      */
    uint64_t begin, end;  /* data_offsets: bytes into the data section          */
    size_t param_offset;  /* where it goes in the model's arena (after matching) */
    int stat;             /* 1-4: a standardize.* tensor (ST_STAT_NAMES), 0: not */
} st_tensor;

typedef struct st_reader {
    const char *path;
    const char *kind;     /* what the file is, for messages ("model file" if NULL) */
    FILE *f;
    uint64_t file_size;
    uint64_t header_size; /* N                                                  */
    char *header;         /* [N + 1], NUL-terminated                             */
    cJSON *root;
    st_tensor *tensors;   /* [count], every key but "__metadata__"               */
    size_t count;
} st_reader;

/* Open r->path and check the layout: header length, UTF-8, one JSON object, no
 * duplicate top-level key, tensor entries, offsets tiling the data section. */
ffnn_status ffnn_st_read_layout(st_reader *r);
void ffnn_st_close(st_reader *r);

/* The file offset of the data section: 8 + N. */
uint64_t ffnn_st_data_start(const st_reader *r);

/* Read bytes [n] at a file offset (what: for the message). */
ffnn_status ffnn_st_read_at(st_reader *r, uint64_t offset, void *buf, size_t n,
                            const char *what);

/* FFNN_ERR_FORMAT "PATH: offset N: MESSAGE" / "PATH: header: MESSAGE". */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
ffnn_status ffnn_st_fail_at(const st_reader *r, uint64_t offset, const char *fmt, ...);
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
ffnn_status ffnn_st_fail(const st_reader *r, const char *fmt, ...);

/* A key given twice in obj is an error (where: for the message). */
ffnn_status ffnn_st_check_unique_keys(const st_reader *r, const cJSON *obj, const char *where);

/* The header's "__metadata__" object (*md, NULL when absent): FFNN_OK when it is an
 * object without a key given twice; else FFNN_ERR_FORMAT - missing: "missing
 * \"__metadata__\" (RECORDS)", records saying what the file keeps there. */
ffnn_status ffnn_st_metadata_object(const st_reader *r, const char *records, const cJSON **md);

/* What item is, for messages; a shape array as "[10, 784]". */
void ffnn_st_describe(const cJSON *item, char *buf, size_t size);
void ffnn_st_shape_text(const cJSON *shape, char *buf, size_t size);

/* t is layers.<i>.weight or layers.<i>.bias of m, F32, with the layer's shape:
 * sets t->param_offset and seen[2 i + is_bias]; else FFNN_ERR_FORMAT. */
ffnn_status ffnn_st_match_tensor(const st_reader *r, const ffnn_model *m, const char *arch,
                                 st_tensor *t, unsigned char *seen);

/* Little-endian float32 bytes [4 n] -> v [n] in place; the index of the first
 * non-finite value, or n. */
size_t ffnn_st_decode_f32(float *v, size_t n);

/* The header text of a file we write from its JSON (cJSON_PrintUnformatted):
 * padded with spaces to a multiple of 8 bytes, so that the data section is
 * 8-byte aligned; *text [*size] malloc'd. json is freed (cJSON_free) either way.
 * Errors: FFNN_ERR_NO_MEMORY. */
ffnn_status ffnn_st_pad_header(char *json, char **text, size_t *size);

/* The header of a file we write for model m: fill(root, arch, ctx) adds its keys
 * to a fresh JSON object (arch: m's architecture string; 1 on success, 0 when out
 * of memory), then ffnn_st_pad_header into *text [*size]. Errors:
 * FFNN_ERR_NO_MEMORY, naming what ("a checkpoint header"). */
typedef int (*ffnn_st_fill_fn)(cJSON *root, const char *arch, const void *ctx);
ffnn_status ffnn_st_build_header(const ffnn_model *m, ffnn_st_fill_fn fill, const void *ctx,
                                 const char *what, char **text, size_t *size);

/* The start of a file we write: the header's length [8] as a little-endian uint64,
 * then header [header_size]. Errors: ffnn_atomic_file_write's. */
ffnn_status ffnn_st_write_start(ffnn_atomic_file *af, const char *header, size_t header_size);

/* v [count] as little-endian float32, 4096 values at a time.
 * Errors: ffnn_atomic_file_write's. */
ffnn_status ffnn_st_write_f32(ffnn_atomic_file *af, const float *v, size_t count);

#endif
