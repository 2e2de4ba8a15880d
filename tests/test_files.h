/* test_files.h - file and temporary-directory helpers shared by the test suites. */
#ifndef FFNN_TEST_FILES_H
#define FFNN_TEST_FILES_H

#include <stddef.h>
#include <stdint.h>

#include "check.h"

/* A file's bytes. */
typedef struct blob {
    uint8_t *data; /* [size], malloc'd */
    size_t size;
} blob;

/* The whole of path into *b (caller frees b->data); 0 on success. */
int test_read_file(const char *path, blob *b);
/* Write n bytes to path (truncating), flushed and fsync'ed; 0 on success. */
int test_write_file(const char *path, const void *bytes, size_t n);
/* 1 when a and b hold the same bytes. */
int test_same_blob(const blob *a, const blob *b);
/* path [size] = dir/name, and text (a C string, without its NUL) written there as
 * by test_write_file; 0 on success. */
int test_write_text_in(const char *dir, const char *name, const char *text, char *path,
                       size_t size);
/* 1 when the files at a and b hold the same bytes, 0 when not, -1 when either
 * cannot be read. */
int test_same_files(const char *a, const char *b);
/* A safetensors file at path: the 8-byte little-endian header length, header (a
 * C string, padded to a multiple of 8 with spaces), then data [n]; 0 on success. */
int test_write_safetensors(const char *path, const char *header, const void *data, size_t n);
/* One F32 tensor of a safetensors header, a string literal:
 * "name":{"dtype":"F32","shape":shape,"data_offsets":offsets} (shape and offsets
 * JSON arrays as string literals: TEST_TENSOR_F32("layers.0.bias", "[2]", "[24,32]")). */
#define TEST_TENSOR_F32(name, shape, offsets)                                     \
    "\"" name "\":{\"dtype\":\"F32\",\"shape\":" shape ",\"data_offsets\":" offsets "}"

/* Entries of dir other than . and .. (-1 when it cannot be read). */
int test_count_entries(const char *dir);
/* Entries of dir whose name contains needle (NULL: test_count_entries). */
int test_count_entries_with(const char *dir, const char *needle);

/* Run argv[0] with argv (stdout and stderr kept, flushed first): its exit status, or
 * -1 when it could not run or was killed. */
int test_run_argv(char *const argv[]);
/* The same with stdout into out_path and stderr into err_path (the same file when
 * the same path; NULL: inherited); argv[0] is looked up on PATH when it has no '/'.
 * A signal that killed it is printed. */
int test_run_argv_to(char *const argv[], const char *out_path, const char *err_path);
/* Fork a child that calls save(arg) over and over, SIGKILL it after us
 * microseconds (stdout and stderr flushed first), and reap it: a writer killed at a
 * random point of a save. 0, or -1 when the fork failed (errno set). */
int test_kill_writer(void (*save)(void *arg), void *arg, long us);
/* Remove dir and the files in it (one level). */
void test_remove_dir(const char *dir);

/* The next row of the noisy two-class data of the early-stopping tests (test_tabular.c's
 * CSV, test_checkpoint.c's sets): r[0..3] uniform in [0, 1) from the LCG state *s
 * (start at 12345; advanced), r[3] a hidden draw; returns the class, 1 when r[0] +
 * 0.6 r[3] > 0.8. */
int test_noisy_row(uint64_t *s, double r[4]);

/* Run body in a fresh directory /tmp/ffnn-test-PREFIX-XXXXXX, removed afterwards. */
typedef test_result (*test_dir_body)(const char *dir, char *why, size_t why_size);
test_result test_in_tmpdir(const char *prefix, test_dir_body body, char *why,
                           size_t why_size);

/* Define test_NAME as body_NAME run in a temporary directory (prefix: the suite). */
#define TEST_DIR_CASE(test, prefix, name)                                         \
    static test_result body_##name(const char *dir, char *why, size_t why_size);  \
    static test_result test_##name(char *why, size_t why_size)                    \
    {                                                                             \
        return test_in_tmpdir(prefix, body_##name, why, why_size);                \
    }                                                                             \
    TEST_CASE(test, test_##name);                                                 \
    static test_result body_##name(const char *dir, char *why, size_t why_size)

#define UNUSED_WHY() ((void)why, (void)why_size)

#endif
