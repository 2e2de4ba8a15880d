/* test_onnx.c - ffnn_model_export_onnx / ffnn export against onnxruntime: models
 * with every activation, local1d layers (valid and same padding, with and
 * without bias), embedding layers (codes of levels and unseen ones), the stored
 * standardisation, the three loss heads and class
 * names are exported, and ensembles of such models (each member's graph, then
 * Mean); tests/onnx_check.py runs onnx.checker (full_check) and
 * onnxruntime's CPU execution provider on fresh random rows, and its outputs must
 * equal the predictor's (ffnn_predictor_predict) within
 * |ort - ffnn| <= 1e-5 (1 + |ffnn|) per output. Skipped, naming why, when
 * /usr/bin/python3 (FFNN_PYTHON) cannot import onnx, onnxruntime and numpy, or
 * the build has no protobuf-c. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "cli_run.h"
#include "ffnn.h"
#include "test_files.h"

#define TOL 1e-5
#define ROWS 37

static const char *python_path(void)
{
    const char *p = getenv("FFNN_PYTHON");
    return p && *p ? p : "/usr/bin/python3";
}

static void random_rows(float *x, size_t n, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        x[i] = (float)((double)(s >> 40) / (double)(1ull << 24) * 6.0 - 3.0);
    }
}

/* One exported model: arch, loss, standardisation (input and, for mse, target)
 * and class names as asked. */
typedef struct export_case {
    const char *arch;
    ffnn_loss loss;
    int standardize;
    int class_names;
} export_case;

static const char *names[] = {"shirt", "trouser \"long\"", "bag", "coat", "sandal", "boot"};

/* One model of architecture arch, initialised from seed, with c's loss,
 * standardisation (its statistics shifted by seed) and class names. */
static test_result make_model(const char *arch, const export_case *c, uint64_t seed,
                              ffnn_model **out_model)
{
    ffnn_model *m = NULL;
    CHECK_OK(ffnn_model_create(arch, &m));
    CHECK_OK(ffnn_model_init(m, seed));
    CHECK_OK(ffnn_model_set_loss(m, c->loss));
    const size_t in = ffnn_model_input_size(m), out = ffnn_model_output_size(m);
    if (c->standardize) {
        float *mean = malloc((in + out) * sizeof *mean);
        float *scale = malloc((in + out) * sizeof *scale);
        CHECK(mean && scale, "out of memory");
        for (size_t j = 0; j < in + out; j++)
            mean[j] = 0.25f * (float)((j + seed) % 5) - 0.5f,
            scale[j] = 0.5f + 0.125f * (float)((j + seed) % 7);
        CHECK_OK(ffnn_model_set_standardization(m, mean, scale,
                                                c->loss == FFNN_LOSS_MSE ? mean + in : NULL,
                                                c->loss == FFNN_LOSS_MSE ? scale + in : NULL));
        free(mean), free(scale);
    }
    if (c->class_names) {
        CHECK(ffnn_model_class_count(m) <= 6, "at most 6 classes");
        CHECK_OK(ffnn_model_set_class_names(m, names, ffnn_model_class_count(m)));
    }
    *out_model = m;
    return TEST_PASS;
}

/* Export c into DIR/mI.onnx with its rows DIR/mI.x, its expected metadata
 * DIR/mI.meta, and the predictor's outputs into want [ROWS, out]. An arch of
 * "A|B|..." is an ensemble of those members (ffnn_model_ensemble). */
static test_result prepare(const char *dir, int i, const export_case *c, float **want,
                           size_t *width)
{
    ffnn_model *m = NULL, *member[4] = {NULL, NULL, NULL, NULL};
    ffnn_predictor *p = NULL;
    char path[512], arches[256];
    int members = 0;
    snprintf(arches, sizeof arches, "%s", c->arch);
    for (char *a = strtok(arches, "|"); a && members < 4; a = strtok(NULL, "|"), members++)
        if (make_model(a, c, 40 + (uint64_t)i + 7 * (uint64_t)members, &member[members]) !=
            TEST_PASS)
            return TEST_FAIL;
    if (members == 1) {
        m = member[0];
    } else {
        CHECK_OK(ffnn_model_ensemble((const ffnn_model *const *)member, members, &m));
        for (int k = 0; k < members; k++)
            ffnn_model_free(member[k]);
    }
    const size_t in = ffnn_model_input_size(m), out = ffnn_model_output_size(m);
    float *x = malloc(ROWS * in * sizeof *x);
    *want = malloc(ROWS * out * sizeof **want);
    CHECK(x && *want, "out of memory");
    random_rows(x, ROWS * in, 900 + (uint64_t)i);
    size_t k = 0, levels[8];
    if (ffnn_model_embedding(m, 0, &k, levels, NULL, 8) == FFNN_OK) /* codes: levels, and */
        for (size_t r = 0; r < ROWS; r++)                            /* -1, n, 2.5 (zeros) */
            for (size_t j = 0; j < k; j++) {
                const size_t at = r * in + in - k + j, pick = (r * 7 + j * 3) % (levels[j] + 3);
                x[at] = pick < levels[j] ? (float)pick : pick == levels[j] ? -1.0f
                        : pick == levels[j] + 1 ? (float)levels[j] : 2.5f;
            }
    CHECK_OK(ffnn_predictor_create(m, FFNN_DEVICE_CPU, 1, 16, &p));
    CHECK_OK(ffnn_predictor_predict(p, x, ROWS, *want, NULL));
    ffnn_predictor_free(p);
    snprintf(path, sizeof path, "%s/m%d.onnx", dir, i);
    CHECK_OK(ffnn_model_export_onnx(m, path));
    snprintf(path, sizeof path, "%s/m%d.x", dir, i);
    CHECK(test_write_file(path, x, ROWS * in * sizeof *x) == 0, "writing %s", path);
    char arch[512], meta[1024];
    ffnn_model_arch_string(m, arch, sizeof arch);
    int n = snprintf(meta, sizeof meta, "arch=%s\nloss=%s\n", arch, ffnn_loss_name(c->loss));
    if (c->class_names) {
        n += snprintf(meta + n, sizeof meta - (size_t)n, "class_names=[");
        for (int k = 0; k < ffnn_model_class_count(m); k++)
            n += snprintf(meta + n, sizeof meta - (size_t)n, "%s\"%s\"", k ? "," : "",
                          k == 1 ? "trouser \\\"long\\\"" : names[k]);
        n += snprintf(meta + n, sizeof meta - (size_t)n, "]\n");
    }
    snprintf(path, sizeof path, "%s/m%d.meta", dir, i);
    CHECK(test_write_file(path, meta, strlen(meta)) == 0, "writing %s", path);
    *width = out;
    free(x);
    ffnn_model_free(m);
    return TEST_PASS;
}

static const export_case cases[] = {
    {"23-31identity-6", FFNN_LOSS_SOFTMAX_CE, 1, 1},
    {"23-31relu-17relu-6", FFNN_LOSS_SOFTMAX_CE, 0, 0},
    {"23-31sigmoid-17sigmoid-6", FFNN_LOSS_SOFTMAX_CE, 1, 0},
    {"23-31tanh-17tanh-6", FFNN_LOSS_SIGMOID_BCE, 0, 0},
    {"23-31leaky_relu0.2-17leaky_relu-6", FFNN_LOSS_SOFTMAX_CE, 0, 0},
    {"23-31elu0.5-17elu-6", FFNN_LOSS_SOFTMAX_CE, 0, 1},
    {"23-31softplus-17softplus-6", FFNN_LOSS_SOFTMAX_CE, 0, 0},
    {"23-31gelu-17gelu-6", FFNN_LOSS_SOFTMAX_CE, 1, 0},
    {"23-31gelu_tanh-17gelu_tanh-6", FFNN_LOSS_SOFTMAX_CE, 0, 0},
    {"23-31silu-17silu-6", FFNN_LOSS_SIGMOID_BCE, 0, 0},
    {"23-31mish-17mish-6", FFNN_LOSS_SOFTMAX_CE, 0, 0},
    {"23-31hardswish-17hardswish-6", FFNN_LOSS_SOFTMAX_CE, 0, 0},
    {"40-local5relu-local3samegelu-12mish-3", FFNN_LOSS_SOFTMAX_CE, 1, 1},
    {"40-local7:nobias-local5sametanh-1", FFNN_LOSS_SIGMOID_BCE, 0, 0},
    {"16-local3silu-8softplus-2sigmoid", FFNN_LOSS_MSE, 1, 0},
    {"12-9tanh:nobias-3", FFNN_LOSS_MSE, 1, 0},
    {"7-embed11x4_5x3_9x1-13relu-4", FFNN_LOSS_SOFTMAX_CE, 0, 1},
    {"2-embed6x5_3x2-1", FFNN_LOSS_SIGMOID_BCE, 0, 0},
    /* ensembles: each member's graph, then Mean */
    {"23-31relu-6|23-17tanh-9gelu-6|23-local3silu-6", FFNN_LOSS_SOFTMAX_CE, 1, 1},
    {"16-8relu-1|16-12tanh-1", FFNN_LOSS_SIGMOID_BCE, 1, 0},
    {"12-9tanh-3|12-5relu-7relu-3", FFNN_LOSS_MSE, 1, 0},
};
enum { CASES = sizeof cases / sizeof cases[0] };

TEST_DIR_CASE("onnx_matches_onnxruntime", "onnx", onnx_matches_onnxruntime)
{
    float *want[CASES] = {0};
    size_t width[CASES];
    char prefixes[CASES][256];
    char *argv[CASES + 3];
    const char *python = python_path();
    ffnn_model *probe = NULL;
    CHECK_OK(ffnn_model_create("2-2", &probe));
    CHECK_OK(ffnn_model_set_loss(probe, FFNN_LOSS_SOFTMAX_CE));
    char probe_path[512];
    snprintf(probe_path, sizeof probe_path, "%s/probe.onnx", dir);
    ffnn_status st = ffnn_model_export_onnx(probe, probe_path);
    ffnn_model_free(probe);
    if (st == FFNN_ERR_UNSUPPORTED)
        SKIP("this build has no ONNX export (%s)", ffnn_last_error());
    CHECK(st == FFNN_OK, "export: %s", ffnn_last_error());
    for (int i = 0; i < CASES; i++) {
        if (prepare(dir, i, &cases[i], &want[i], &width[i]) != TEST_PASS) {
            fprintf(stderr, "    case %d: %s\n", i, cases[i].arch);
            return TEST_FAIL;
        }
        CHECK(strlen(dir) < 200, "temporary directory name too long");
        snprintf(prefixes[i], sizeof prefixes[i], "%s/m%d", dir, i);
    }
    argv[0] = (char *)python;
    argv[1] = "tests/onnx_check.py";
    for (int i = 0; i < CASES; i++)
        argv[2 + i] = prefixes[i];
    argv[CASES + 2] = NULL;
    int rc = access(python, X_OK) == 0 ? test_run_argv(argv) : 3;
    if (rc == 3) {
        for (int i = 0; i < CASES; i++)
            free(want[i]);
        SKIP("%s cannot import onnx, onnxruntime and numpy (apt-get install python3-onnx; "
             "pip install onnxruntime)", python);
    }
    CHECK(rc == 0, "tests/onnx_check.py exited with %d (the checker or the metadata)", rc);
    for (int i = 0; i < CASES; i++) {
        char path[300];
        blob y;
        snprintf(path, sizeof path, "%.255s.y", prefixes[i]);
        CHECK(test_read_file(path, &y) == 0 && y.size == ROWS * width[i] * sizeof(float),
              "%s: %zu bytes, expected %zu", path, y.size, ROWS * width[i] * sizeof(float));
        const float *got = (const float *)y.data;
        double worst = 0.0;
        for (size_t k = 0; k < ROWS * width[i]; k++) {
            double e = fabs((double)got[k] - want[i][k]) / (1.0 + fabs((double)want[i][k]));
            worst = isfinite(got[k]) && e > worst ? e : isfinite(got[k]) ? worst : INFINITY;
        }
        free(y.data);
        CHECK(worst <= TOL, "%s (%s): onnxruntime vs the predictor, worst %.3g > %g",
              cases[i].arch, ffnn_loss_name(cases[i].loss), worst, TOL);
        free(want[i]);
    }
    return TEST_PASS;
}

/* A model without a loss and a missing directory are refused (no file left);
 * ffnn export writes a saved model's file and refuses a missing --onnx. */
TEST_DIR_CASE("onnx_export_errors", "onnx", onnx_export_errors)
{
    UNUSED_WHY();
    ffnn_model *m = NULL;
    char path[512];
    snprintf(path, sizeof path, "%s/none.onnx", dir);
    CHECK_OK(ffnn_model_create("4-3", &m));
    ffnn_status st = ffnn_model_export_onnx(m, path);
    CHECK(st == FFNN_ERR_INVALID_ARGUMENT || st == FFNN_ERR_UNSUPPORTED,
          "a model without a loss: %d", (int)st);
    if (st == FFNN_ERR_INVALID_ARGUMENT)
        CHECK(strstr(ffnn_last_error(), "ffnn_model_set_loss"), "%s", ffnn_last_error());
    CHECK(access(path, F_OK) != 0, "a file was written for a refused model");
    CHECK_OK(ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE));
    snprintf(path, sizeof path, "%s/no/such/dir/m.onnx", dir);
    st = ffnn_model_export_onnx(m, path);
    CHECK(st == FFNN_ERR_IO || st == FFNN_ERR_UNSUPPORTED, "a missing directory: %d", (int)st);
    /* the CLI: a saved model exported, and a missing --onnx refused */
    char model[512], onnx[512], out[512];
    snprintf(model, sizeof model, "%s/m.safetensors", dir);
    snprintf(onnx, sizeof onnx, "%s/m.onnx", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE);
    CHECK_OK(ffnn_model_save(m, model));
    ffnn_model_free(m);
    const char *missing[] = {"export", "--model", model, NULL};
    CHECK(cli_run(missing, out, NULL) == 2 && file_contains(out, "--onnx"),
          "ffnn export without --onnx");
    const char *args[] = {"export", "--model", model, "--onnx", onnx, NULL};
    int rc = cli_run(args, out, NULL);
    if (rc == 1 && file_contains(out, "protobuf-c"))
        return TEST_PASS; /* a build without the export: said so */
    CHECK(rc == 0 && access(onnx, F_OK) == 0, "ffnn export exited with %d", rc);
    return TEST_PASS;
}
