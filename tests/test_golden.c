/* test_golden.c - suite "golden": bit-for-bit stability of training.
 *
 * For each way of running a training step - the cpu reference, the omp backend
 * (2 threads; its lines name the instruction set of its matmuls, e.g. omp-avx512)
 * and every cuda strategy - times {sgd, adam} times {the seed-000 net
 * on 1,600 Fashion-MNIST images, a local1d net on synth:motif}: 2 epochs of 25 steps
 * (50 optimizer steps, each launch as long as the strategy's default), then every
 * per-step loss (as C99 hex floats: exact) and zlib's CRC-32 of the final
 * parameters. tests/golden/steps50.txt holds the lines recorded before the layered
 * redesign; each line of this run must equal its recorded line
 * character for character. A case a strategy does not take is recorded as
 * "unsupported" and must stay so.
 *
 * FFNN_GOLDEN_RECORD=FILE appends this run's lines to FILE instead of comparing
 * (how the golden file was made: cpu/omp on the CI machine, cuda on the H200).
 * The cuda lines are compared only where a GPU is present; a line missing from the
 * golden file fails the test (nothing is compared against nothing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "check.h"
#include "ffnn.h"
#include "backend/omp/omp_kernels.h"

static const char *fashion_dir = "/usr/share/datasets/fashion-mnist";
#define GOLDEN_FILE "tests/golden/steps50.txt"
#define GOLDEN_EPOCHS 2
#define GOLDEN_LINE 4096

typedef struct golden_way {
    const char *name;       /* "cpu", "omp", "cuda-<strategy>"                   */
    ffnn_device device;
    int threads;
    const char *strategy;   /* strategy name: cuda's, reference, NULL for omp     */
} golden_way;

static const golden_way ways[] = {
    {"cpu", FFNN_DEVICE_CPU, 1, "reference"},           {"omp", FFNN_DEVICE_CPU, 2, NULL},
    {"cuda-naive", FFNN_DEVICE_CUDA, 1, "naive"}, {"cuda-tiled", FFNN_DEVICE_CUDA, 1, "tiled"},
    {"cuda-fused", FFNN_DEVICE_CUDA, 1, "fused"}, {"cuda-graph", FFNN_DEVICE_CUDA, 1, "graph"},
    {"cuda-persistent", FFNN_DEVICE_CUDA, 1, "persistent"},
    {"cuda-cublas", FFNN_DEVICE_CUDA, 1, "cublas"},
};

/* One case's line: "<way> <opt> <net> unsupported" or
 * "<way> <opt> <net> <loss 1> ... <loss 50> crc=<8 hex digits>". */
static test_result run_case(const golden_way *w, ffnn_optimizer opt, const char *net,
                            const char *arch, const ffnn_dataset *train, char *line,
                            size_t line_size, char *why, size_t why_size)
{
    (void)why, (void)why_size;
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    CHECK_OK(ffnn_model_create(arch, &m));
    CHECK_OK(ffnn_model_init(m, 7));
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.batch_size = 64;
    cfg.device = w->device;
    cfg.threads = w->threads;
    cfg.optimizer = opt;
    cfg.learning_rate = opt == FFNN_OPT_ADAM ? 0.001f : 0.05f;
    cfg.seed = 3;
    if (w->strategy)
        CHECK_OK(ffnn_strategy_from_name(w->strategy, &cfg.strategy));
    /* the omp matmuls differ by instruction set: its lines name the one used */
    const int omp = strcmp(w->name, "omp") == 0;
    int n = snprintf(line, line_size, "%s%s%s %s %s", w->name, omp ? "-" : "",
                     omp ? ffnn_omp_gemm_best()->name : "", ffnn_optimizer_name(opt), net);
    ffnn_status st = ffnn_trainer_create(m, train, &cfg, &t);
    if (st == FFNN_ERR_UNSUPPORTED) {
        snprintf(line + n, line_size - (size_t)n, " unsupported");
        ffnn_model_free(m);
        return TEST_PASS;
    }
    CHECK(st == FFNN_OK, "%s: %s", line, ffnn_last_error());
    for (int e = 0; e < GOLDEN_EPOCHS; e++) {
        ffnn_epoch_stats stats;
        const double *losses;
        size_t count;
        CHECK_OK(ffnn_trainer_run_epoch(t, NULL, NULL, &stats));
        CHECK_OK(ffnn_trainer_step_losses(t, &losses, &count));
        for (size_t s = 0; s < count && (size_t)n < line_size - 40; s++)
            n += snprintf(line + n, line_size - (size_t)n, " %a", losses[s]);
    }
    CHECK_OK(ffnn_trainer_sync_model(t));
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, (const Bytef *)ffnn_model_parameters(m),
                (uInt)(ffnn_model_parameter_count(m) * sizeof(float)));
    CHECK((size_t)n < line_size - 20, "line too long");
    snprintf(line + n, line_size - (size_t)n, " crc=%08lx", (unsigned long)crc);
    ffnn_trainer_free(t);
    ffnn_model_free(m);
    return TEST_PASS;
}

/* The recorded line that starts with the same "<way> <opt> <net> " as line, or NULL. */
static const char *find_golden(const char *golden, const char *line, size_t *len)
{
    const char *s1 = strchr(line, ' '), *s2 = s1 ? strchr(s1 + 1, ' ') : NULL;
    const char *s3 = s2 ? strchr(s2 + 1, ' ') : NULL;
    if (!s3)
        return NULL;
    size_t key = (size_t)(s3 - line) + 1;
    for (const char *p = golden; p && *p;) {
        const char *end = strchr(p, '\n');
        size_t l = end ? (size_t)(end - p) : strlen(p);
        if (l > key && strncmp(p, line, key) == 0) {
            *len = l;
            return p;
        }
        p = end ? end + 1 : NULL;
    }
    return NULL;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        if (size >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)size + 1))) {
            size_t got = fread(buf, 1, (size_t)size, f);
            buf[got] = '\0';
        }
    }
    fclose(f);
    return buf;
}

static test_result golden_run(int cuda, char *why, size_t why_size)
{
    const int have_gpu = ffnn_has_cuda() && ffnn_cuda_device_count() > 0;
    if (cuda && !have_gpu)
        SKIP("no CUDA GPU");
    ffnn_dataset *fashion = NULL, *fashion_test = NULL, *small = NULL;
    ffnn_dataset *motif = NULL, *motif_test = NULL;
    if (ffnn_dataset_load_idx_dir(fashion_dir, &fashion, &fashion_test) != FFNN_OK)
        SKIP("Fashion-MNIST missing: %s", ffnn_last_error());
    CHECK_OK(ffnn_dataset_slice(fashion, 0, 1600, &small));
    CHECK_OK(ffnn_dataset_synthetic("synth:motif:1600", 5, &motif, &motif_test));
    const char *record = getenv("FFNN_GOLDEN_RECORD");
    char *golden = record ? NULL : read_text(GOLDEN_FILE);
    CHECK(record || golden, "cannot read %s (run the tests from the repository root)",
          GOLDEN_FILE);
    FILE *out = record ? fopen(record, "a") : NULL;
    CHECK(!record || out, "cannot open %s", record);
    static char line[GOLDEN_LINE];
    int compared = 0;
    test_result r = TEST_PASS;
    for (size_t w = 0; w < sizeof ways / sizeof ways[0] && r == TEST_PASS; w++) {
        if ((ways[w].device == FFNN_DEVICE_CUDA) != cuda)
            continue;
        for (int o = 0; o < 2 && r == TEST_PASS; o++) {
            const ffnn_optimizer opt = o ? FFNN_OPT_ADAM : FFNN_OPT_SGD;
            for (int k = 0; k < 2 && r == TEST_PASS; k++) {
                const char *net = k ? "local1d" : "seed000";
                const char *arch = k ? "64-local3samerelu-local5tanh-2" : "784-256relu-10";
                r = run_case(&ways[w], opt, net, arch, k ? motif : small, line, sizeof line,
                             why, why_size);
                if (r != TEST_PASS)
                    break;
                if (out) {
                    fprintf(out, "%s\n", line);
                    continue;
                }
                size_t len = 0;
                const char *g = find_golden(golden, line, &len);
                if (!g) {
                    fprintf(stderr, "    no recorded line for: %.60s\n", line);
                    r = TEST_FAIL;
                } else if (len != strlen(line) || strncmp(g, line, len) != 0) {
                    fprintf(stderr, "    recorded: %.*s\n    this run: %s\n", (int)len, g,
                            line);
                    r = TEST_FAIL;
                }
                compared++;
            }
        }
    }
    if (out)
        fclose(out);
    free(golden);
    ffnn_dataset_free(small);
    ffnn_dataset_free(fashion);
    ffnn_dataset_free(fashion_test);
    ffnn_dataset_free(motif);
    ffnn_dataset_free(motif_test);
    if (r == TEST_PASS && record)
        SKIP("recorded to %s, nothing compared", record);
    (void)compared;
    return r;
}

static test_result golden_cpu(char *why, size_t why_size) { return golden_run(0, why, why_size); }
static test_result golden_cuda(char *why, size_t why_size) { return golden_run(1, why, why_size); }

const test_case golden_tests[] = {
    {"golden_cpu_omp_50_steps_bit_for_bit", golden_cpu},
    {"golden_cuda_strategies_50_steps_bit_for_bit", golden_cuda},
};
const size_t golden_tests_count = sizeof golden_tests / sizeof golden_tests[0];
