/* test_safetensors.c - model files (safetensors) and inference on a loaded model.
 *
 *   - round trip: save, load, bit-identical parameters, metadata, 8-byte alignment;
 *   - crafted files: every malformed case of RELIABILITY.md 7-10 gets
 *     FFNN_ERR_FORMAT, *out untouched, and a message naming the file and the
 *     offset or the tensor/key, with what was expected and found;
 *   - faults: a full disk (RLIMIT_FSIZE in a forked child) and a missing
 *     directory leave the old file byte-identical and no temporary file; a
 *     child killed (SIGKILL) while saving leaves the old file or the new one;
 *   - PyTorch interop through tests/safetensors_interop.py (skipped when
 *     /usr/bin/python3 lacks numpy or torch);
 *   - ffnn_model_predict / ffnn_model_evaluate against hand-computed values.
 * Set FFNN_TEST_VERBOSE=1 to see each error message. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "test_fixtures.h"
#include "test_files.h"
#include "ffnn.h"

/* Debian's python3-torch installs for /usr/bin/python3; FFNN_PYTHON overrides. */
#define PYTHON (getenv("FFNN_PYTHON") && *getenv("FFNN_PYTHON") ? getenv("FFNN_PYTHON") \
                                                                : "/usr/bin/python3")
#define INTEROP_SCRIPT "tests/safetensors_interop.py"

/* ---------------------------------------------------------------- files */

/* ---------------------------------------------------------------- crafted files */

/* Model 3-2relu-2: layers.0.weight [2, 3] at [0, 24), layers.0.bias [2] at
 * [24, 32), layers.1.weight [2, 2] at [32, 48), layers.1.bias [2] at [48, 56). */
#define META "\"__metadata__\":{\"format\":\"ffnn-model\",\"arch\":\"3-2relu-2\",\"loss\":\"ce\"}"
#define W0 TEST_TENSOR_F32("layers.0.weight", "[2,3]", "[0,24]")
#define B0 TEST_TENSOR_F32("layers.0.bias", "[2]", "[24,32]")
#define W1 TEST_TENSOR_F32("layers.1.weight", "[2,2]", "[32,48]")
#define B1 TEST_TENSOR_F32("layers.1.bias", "[2]", "[48,56]")
#define VALID_HEADER "{" META "," W0 "," B0 "," W1 "," B1 "}"
#define DATA_BYTES 56

/* Value k of the crafted model's parameters (0.25 k - 1). */
static float crafted_value(size_t k) { return 0.25f * (float)k - 1.0f; }

/* data_size bytes of little-endian floats crafted_value(0), (1), ... */
static void crafted_data(uint8_t *out, size_t data_size)
{
    for (size_t k = 0; 4 * k < data_size; k++) {
        float v = crafted_value(k);
        uint32_t u;
        memcpy(&u, &v, 4);
        for (size_t b = 0; b < 4 && 4 * k + b < data_size; b++)
            out[4 * k + b] = (uint8_t)(u >> (8 * b));
    }
}

/* dir/name = the 8-byte length len_field, header [header_size], data_size
 * bytes of crafted data. 0 on success. */
static int craft_raw(const char *path, uint64_t len_field, const char *header,
                     size_t header_size, size_t data_size)
{
    size_t n = 8 + header_size + data_size;
    uint8_t *b = malloc(n);
    int rc;

    if (!b)
        return -1;
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(len_field >> (8 * i));
    memcpy(b + 8, header, header_size);
    crafted_data(b + 8 + header_size, data_size);
    rc = test_write_file(path, b, n);
    free(b);
    return rc;
}

/* dir/name: a well-formed length field for header (a C string). */
static int craft(const char *dir, const char *name, const char *header, size_t data_size,
                 char *path, size_t path_size)
{
    snprintf(path, path_size, "%s/%s", dir, name);
    return craft_raw(path, strlen(header), header, strlen(header), data_size);
}

static long long sentinel_object;
#define SENTINEL ((ffnn_model *)(void *)&sentinel_object)

/* Loading path fails with status want, leaves *out alone, and the message holds
 * the path and each non-NULL needle. */
static test_result expect_fail(const char *path, ffnn_status want, const char *needle1,
                               const char *needle2)
{
    ffnn_model *m = SENTINEL;
    ffnn_status st = ffnn_model_load(path, &m, NULL);
    const char *msg = ffnn_last_error();

    if (getenv("FFNN_TEST_VERBOSE"))
        fprintf(stderr, "    [%s] %s\n", ffnn_status_name(st), msg);
    CHECK(st == want, "status %d (%s), expected %d; message: %s", (int)st,
          ffnn_status_name(st), (int)want, msg);
    CHECK(m == SENTINEL, "*out was changed on error");
    CHECK(strstr(msg, path) != NULL, "message lacks the path %s: %s", path, msg);
    CHECK(!needle1 || strstr(msg, needle1), "message lacks \"%s\": %s", needle1, msg);
    CHECK(!needle2 || strstr(msg, needle2), "message lacks \"%s\": %s", needle2, msg);
    return TEST_PASS;
}

/* Craft header (+ data_size bytes) as dir/name and expect a format error. */
static test_result expect_crafted_fail(const char *dir, const char *name, const char *header,
                                       size_t data_size, const char *needle1,
                                       const char *needle2)
{
    char path[512];

    CHECK(craft(dir, name, header, data_size, path, sizeof path) == 0, "cannot write %s", name);
    return expect_fail(path, FFNN_ERR_FORMAT, needle1, needle2);
}

/* ---------------------------------------------------------------- valid files */

/* The crafted file loads: shapes, values in arena order, metadata. */
TEST_DIR_CASE("safetensors_crafted_valid", "st", crafted_valid)
{
    char path[512], arch[64];
    ffnn_model *m = NULL;
    ffnn_model_file_info info;

    UNUSED_WHY();
    CHECK(craft(dir, "ok", VALID_HEADER, DATA_BYTES, path, sizeof path) == 0, "cannot write");
    CHECK_OK(ffnn_model_load(path, &m, &info));
    ffnn_model_arch_string(m, arch, sizeof arch);
    CHECK(strcmp(arch, "3-2relu-2") == 0, "arch %s", arch);
    CHECK(ffnn_model_parameter_count(m) == 14, "%zu parameters", ffnn_model_parameter_count(m));
    for (size_t k = 0; k < 14; k++)
        CHECK(ffnn_model_parameters(m)[k] == crafted_value(k), "parameter %zu is %g", k,
              (double)ffnn_model_parameters(m)[k]);
    CHECK(info.loss == FFNN_LOSS_SOFTMAX_CE, "loss %d", (int)info.loss);
    CHECK(info.ffnn_version[0] == '\0', "version '%s' (absent in the file)", info.ffnn_version);
    ffnn_model_free(m);
    return TEST_PASS;
}

/* Tensors may come in any order, in the header and in the data section (the
 * safetensors package sorts them by dtype and name). */
TEST_DIR_CASE("safetensors_any_tensor_order", "st", any_tensor_order)
{
    /* data: b1 [0,8) w1 [8,24) b0 [24,32) w0 [32,56) */
    const char *header = "{" TEST_TENSOR_F32("layers.1.bias", "[2]", "[0,8]") ","
                         TEST_TENSOR_F32("layers.0.weight", "[2,3]", "[32,56]") ","
                         TEST_TENSOR_F32("layers.1.weight", "[2,2]", "[8,24]") ","
                         META ","
                         TEST_TENSOR_F32("layers.0.bias", "[2]", "[24,32]") "}";
    /* arena index of each data-section float: b1 = 12,13; w1 = 8..11; b0 = 6,7; w0 = 0..5 */
    const int arena_of[14] = {12, 13, 8, 9, 10, 11, 6, 7, 0, 1, 2, 3, 4, 5};
    char path[512];
    ffnn_model *m = NULL;

    UNUSED_WHY();
    CHECK(craft(dir, "order", header, DATA_BYTES, path, sizeof path) == 0, "cannot write");
    CHECK_OK(ffnn_model_load(path, &m, NULL));
    for (size_t k = 0; k < 14; k++)
        CHECK(ffnn_model_parameters(m)[arena_of[k]] == crafted_value(k),
              "data float %zu landed elsewhere", k);
    ffnn_model_free(m);
    return TEST_PASS;
}

/* Save, load: same architecture, bit-identical parameters, metadata; the data
 * section starts 8-byte aligned; saving again gives the same bytes. */
static test_result round_trip_one(const char *dir, const char *arch, ffnn_loss loss)
{
    char path[512], back_arch[256];
    ffnn_model *m = NULL, *back = NULL;
    ffnn_model_file_info info;
    blob a, b;

    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    CHECK_OK(ffnn_model_create(arch, &m));
    CHECK_OK(ffnn_model_init(m, 42));
    ffnn_model_parameters(m)[0] = -0.0f; /* the sign of zero survives */
    (void)ffnn_model_set_loss(m, loss);
    CHECK_OK(ffnn_model_save(m, path));
    CHECK_OK(ffnn_model_load(path, &back, &info));
    ffnn_model_arch_string(back, back_arch, sizeof back_arch);
    CHECK(strcmp(back_arch, arch) == 0, "arch %s, saved %s", back_arch, arch);
    CHECK(ffnn_model_parameter_count(back) == ffnn_model_parameter_count(m), "count differs");
    CHECK(memcmp(ffnn_model_parameters(back), ffnn_model_parameters(m),
                 ffnn_model_parameter_count(m) * sizeof(float)) == 0,
          "parameters differ after the round trip of %s", arch);
    CHECK(info.loss == loss, "loss %s, saved %s", ffnn_loss_name(info.loss), ffnn_loss_name(loss));
    CHECK(strcmp(info.ffnn_version, FFNN_VERSION) == 0, "version '%s'", info.ffnn_version);
    CHECK(test_read_file(path, &a) == 0, "cannot read %s back", path);
    (void)ffnn_model_set_loss(back, loss);
    CHECK_OK(ffnn_model_save(back, path));
    if (test_read_file(path, &b) != 0) {
        free(a.data);
        CHECK(0, "cannot read %s back", path);
    }
    int same = a.size == b.size && memcmp(a.data, b.data, a.size) == 0;
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | a.data[i];
    free(a.data);
    free(b.data);
    CHECK(same, "saving the loaded model gave other bytes");
    CHECK((8 + n) % 8 == 0, "data section at offset %llu, not 8-byte aligned",
          (unsigned long long)(8 + n));
    CHECK(test_count_entries(dir) == 1, "%d entries in %s: a temporary file was left",
          test_count_entries(dir), dir);
    TEST_FREE(m, back);
    return TEST_PASS;
}

TEST_DIR_CASE("safetensors_round_trip", "st", round_trip)
{
    UNUSED_WHY();
    PASS_OR_RETURN(round_trip_one(dir, "784-256relu-10", FFNN_LOSS_SOFTMAX_CE));
    PASS_OR_RETURN(round_trip_one(dir, "32-256relu:nobias-1:nobias", FFNN_LOSS_SIGMOID_BCE));
    PASS_OR_RETURN(round_trip_one(dir, "2-30tanh-30sigmoid:nobias-1", FFNN_LOSS_MSE));
    PASS_OR_RETURN(round_trip_one(dir, "8-16leaky_relu0.2-8elu0.5-6gelu_tanh-4silu:dropout0.1-3",
                                  FFNN_LOSS_SOFTMAX_CE));
    return TEST_PASS;
}

/* A model with activation parameters and the activations beyond relu/sigmoid/tanh: saved, loaded,
 * its forward pass gives the same bits as before, and not those of the defaults
 * (the parameters are in the file's arch, docs/FORMATS.md). */
TEST_DIR_CASE("safetensors_activation_round_trip", "st", activation_round_trip)
{
    UNUSED_WHY();
    const char *arch = "8-16leaky_relu0.2-12elu0.5-10gelu-8gelu_tanh-8silu-6mish-6hardswish-3";
    const char *defaults = "8-16leaky_relu-12elu-10gelu-8gelu_tanh-8silu-6mish-6hardswish-3";
    char path[512], back_arch[256];
    snprintf(path, sizeof path, "%s/act.safetensors", dir);
    ffnn_model *m = NULL, *back = NULL, *plain = NULL;
    ffnn_model_file_info info;
    CHECK_OK(ffnn_model_create(arch, &m));
    CHECK_OK(ffnn_model_init(m, 9));
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE);
    CHECK_OK(ffnn_model_save(m, path));
    CHECK_OK(ffnn_model_load(path, &back, &info));
    ffnn_model_arch_string(back, back_arch, sizeof back_arch);
    CHECK(strcmp(back_arch, arch) == 0, "loaded arch %s, saved %s", back_arch, arch);
    CHECK_OK(ffnn_model_create(defaults, &plain));
    memcpy(ffnn_model_parameters(plain), ffnn_model_parameters(m),
           ffnn_model_parameter_count(m) * sizeof(float));
    enum { ROWS = 5 };
    float x[ROWS * 8], y0[ROWS * 3], y1[ROWS * 3], y2[ROWS * 3];
    for (int i = 0; i < ROWS * 8; i++)
        x[i] = (float)((i * 37) % 17) / 4.0f - 2.0f; /* in [-2, 2] */
    CHECK_OK(ffnn_model_forward(m, x, ROWS, y0));
    CHECK_OK(ffnn_model_forward(back, x, ROWS, y1));
    CHECK_OK(ffnn_model_forward(plain, x, ROWS, y2));
    CHECK(memcmp(y0, y1, sizeof y0) == 0, "the loaded model computes other outputs");
    CHECK(memcmp(y0, y2, sizeof y0) != 0, "the parameters 0.2 and 0.5 changed nothing");
    TEST_FREE(m, back, plain);
    return TEST_PASS;
}

/* ---------------------------------------------------------------- case 7 */

TEST_DIR_CASE("safetensors_short_file", "st", short_file)
{
    char path[512];

    UNUSED_WHY();
    snprintf(path, sizeof path, "%s/empty", dir);
    CHECK(test_write_file(path, "", 0) == 0, "cannot write");
    PASS_OR_RETURN(expect_fail(path, FFNN_ERR_FORMAT, "offset 0",
                               "8-byte little-endian header length"));
    snprintf(path, sizeof path, "%s/seven", dir);
    CHECK(test_write_file(path, "\x10\0\0\0\0\0\0", 7) == 0, "cannot write");
    return expect_fail(path, FFNN_ERR_FORMAT, "offset 7", "found end of file");
}

TEST_DIR_CASE("safetensors_header_too_large", "st", header_too_large)
{
    char path[512];

    UNUSED_WHY();
    snprintf(path, sizeof path, "%s/big", dir);
    CHECK(craft_raw(path, 100000001ull, VALID_HEADER, strlen(VALID_HEADER), DATA_BYTES) == 0,
          "cannot write");
    PASS_OR_RETURN(expect_fail(path, FFNN_ERR_FORMAT, "offset 0", "100000001 exceeds the limit"));
    CHECK(craft_raw(path, UINT64_MAX, VALID_HEADER, strlen(VALID_HEADER), DATA_BYTES) == 0,
          "cannot write");
    return expect_fail(path, FFNN_ERR_FORMAT, "offset 0", "18446744073709551615 exceeds");
}

TEST_DIR_CASE("safetensors_header_past_end", "st", header_past_end)
{
    char path[512];
    size_t n = strlen(VALID_HEADER);

    UNUSED_WHY();
    snprintf(path, sizeof path, "%s/past", dir);
    /* claims 1000 bytes more than the file holds after the length field */
    CHECK(craft_raw(path, n + DATA_BYTES + 1000, VALID_HEADER, n, DATA_BYTES) == 0,
          "cannot write");
    return expect_fail(path, FFNN_ERR_FORMAT, "offset 0", "runs past the end of the file");
}

/* ---------------------------------------------------------------- case 8 */

TEST_DIR_CASE("safetensors_overlapping_offsets", "st", overlapping_offsets)
{
    const char *h = "{" META "," W0 ","
                    TEST_TENSOR_F32("layers.0.bias", "[2]", "[16,24]") ","
                    W1 "," B1 "}";
    UNUSED_WHY();
    return expect_crafted_fail(dir, "overlap", h, DATA_BYTES, "layers.0.bias",
                               "overlap tensor \"layers.0.weight\"");
}

TEST_DIR_CASE("safetensors_gapped_offsets", "st", gapped_offsets)
{
    const char *h = "{" META "," W0 ","
                    TEST_TENSOR_F32("layers.0.bias", "[2]", "[28,36]") ","
                    TEST_TENSOR_F32("layers.1.weight", "[2,2]", "[36,52]") ","
                    TEST_TENSOR_F32("layers.1.bias", "[2]", "[52,60]") "}";
    UNUSED_WHY();
    return expect_crafted_fail(dir, "gap", h, 60, "layers.0.bias", "leave a gap after");
}

/* The first tensor must begin at 0. */
TEST_DIR_CASE("safetensors_gap_at_start", "st", gap_at_start)
{
    const char *h = "{" META ","
                    TEST_TENSOR_F32("layers.0.weight", "[2,3]", "[4,28]") ","
                    TEST_TENSOR_F32("layers.0.bias", "[2]", "[28,36]") ","
                    TEST_TENSOR_F32("layers.1.weight", "[2,2]", "[36,52]") ","
                    TEST_TENSOR_F32("layers.1.bias", "[2]", "[52,60]") "}";
    UNUSED_WHY();
    return expect_crafted_fail(dir, "gap0", h, 60, "the start of the data section",
                               "begin at 0");
}

TEST_DIR_CASE("safetensors_begin_after_end", "st", begin_after_end)
{
    const char *h = "{" META "," W0 ","
                    TEST_TENSOR_F32("layers.0.bias", "[2]", "[32,24]") ","
                    W1 "," B1 "}";
    UNUSED_WHY();
    return expect_crafted_fail(dir, "backwards", h, DATA_BYTES, "[32, 24]",
                               "expected begin <= end");
}

TEST_DIR_CASE("safetensors_size_not_shape_times_dtype", "st", size_not_shape_times_dtype)
{
    const char *h = "{" META ","
                    TEST_TENSOR_F32("layers.0.weight", "[2,3]", "[0,20]") ","
                    B0 "," W1 "," B1 "}";
    UNUSED_WHY();
    return expect_crafted_fail(dir, "size", h, DATA_BYTES, "span 20 bytes, expected 24",
                               "layers.0.weight");
}

/* Offsets that stop short of the file's end, or run past it. */
TEST_DIR_CASE("safetensors_data_section_size", "st", data_section_size)
{
    UNUSED_WHY();
    PASS_OR_RETURN(expect_crafted_fail(dir, "trailing", VALID_HEADER, DATA_BYTES + 4,
                                       "4 trailing bytes", NULL));
    return expect_crafted_fail(dir, "truncated", VALID_HEADER, DATA_BYTES - 4,
                               "truncated file", "expected 56 bytes of tensor data");
}

/* ---------------------------------------------------------------- case 9 */

TEST_DIR_CASE("safetensors_shape_overflow", "st", shape_overflow)
{
    const char *elements = "{" META ","
        TEST_TENSOR_F32("layers.0.weight", "[4294967296,4294967296]", "[0,24]") ","
        B0 "," W1 "," B1 "}";
    const char *bytes = "{" META ","
        TEST_TENSOR_F32("layers.0.weight", "[9007199254740992,1024]", "[0,24]") ","
        B0 "," W1 "," B1 "}";
    const char *huge = "{" META ","
        TEST_TENSOR_F32("layers.0.weight", "[18446744073709551615]", "[0,24]") ","
        B0 "," W1 "," B1 "}";
    UNUSED_WHY();
    PASS_OR_RETURN(expect_crafted_fail(dir, "elements", elements, DATA_BYTES,
                                       "[4294967296, 4294967296]", "overflows 64 bits"));
    PASS_OR_RETURN(expect_crafted_fail(dir, "bytes", bytes, DATA_BYTES, "size in bytes overflows",
                                       "layers.0.weight"));
    return expect_crafted_fail(dir, "huge", huge, DATA_BYTES, "shape dimension 0",
                               "expected an integer in [0, 2^53]");
}

TEST_DIR_CASE("safetensors_zero_dimension", "st", zero_dimension)
{
    const char *h = "{" META ","
                    TEST_TENSOR_F32("layers.0.weight", "[0,3]", "[0,0]") ","
                    TEST_TENSOR_F32("layers.0.bias", "[2]", "[0,8]") ","
                    TEST_TENSOR_F32("layers.1.weight", "[2,2]", "[8,24]") ","
                    TEST_TENSOR_F32("layers.1.bias", "[2]", "[24,32]") "}";
    UNUSED_WHY();
    return expect_crafted_fail(dir, "zero", h, 32, "layers.0.weight", "zero dimension");
}

TEST_DIR_CASE("safetensors_shape_not_architecture", "st", shape_not_architecture)
{
    const char *transposed = "{" META ","
        TEST_TENSOR_F32("layers.0.weight", "[3,2]", "[0,24]") ","
        B0 "," W1 "," B1 "}";
    const char *bias_rank = "{" META "," W0 ","
        TEST_TENSOR_F32("layers.0.bias", "[1,2]", "[24,32]") ","
        W1 "," B1 "}";
    const char *arch = "{\"__metadata__\":{\"format\":\"ffnn-model\",\"arch\":\"3-4relu-2\","
                       "\"loss\":\"ce\"}," W0 "," B0 "," W1 "," B1 "}";
    UNUSED_WHY();
    PASS_OR_RETURN(expect_crafted_fail(dir, "transposed", transposed, DATA_BYTES,
                                       "shape [3, 2], expected [2, 3]", "3-2relu-2"));
    PASS_OR_RETURN(expect_crafted_fail(dir, "bias_rank", bias_rank, DATA_BYTES,
                                       "shape [1, 2], expected [2]", "layers.0.bias"));
    return expect_crafted_fail(dir, "arch", arch, DATA_BYTES, "expected [4, 3]", "3-4relu-2");
}

TEST_DIR_CASE("safetensors_missing_or_extra_tensor", "st", missing_or_extra_tensor)
{
    const char *missing = "{" META "," W0 "," B0 "," W1 "}";
    const char *extra = "{" META "," W0 "," B0 "," W1 "," B1 ","
                        TEST_TENSOR_F32("layers.2.weight", "[1]", "[56,60]") "}";
    const char *stray = "{" META "," W0 "," B0 "," W1 "," B1 ","
                        TEST_TENSOR_F32("optimizer.step", "[]", "[56,60]") "}";
    const char *nobias = "{\"__metadata__\":{\"format\":\"ffnn-model\",\"arch\":\"3-2relu:nobias-2\","
                         "\"loss\":\"ce\"}," W0 "," B0 "," W1 "," B1 "}";
    UNUSED_WHY();
    PASS_OR_RETURN(expect_crafted_fail(dir, "missing", missing, 48,
                                       "missing tensor \"layers.1.bias\"", "3-2relu-2"));
    PASS_OR_RETURN(expect_crafted_fail(dir, "extra", extra, 60,
                                       "unexpected tensor \"layers.2.weight\"", NULL));
    PASS_OR_RETURN(expect_crafted_fail(dir, "stray", stray, 60,
                                       "unexpected tensor \"optimizer.step\"", NULL));
    return expect_crafted_fail(dir, "nobias", nobias, DATA_BYTES, "layers.0.bias",
                               "has no bias");
}

TEST_DIR_CASE("safetensors_bad_metadata", "st", bad_metadata)
{
    const char *tensors = W0 "," B0 "," W1 "," B1 "}";
    char h[1024];
    static const struct { const char *meta, *needle; } cases[] = {
        {"", "missing \"__metadata__\""},
        {"\"__metadata__\":{\"format\":\"pt\",\"arch\":\"3-2relu-2\",\"loss\":\"ce\"},",
         "expected \"ffnn-model\", found \"pt\""},
        {"\"__metadata__\":{\"format\":\"ffnn-model\",\"loss\":\"ce\"},", "missing \"arch\""},
        {"\"__metadata__\":{\"format\":\"ffnn-model\",\"arch\":\"3-2relux-2\",\"loss\":\"ce\"},",
         "__metadata__ \"arch\""},
        {"\"__metadata__\":{\"format\":\"ffnn-model\",\"arch\":\"3-2relu-2\",\"loss\":\"hinge\"},",
         "hinge"},
        {"\"__metadata__\":{\"format\":\"ffnn-model\",\"arch\":\"3-2relu-2\",\"loss\":\"ce\","
         "\"epoch\":\"3\"},", "unknown key \"epoch\""},
        {"\"__metadata__\":{\"format\":\"ffnn-model\",\"arch\":\"3-2relu-2\",\"loss\":7},",
         "expected a string value, found 7"},
    };
    UNUSED_WHY();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(h, sizeof h, "{%s%s", cases[i].meta, tensors);
        PASS_OR_RETURN(expect_crafted_fail(dir, "meta", h, DATA_BYTES, cases[i].needle, NULL));
    }
    return TEST_PASS;
}

/* NaN / Inf in the data are refused at their offset. */
TEST_DIR_CASE("safetensors_non_finite_value", "st", non_finite_value)
{
    char path[512];
    blob b;

    UNUSED_WHY();
    CHECK(craft(dir, "nan", VALID_HEADER, DATA_BYTES, path, sizeof path) == 0, "cannot write");
    CHECK(test_read_file(path, &b) == 0, "cannot read back");
    memcpy(b.data + b.size - 4, "\x00\x00\xc0\x7f", 4); /* layers.1.bias[1] = NaN */
    int rc = test_write_file(path, b.data, b.size);
    char offset[64];
    snprintf(offset, sizeof offset, "offset %zu", b.size - 4);
    free(b.data);
    CHECK(rc == 0, "cannot write");
    return expect_fail(path, FFNN_ERR_FORMAT, offset, "\"layers.1.bias\" element 1 is nan");
}

/* ---------------------------------------------------------------- case 10 */

TEST_DIR_CASE("safetensors_not_utf8", "st", not_utf8)
{
    /* 0xff inside the arch string; an overlong '/' (c0 af); a lone surrogate (ed a0 80) */
    const char *bad[3] = {"\xff", "\xc0\xaf", "\xed\xa0\x80"};
    char h[1024], needle[64];
    size_t at = 8 + strlen("{\"__metadata__\":{\"format\":\"ffnn-model\",\"arch\":\"3-2relu-2");

    UNUSED_WHY();
    for (int i = 0; i < 3; i++) {
        snprintf(h, sizeof h, "{\"__metadata__\":{\"format\":\"ffnn-model\",\"arch\":"
                 "\"3-2relu-2%s\",\"loss\":\"ce\"}," W0 "," B0 "," W1 "," B1 "}", bad[i]);
        snprintf(needle, sizeof needle, "offset %zu", at);
        PASS_OR_RETURN(expect_crafted_fail(dir, "utf8", h, DATA_BYTES, needle, "invalid UTF-8"));
    }
    return TEST_PASS;
}

TEST_DIR_CASE("safetensors_not_json", "st", not_json)
{
    char h[1024], path[512];

    UNUSED_WHY();
    PASS_OR_RETURN(expect_crafted_fail(dir, "trunc", "{" META ",\"layers.0.weight\":{", 0,
                                       "not valid JSON", NULL));
    PASS_OR_RETURN(expect_crafted_fail(dir, "array", "[1,2,3]", 0, "offset 8", "start with '{'"));
    PASS_OR_RETURN(expect_crafted_fail(dir, "space", " " VALID_HEADER, DATA_BYTES, "offset 8",
                                       "start with '{'"));
    snprintf(h, sizeof h, "%s  x", VALID_HEADER); /* garbage after the object */
    PASS_OR_RETURN(expect_crafted_fail(dir, "garbage", h, DATA_BYTES, "expected only spaces",
                                       "byte 0x78"));
    /* a NUL byte inside the header */
    snprintf(path, sizeof path, "%s/nul", dir);
    snprintf(h, sizeof h, "%s", VALID_HEADER);
    h[5] = '\0';
    CHECK(craft_raw(path, strlen(VALID_HEADER), h, strlen(VALID_HEADER), DATA_BYTES) == 0,
          "cannot write");
    PASS_OR_RETURN(expect_fail(path, FFNN_ERR_FORMAT, "offset 13", "NUL byte"));
    /* trailing spaces (the padding writers add) are fine */
    snprintf(h, sizeof h, "%s   ", VALID_HEADER);
    CHECK(craft(dir, "padded", h, DATA_BYTES, path, sizeof path) == 0, "cannot write");
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_load(path, &m, NULL));
    ffnn_model_free(m);
    return TEST_PASS;
}

TEST_DIR_CASE("safetensors_duplicate_keys", "st", duplicate_keys)
{
    const char *top = "{" META "," W0 "," B0 "," W1 "," B1 "," B1 "}";
    const char *inner = "{" META "," W0 ","
                        "\"layers.0.bias\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[2],"
                        "\"data_offsets\":[24,32]}," W1 "," B1 "}";
    const char *meta = "{\"__metadata__\":{\"format\":\"ffnn-model\",\"arch\":\"3-2relu-2\","
                       "\"loss\":\"ce\",\"loss\":\"mse\"}," W0 "," B0 "," W1 "," B1 "}";
    UNUSED_WHY();
    PASS_OR_RETURN(expect_crafted_fail(dir, "top", top, DATA_BYTES,
                                       "duplicate key \"layers.1.bias\"", "top level"));
    PASS_OR_RETURN(expect_crafted_fail(dir, "inner", inner, DATA_BYTES, "duplicate key \"dtype\"",
                                       "tensor \"layers.0.bias\""));
    return expect_crafted_fail(dir, "meta", meta, DATA_BYTES, "duplicate key \"loss\"",
                               "__metadata__");
}

TEST_DIR_CASE("safetensors_unknown_dtype", "st", unknown_dtype)
{
    const char *unknown = "{" META ","
        "\"layers.0.weight\":{\"dtype\":\"F31\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
        B0 "," W1 "," B1 "}";
    const char *f64 = "{" META ","
        "\"layers.0.weight\":{\"dtype\":\"F64\",\"shape\":[2,3],\"data_offsets\":[0,48]},"
        TEST_TENSOR_F32("layers.0.bias", "[2]", "[48,56]") ","
        TEST_TENSOR_F32("layers.1.weight", "[2,2]", "[56,72]") ","
        TEST_TENSOR_F32("layers.1.bias", "[2]", "[72,80]") "}";
    UNUSED_WHY();
    PASS_OR_RETURN(expect_crafted_fail(dir, "f31", unknown, DATA_BYTES, "unknown dtype \"F31\"",
                                       "layers.0.weight"));
    return expect_crafted_fail(dir, "f64", f64, 80, "dtype F64, expected F32",
                               "layers.0.weight");
}

/* Other structural errors: a tensor that is not an object, a missing or
 * unknown field, data_offsets of the wrong form, a negative dimension. */
TEST_DIR_CASE("safetensors_bad_tensor_entries", "st", bad_tensor_entries)
{
    static const struct { const char *w0, *needle; } cases[] = {
        {"\"layers.0.weight\":[1,2]", "expected an object"},
        {"\"layers.0.weight\":{\"dtype\":\"F32\",\"shape\":[2,3]}", "missing \"data_offsets\""},
        {"\"layers.0.weight\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24],"
         "\"extra\":1}", "unknown key \"extra\""},
        {TEST_TENSOR_F32("layers.0.weight", "[2,3]", "[0]"),
         "[begin, end]"},
        {TEST_TENSOR_F32("layers.0.weight", "[2,-3]", "[0,24]"),
         "found -3"},
        {TEST_TENSOR_F32("layers.0.weight", "[2,3.5]", "[0,24]"),
         "found 3.5"},
        {"\"layers.0.weight\":{\"dtype\":32,\"shape\":[2,3],\"data_offsets\":[0,24]}",
         "unknown dtype 32"},
    };
    char h[1024];

    UNUSED_WHY();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(h, sizeof h, "{" META ",%s," B0 "," W1 "," B1 "}", cases[i].w0);
        PASS_OR_RETURN(expect_crafted_fail(dir, "entry", h, DATA_BYTES, cases[i].needle, NULL));
    }
    return TEST_PASS;
}

TEST_DIR_CASE("safetensors_not_a_file", "st", not_a_file)
{
    char path[512];

    UNUSED_WHY();
    snprintf(path, sizeof path, "%s/none.safetensors", dir);
    PASS_OR_RETURN(expect_fail(path, FFNN_ERR_IO, "No such file", NULL));
    return expect_fail(dir, FFNN_ERR_IO, "a directory", NULL);
}

/* ---------------------------------------------------------------- faults */

/* An old model file at path; its bytes into *old. */
static int write_old(const char *path, blob *old)
{
    ffnn_model *m = NULL;
    int rc = -1;

    if (ffnn_model_create("4-3-2", &m) == FFNN_OK && ffnn_model_init(m, 1) == FFNN_OK &&
        ffnn_model_set_loss(m, FFNN_LOSS_MSE) == FFNN_OK && ffnn_model_save(m, path) == FFNN_OK)
        rc = test_read_file(path, old);
    ffnn_model_free(m);
    return rc;
}

/* path still holds exactly old, and it is alone in dir. */
static test_result expect_intact(const char *dir, const char *path, const blob *old)
{
    blob now;

    CHECK(test_read_file(path, &now) == 0, "the old file %s is gone", path);
    int same = now.size == old->size && memcmp(now.data, old->data, old->size) == 0;
    free(now.data);
    CHECK(same, "the old file %s changed (%zu bytes, was %zu)", path, now.size, old->size);
    CHECK(test_count_entries(dir) == 1, "%d entries in %s: a temporary file was left",
          test_count_entries(dir), dir);
    return TEST_PASS;
}

/* The child: a file size limit of 64 KiB, SIGXFSZ ignored, so write() fails
 * with EFBIG part way through an 800 KB model. Exit 0 when the save failed
 * with FFNN_ERR_IO and the message names the error; 1 otherwise. */
static void full_disk_child(const char *path)
{
    struct rlimit lim = {64 * 1024, 64 * 1024};
    ffnn_model *m = NULL;
    ffnn_status st;

    signal(SIGXFSZ, SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0 || ffnn_model_create("784-256relu-10", &m) != FFNN_OK) {
        fprintf(stderr, "    child: setup failed: %s\n", strerror(errno));
        _exit(1);
    }
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE);
    st = ffnn_model_save(m, path);
    if (getenv("FFNN_TEST_VERBOSE"))
        fprintf(stderr, "    [%s] %s\n", ffnn_status_name(st), ffnn_last_error());
    if (st != FFNN_ERR_IO || !strstr(ffnn_last_error(), strerror(EFBIG)) ||
        !strstr(ffnn_last_error(), "left unchanged")) {
        fprintf(stderr, "    child: save returned %s: %s\n", ffnn_status_name(st),
                ffnn_last_error());
        _exit(1);
    }
    ffnn_model_free(m);
    _exit(0);
}

TEST_DIR_CASE("safetensors_save_disk_full", "st", save_disk_full)
{
    char path[512];
    blob old;
    int status = 0;
    pid_t pid;

    UNUSED_WHY();
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    CHECK(write_old(path, &old) == 0, "cannot write the old model: %s", ffnn_last_error());
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0)
        full_disk_child(path);
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        free(old.data);
        CHECK(0, "fork/waitpid: %s", strerror(errno));
    }
    test_result r = expect_intact(dir, path, &old);
    free(old.data);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the child's save did not fail with EFBIG as expected (status 0x%x)", status);
    return r;
}

/* Bytes of model m saved alone as dir/name (the file then removed). */
static int saved_bytes(const char *dir, const char *name, const ffnn_model *m, blob *b)
{
    char path[512];
    int rc;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (ffnn_model_save(m, path) != FFNN_OK)
        return -1;
    rc = test_read_file(path, b);
    remove(path);
    return rc;
}

/* path holds exactly a or b (the save before, or the one being written). */
static test_result expect_one_of(const char *path, const blob *a, const blob *b, int delay_ms)
{
    blob now;
    ffnn_model *m = NULL;

    CHECK(test_read_file(path, &now) == 0, "%s is gone after a kill at %d ms", path, delay_ms);
    int is_a = now.size == a->size && memcmp(now.data, a->data, a->size) == 0;
    int is_b = now.size == b->size && memcmp(now.data, b->data, b->size) == 0;
    free(now.data);
    CHECK(is_a || is_b, "after a kill at %d ms %s is neither the old nor the new model "
          "(%zu bytes)", delay_ms, path, now.size);
    CHECK_OK(ffnn_model_load(path, &m, NULL));
    ffnn_model_free(m);
    return TEST_PASS;
}

/* RELIABILITY fault 1: a process killed (SIGKILL) while saving leaves the
 * previous file, or the complete new one - never a torn file. The child saves
 * an 8 MB model over and over; the parent kills it after 5, 20 and 60 ms. */
/* What a killed writer saves: model to path. */
struct save_job {
    const ffnn_model *model;
    const char *path;
};
static void save_model_job(void *arg)
{
    const struct save_job *j = arg;
    ffnn_model_save(j->model, j->path);
}

TEST_DIR_CASE("safetensors_save_killed", "st", save_killed)
{
    static const int delays_ms[3] = {5, 20, 60};
    char path[512];
    ffnn_model *big = NULL;
    blob old = {NULL, 0}, fresh = {NULL, 0};
    test_result r = TEST_PASS;

    UNUSED_WHY();
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    CHECK_OK(ffnn_model_create("1024-1024relu-1024", &big));
    CHECK_OK(ffnn_model_init(big, 2));
    CHECK_OK(ffnn_model_set_loss(big, FFNN_LOSS_SOFTMAX_CE));
    if (write_old(path, &old) != 0 || saved_bytes(dir, "fresh", big, &fresh) != 0)
        r = TEST_FAIL, fprintf(stderr, "    cannot prepare the files: %s\n", ffnn_last_error());
    for (int i = 0; i < 3 && r == TEST_PASS; i++) {
        struct save_job job = {big, path};
        if (test_kill_writer(save_model_job, &job, delays_ms[i] * 1000L) != 0) {
            r = TEST_FAIL, fprintf(stderr, "    fork: %s\n", strerror(errno));
            break;
        }
        r = expect_one_of(path, &old, &fresh, delays_ms[i]);
    }
    free(old.data);
    free(fresh.data);
    ffnn_model_free(big);
    return r; /* a temporary file the kill left behind goes with the directory */
}

TEST_DIR_CASE("safetensors_save_missing_directory", "st", save_missing_directory)
{
    char path[512];
    ffnn_model *m = NULL;
    ffnn_status st;

    UNUSED_WHY();
    snprintf(path, sizeof path, "%s/no/such/dir/m.safetensors", dir);
    CHECK_OK(ffnn_model_create("4-3-2", &m));
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE);
    st = ffnn_model_save(m, path);
    ffnn_model_free(m);
    CHECK(st == FFNN_ERR_IO, "status %s: %s", ffnn_status_name(st), ffnn_last_error());
    CHECK(strstr(ffnn_last_error(), path) && strstr(ffnn_last_error(), "No such file"),
          "message: %s", ffnn_last_error());
    CHECK(test_count_entries(dir) == 0, "%d entries left in %s", test_count_entries(dir), dir);
    return TEST_PASS;
}

/* Saving over a directory, or a model with NaN, fails; the old file stays. */
TEST_DIR_CASE("safetensors_save_refused", "st", save_refused)
{
    char path[512], sub[512];
    ffnn_model *m = NULL;
    ffnn_status st;
    blob old;

    UNUSED_WHY();
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    CHECK(write_old(path, &old) == 0, "cannot write the old model: %s", ffnn_last_error());
    CHECK_OK(ffnn_model_create("4-3-2", &m));
    ffnn_model_bias(m, 1)[1] = NAN;
    (void)ffnn_model_set_loss(m, FFNN_LOSS_MSE);
    st = ffnn_model_save(m, path);
    CHECK(st == FFNN_ERR_NUMERIC && strstr(ffnn_last_error(), "\"layers.1.bias\" element 1"),
          "status %s: %s", ffnn_status_name(st), ffnn_last_error());
    test_result r = expect_intact(dir, path, &old);
    free(old.data);
    if (r != TEST_PASS) {
        ffnn_model_free(m);
        return r;
    }
    ffnn_model_bias(m, 1)[1] = 0.0f;
    snprintf(sub, sizeof sub, "%s/sub", dir);
    CHECK(mkdir(sub, 0700) == 0, "mkdir: %s", strerror(errno));
    (void)ffnn_model_set_loss(m, FFNN_LOSS_MSE);
    st = ffnn_model_save(m, sub);
    ffnn_model_free(m);
    CHECK(st == FFNN_ERR_IO && strstr(ffnn_last_error(), "directory"), "status %s: %s",
          ffnn_status_name(st), ffnn_last_error());
    CHECK(test_count_entries(sub) == 0 && test_count_entries(dir) == 2, "files left behind");
    rmdir(sub);
    return TEST_PASS;
}

/* ---------------------------------------------------------------- PyTorch */

/* Inputs x [4, 6] shared with the Python side. */
static void interop_inputs(float *x)
{
    for (int i = 0; i < 24; i++)
        x[i] = (float)((i * 37) % 17) / 8.0f - 1.0f;
}

static int write_floats(const char *dir, const char *name, const float *v, size_t n)
{
    char path[512];
    uint8_t *b = malloc(4 * n);
    int rc;

    if (!b)
        return -1;
    for (size_t k = 0; k < n; k++) {
        uint32_t u;
        memcpy(&u, &v[k], 4);
        for (int j = 0; j < 4; j++)
            b[4 * k + (size_t)j] = (uint8_t)(u >> (8 * j));
    }
    snprintf(path, sizeof path, "%s/%s", dir, name);
    rc = test_write_file(path, b, 4 * n);
    free(b);
    return rc;
}

/* n little-endian floats from dir/name into v; 0 on success. */
static int read_floats(const char *dir, const char *name, float *v, size_t n)
{
    char path[512];
    blob b;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (test_read_file(path, &b) != 0)
        return -1;
    if (b.size != 4 * n) {
        free(b.data);
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        uint32_t u = (uint32_t)b.data[4 * k] | (uint32_t)b.data[4 * k + 1] << 8 |
                     (uint32_t)b.data[4 * k + 2] << 16 | (uint32_t)b.data[4 * k + 3] << 24;
        memcpy(&v[k], &u, 4);
    }
    free(b.data);
    return 0;
}

/* Run PYTHON INTEROP_SCRIPT dir; its exit status, or -1. */
static int run_python(const char *dir)
{
    int status = 0;
    pid_t pid;

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        execl(PYTHON, PYTHON, INTEROP_SCRIPT, dir, (char *)NULL);
        fprintf(stderr, "    exec %s: %s\n", PYTHON, strerror(errno));
        _exit(126);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ffnn's side of direction (a): a model, inputs and ffnn's outputs. */
static test_result write_ffnn_side(const char *dir)
{
    char path[512];
    ffnn_model *m = NULL;
    float x[24], y[12];

    snprintf(path, sizeof path, "%s/ffnn.safetensors", dir);
    CHECK_OK(ffnn_model_create("6-5tanh-4relu:nobias-3sigmoid", &m));
    CHECK_OK(ffnn_model_init(m, 7));
    interop_inputs(x);
    CHECK_OK(ffnn_model_forward(m, x, 4, y));
    (void)ffnn_model_set_loss(m, FFNN_LOSS_MSE);
    CHECK_OK(ffnn_model_save(m, path));
    ffnn_model_free(m);
    CHECK(write_floats(dir, "inputs.f32", x, 24) == 0, "cannot write inputs.f32");
    CHECK(write_floats(dir, "ffnn_out.f32", y, 12) == 0, "cannot write ffnn_out.f32");
    return TEST_PASS;
}

/* Direction (b): torch.safetensors loads, and its forward matches torch's. */
static test_result check_torch_side(const char *dir)
{
    char path[512], arch[128];
    ffnn_model *m = NULL;
    ffnn_model_file_info info;
    float x[24], y[12], want[12];

    snprintf(path, sizeof path, "%s/torch.safetensors", dir);
    CHECK_OK(ffnn_model_load(path, &m, &info));
    ffnn_model_arch_string(m, arch, sizeof arch);
    CHECK(strcmp(arch, "6-5tanh:nobias-4relu-3") == 0, "arch of the torch file: %s", arch);
    CHECK(info.loss == FFNN_LOSS_SOFTMAX_CE, "loss %s", ffnn_loss_name(info.loss));
    interop_inputs(x);
    CHECK_OK(ffnn_model_forward(m, x, 4, y));
    ffnn_model_free(m);
    CHECK(read_floats(dir, "torch_out.f32", want, 12) == 0, "cannot read torch_out.f32");
    for (int k = 0; k < 12; k++)
        CHECK(fabsf(y[k] - want[k]) <= 1e-5f, "output %d: ffnn %.9g, torch %.9g", k,
              (double)y[k], (double)want[k]);
    return TEST_PASS;
}

TEST_DIR_CASE("safetensors_pytorch_interop", "st", pytorch_interop)
{
    char reason[256] = "", path[512];
    FILE *f;
    int rc;

    if (access(PYTHON, X_OK) != 0)
        SKIP("%s not found", PYTHON);
    CHECK(access(INTEROP_SCRIPT, R_OK) == 0, "%s not found: run the tests from the "
          "repository root", INTEROP_SCRIPT);
    PASS_OR_RETURN(write_ffnn_side(dir));
    rc = run_python(dir);
    if (rc == 77) {
        snprintf(path, sizeof path, "%s/skip_reason.txt", dir);
        if ((f = fopen(path, "r")) != NULL) {
            if (!fgets(reason, sizeof reason, f))
                reason[0] = '\0';
            fclose(f);
        }
        reason[strcspn(reason, "\n")] = '\0';
        SKIP("%s: %s", PYTHON, reason[0] ? reason : "numpy/torch missing");
    }
    CHECK(rc == 0, "%s %s %s exited with %d (its message is above)", PYTHON, INTEROP_SCRIPT,
          dir, rc);
    return check_torch_side(dir);
}

/* ---------------------------------------------------------------- inference */

/* predict: softmax rows sum to 1, the class is the argmax of the logits;
 * sigmoid for bce; raw outputs for mse; a loss that does not fit is refused. */
TEST("model_predict", test_predict)
{
    ffnn_model *m = NULL;
    float x[2 * 3] = {0.1f, 0.5f, 0.9f, 1.0f, 0.0f, 0.3f}, raw[4], p[4];
    int cls[2];

    UNUSED_WHY();
    CHECK_OK(ffnn_model_create("3-4tanh-2", &m));
    CHECK_OK(ffnn_model_init(m, 3));
    CHECK_OK(ffnn_model_forward(m, x, 2, raw));
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE);
    CHECK_OK(ffnn_model_predict(m, x, 2, p, cls));
    for (int b = 0; b < 2; b++) {
        double e0 = exp((double)raw[2 * b]), e1 = exp((double)raw[2 * b + 1]);
        CHECK(fabs(p[2 * b] - e0 / (e0 + e1)) < 1e-6 && fabs(p[2 * b] + p[2 * b + 1] - 1) < 1e-6,
              "softmax row %d: %g %g", b, (double)p[2 * b], (double)p[2 * b + 1]);
        CHECK(cls[b] == (raw[2 * b + 1] > raw[2 * b]), "class %d for logits %g %g", cls[b],
              (double)raw[2 * b], (double)raw[2 * b + 1]);
    }
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SIGMOID_BCE);
    CHECK_OK(ffnn_model_predict(m, x, 2, p, NULL));
    for (int k = 0; k < 4; k++)
        CHECK(fabs(p[k] - 1.0 / (1.0 + exp(-(double)raw[k]))) < 1e-6, "sigmoid %d", k);
    (void)ffnn_model_set_loss(m, FFNN_LOSS_MSE);
    CHECK_OK(ffnn_model_predict(m, x, 2, p, cls));
    CHECK(memcmp(p, raw, sizeof p) == 0, "mse must give the raw outputs");
    ffnn_model_free(m);
    CHECK_OK(ffnn_model_create("3-4-2sigmoid", &m));
    CHECK(ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE) == FFNN_ERR_INVALID_ARGUMENT,
          "ce on a sigmoid last layer accepted");
    CHECK(ffnn_model_predict(m, x, 2, p, cls) == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "no loss"),
          "a model without a loss predicted: %s", ffnn_last_error());
    ffnn_model_free(m);
    return TEST_PASS;
}

/* evaluate: the confusion matrix counts (true, predicted) pairs; the mean
 * loss equals the trainer's; labels beyond the classes are refused. */
TEST("model_evaluate", test_evaluate)
{
    ffnn_dataset *full = NULL, *test = NULL;
    ffnn_model *m = NULL;
    uint64_t confusion[100], total = 0;
    double loss = 0.0;

    UNUSED_WHY();
    if (ffnn_dataset_load_idx_dir("/usr/share/datasets/fashion-mnist", NULL, &full) != FFNN_OK)
        SKIP("Fashion-MNIST missing (%s)", ffnn_last_error());
    CHECK_OK(ffnn_dataset_slice(full, 0, 500, &test));
    ffnn_dataset_free(full);
    CHECK_OK(ffnn_model_create("784-32relu-10", &m));
    CHECK_OK(ffnn_model_init(m, 5));
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE);
    CHECK_OK(ffnn_model_evaluate(m, test, 64, &loss, confusion));
    uint64_t diag = 0;
    for (int t = 0; t < 10; t++)
        for (int p = 0; p < 10; p++) {
            total += confusion[t * 10 + p];
            diag += t == p ? confusion[t * 10 + p] : 0;
        }
    CHECK(total == 500, "the matrix counts %llu samples", (unsigned long long)total);
    ffnn_train_config cfg = ffnn_train_config_default();
    ffnn_trainer *tr = NULL;
    double tl = 0.0, ta = 0.0;
    cfg.device = FFNN_DEVICE_CPU;
    cfg.strategy = FFNN_STRATEGY_REFERENCE;
    CHECK_OK(ffnn_trainer_create(m, test, &cfg, &tr));
    CHECK_OK(ffnn_trainer_evaluate(tr, test, &tl, &ta));
    ffnn_trainer_free(tr);
    CHECK(fabs(tl - loss) < 1e-6 * fabs(tl) && fabs(ta - (double)diag / 500.0) < 1e-12,
          "evaluate: loss %.9g acc %.4f, trainer: loss %.9g acc %.4f", loss,
          (double)diag / 500.0, tl, ta);
    ffnn_model_free(m);
    CHECK_OK(ffnn_model_create("784-4", &m));
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE);
    ffnn_status st = ffnn_model_evaluate(m, test, 64, &loss, confusion);
    TEST_FREE(m, test);
    CHECK(st == FFNN_ERR_INVALID_ARGUMENT && strstr(ffnn_last_error(), "4 classes"),
          "labels beyond 4 classes: %s: %s", ffnn_status_name(st), ffnn_last_error());
    return TEST_PASS;
}

/* An IDX image file loads without a label file (for ffnn predict). */
TEST("idx_images_only", test_idx_images_only)
{
    ffnn_dataset *ds = NULL;

    UNUSED_WHY();
    if (access("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz", R_OK) != 0)
        SKIP("Fashion-MNIST missing");
    CHECK_OK(ffnn_dataset_load_idx("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz",
                                   NULL, &ds));
    CHECK(ffnn_dataset_count(ds) == 10000 && ffnn_dataset_features(ds) == 784,
          "%zu x %zu", ffnn_dataset_count(ds), ffnn_dataset_features(ds));
    CHECK(ffnn_dataset_labels(ds)[9999] == 0 && ffnn_dataset_classes(ds) == 1, "labels not 0");
    ffnn_dataset_free(ds);
    return TEST_PASS;
}
