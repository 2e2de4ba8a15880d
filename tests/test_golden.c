/* test_golden.c - suite "golden": bit-for-bit stability of training.
 *
 * For each way of running a training step - the cpu reference, the omp backend
 * (2 threads) with each of its matmul kernel sets (avx512, avx2, baseline: forced
 * through FFNN_OMP_ISA, each set gives its own last bits) and every cuda strategy -
 * times {sgd, adam} times {the 784-256relu-10 net on 1,600 Fashion-MNIST images, a
 * local1d net on synth:motif}: 2 epochs of 25 steps (50 optimizer steps, each launch
 * as long as the strategy's default), then every per-step loss (as C99 hex floats:
 * exact) and zlib's CRC-32 of the final parameters. tests/golden/steps50.txt holds
 * the recorded lines; each line of this run must equal its recorded line character
 * for character. A case a strategy does not take is recorded as "unsupported" and
 * must stay so.
 *
 * One test per way: a kernel set this CPU cannot run (e.g. avx512 on an AVX2-only
 * machine) and the cuda strategies without a GPU are skipped, naming why; the
 * baseline set and the reference run on every machine. Each test prints the lines
 * it compared.
 *
 * FFNN_GOLDEN_RECORD=FILE appends this run's lines to FILE instead of comparing
 * (how the golden file was made: cpu/omp on the CI machine, cuda on the H200). A
 * line missing from the golden file fails the test (nothing is compared against
 * nothing). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "check.h"
#include "test_fixtures.h"
#include "ffnn.h"
#include "backend/omp/omp_kernels.h"

static const char *fashion_dir = "/usr/share/datasets/fashion-mnist";
#define GOLDEN_FILE "tests/golden/steps50.txt"
#define GOLDEN_EPOCHS 2
#define GOLDEN_LINE 4096

typedef struct golden_way {
    const char *name;       /* the lines' first word: "cpu", "omp-<set>", "cuda-<strategy>" */
    ffnn_device device;
    int threads;
    const char *strategy;   /* strategy name: cuda's, reference, NULL for omp     */
    const char *omp_isa;    /* omp: the kernel set forced through FFNN_OMP_ISA    */
} golden_way;

enum { WAY_CPU, WAY_OMP_AVX512, WAY_OMP_AVX2, WAY_OMP_BASELINE, WAY_CUDA_FIRST };

static const golden_way ways[] = {
    {"cpu", FFNN_DEVICE_CPU, 1, "reference", NULL},
    {"omp-avx512", FFNN_DEVICE_CPU, 2, NULL, "avx512"},
    {"omp-avx2", FFNN_DEVICE_CPU, 2, NULL, "avx2"},
    {"omp-baseline", FFNN_DEVICE_CPU, 2, NULL, "baseline"},
    {"cuda-naive", FFNN_DEVICE_CUDA, 1, "naive", NULL},
    {"cuda-tiled", FFNN_DEVICE_CUDA, 1, "tiled", NULL},
    {"cuda-fused", FFNN_DEVICE_CUDA, 1, "fused", NULL},
    {"cuda-graph", FFNN_DEVICE_CUDA, 1, "graph", NULL},
    {"cuda-persistent", FFNN_DEVICE_CUDA, 1, "persistent", NULL},
    {"cuda-cublas", FFNN_DEVICE_CUDA, 1, "cublas", NULL},
};

/* FFNN_OMP_ISA set to isa (NULL: unset) for one trainer's creation; *saved holds the
 * caller's value to put back (restore_isa). */
static void force_isa(const char *isa, char *saved, size_t saved_size, int *had)
{
    const char *prev = getenv("FFNN_OMP_ISA");
    *had = prev != NULL;
    snprintf(saved, saved_size, "%s", prev ? prev : "");
    if (isa)
        setenv("FFNN_OMP_ISA", isa, 1);
    else
        unsetenv("FFNN_OMP_ISA");
}

static void restore_isa(const char *saved, int had)
{
    if (had)
        setenv("FFNN_OMP_ISA", saved, 1);
    else
        unsetenv("FFNN_OMP_ISA");
}

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
    int n = snprintf(line, line_size, "%s %s %s", w->name, ffnn_optimizer_name(opt), net);
    /* the omp matmuls differ by instruction set: the set is forced for the trainer
     * (the backend picks its kernels when it is created) */
    char saved[64];
    int had = 0;
    force_isa(w->omp_isa, saved, sizeof saved, &had);
    ffnn_status st = ffnn_trainer_create(m, train, &cfg, &t);
    restore_isa(saved, had);
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
    TEST_FREE(t, m);
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

/* Ways [first, last) against the golden file (or recorded, see above). */
static test_result golden_run(size_t first, size_t last, char *why, size_t why_size)
{
    const int have_gpu = ffnn_has_cuda() && ffnn_cuda_device_count() > 0;
    if (ways[first].device == FFNN_DEVICE_CUDA && !have_gpu)
        SKIP("no CUDA GPU");
    if (ways[first].omp_isa && !ffnn_omp_gemm_named(ways[first].omp_isa))
        SKIP("this CPU cannot run the omp %s kernels", ways[first].omp_isa);
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
    for (size_t w = first; w < last && r == TEST_PASS; w++) {
        for (int o = 0; o < 2 && r == TEST_PASS; o++) {
            const ffnn_optimizer opt = o ? FFNN_OPT_ADAM : FFNN_OPT_SGD;
            for (int k = 0; k < 2 && r == TEST_PASS; k++) {
                const char *net = k ? "local1d" : "seed000"; /* the report 000 net */
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
                if (r == TEST_PASS)
                    printf("      compared: %.40s\n", line);
            }
        }
    }
    if (out)
        fclose(out);
    free(golden);
    TEST_FREE(small, fashion, fashion_test, motif, motif_test);
    if (r == TEST_PASS && record)
        SKIP("recorded to %s, nothing compared", record);
    CHECK(r != TEST_PASS || compared > 0, "no line compared");
    return r;
}

#define ONE_WAY(test, fn, way)                                                  \
    static test_result fn(char *why, size_t why_size)                          \
    {                                                                           \
        return golden_run(way, (way) + 1, why, why_size);                      \
    }                                                                           \
    TEST_CASE(test, fn)
ONE_WAY("golden_reference_50_steps_bit_for_bit", golden_reference, WAY_CPU);
ONE_WAY("golden_omp_avx512_50_steps_bit_for_bit", golden_omp_avx512, WAY_OMP_AVX512);
ONE_WAY("golden_omp_avx2_50_steps_bit_for_bit", golden_omp_avx2, WAY_OMP_AVX2);
ONE_WAY("golden_omp_baseline_50_steps_bit_for_bit", golden_omp_baseline, WAY_OMP_BASELINE);
TEST("golden_cuda_strategies_50_steps_bit_for_bit", golden_cuda)
{
    return golden_run(WAY_CUDA_FIRST, sizeof ways / sizeof ways[0], why, why_size);
}
