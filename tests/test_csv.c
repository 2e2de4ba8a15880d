/* test_csv.c - the CSV reader's numbers and memory: ffnn_csv_parse_float against
 * strtof over every class of float32 bit pattern and over random decimals; the
 * loaded matrix against strtof of every cell, whichever path a record takes (one
 * pass or split into fields), and the same data set whatever the thread count;
 * text categories and missing cells as a raw table; the 8 GiB gzip bomb refused
 * with the estimate at a small peak. */
#define _DEFAULT_SOURCE /* wait4 */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "test_fixtures.h"
#include "cli_run.h"
#include "data/csv.h"
#include "data/dataset.h"
#include "data/table.h"
#include "ffnn.h"
#include "test_files.h"

static uint64_t next_u64(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Parse text both ways; 0 when ffnn_csv_parse_float equals strtof bit for bit
 * (or both refuse: strtof's infinity is a refusal here). */
static int compare_one(const char *text, char *bad, size_t bad_size)
{
    char *end;
    float want = strtof(text, &end), got = 0.0f;
    int want_ok = *end == '\0' && isfinite(want);
    int got_ok = ffnn_csv_parse_float(text, strlen(text), &got);
    uint32_t a, b;
    memcpy(&a, &want, 4);
    memcpy(&b, &got, 4);
    if (want_ok == got_ok && (!want_ok || a == b))
        return 0;
    snprintf(bad, bad_size, "'%s': strtof %s%.9g (0x%08x), ffnn %s%.9g (0x%08x)", text,
             want_ok ? "" : "refuses ", (double)want, a, got_ok ? "" : "refuses ",
             (double)got, b);
    return 1;
}

TEST("data_csv_parse_float_vs_strtof", parse_float_vs_strtof)
{
    static const char *const formats[] = {"%.9g", "%.6g", "%.8e", "%.3e", "%.17g", "%.4f",
                                          "%.12f", "%.1f", "%g", "%.25g"};
    char text[128], bad[256];
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    size_t checked = 0;
    /* bit patterns: every exponent (subnormals, normals, up to FLT_MAX), each with
     * random mantissas, mantissa 0 (powers of two) and all ones */
    for (uint32_t e = 0; e < 255; e++) {
        for (int k = 0; k < 200; k++) {
            uint32_t mant = k == 0 ? 0 : k == 1 ? 0x7fffff : (uint32_t)next_u64(&s) & 0x7fffff;
            uint32_t bits = (e << 23) | mant | (k & 2 ? 0x80000000u : 0);
            float f;
            memcpy(&f, &bits, 4);
            for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
                snprintf(text, sizeof text, formats[i], (double)f);
                CHECK(compare_one(text, bad, sizeof bad) == 0, "%s", bad);
                checked++;
            }
            /* the exact midpoint to the next float up, and just beside it: ties to even */
            uint32_t up = bits + 1;
            float g;
            memcpy(&g, &up, 4);
            if (isfinite(g)) {
                double mid = ((double)f + (double)g) / 2.0;
                snprintf(text, sizeof text, "%.60g", mid);
                CHECK(compare_one(text, bad, sizeof bad) == 0, "%s", bad);
                snprintf(text, sizeof text, "%.17g", nextafter(mid, 0.0));
                CHECK(compare_one(text, bad, sizeof bad) == 0, "%s", bad);
                snprintf(text, sizeof text, "%.17g", nextafter(mid, INFINITY));
                CHECK(compare_one(text, bad, sizeof bad) == 0, "%s", bad);
                checked += 3;
                /* the midpoint to 8-17 significant digits: short mantissas (the
                 * fast path's) within a few units of a rounding boundary */
                for (int digits = 8; digits <= 17; digits++) {
                    snprintf(text, sizeof text, "%.*e", digits - 1, mid);
                    CHECK(compare_one(text, bad, sizeof bad) == 0, "%s", bad);
                    checked++;
                }
            }
        }
    }
    /* random decimals: 1-25 digits, a point anywhere, exponents -60..60, and forms
     * a CSV holds (+1, .5, 5., 1E+05, 007) */
    for (int k = 0; k < 300000; k++) {
        int n = 1 + (int)(next_u64(&s) % 25), point = (int)(next_u64(&s) % (unsigned)(n + 2));
        size_t w = 0;
        uint64_t r = next_u64(&s);
        if (r & 1)
            text[w++] = r & 2 ? '-' : '+';
        for (int i = 0; i < n; i++) {
            if (i == point)
                text[w++] = '.';
            text[w++] = (char)('0' + next_u64(&s) % 10);
        }
        if (point == n)
            text[w++] = '.';
        if (r & 4)
            w += (size_t)snprintf(text + w, sizeof text - w, r & 8 ? "e%d" : "E%+d",
                                  (int)(next_u64(&s) % 121) - 60);
        text[w] = '\0';
        CHECK(compare_one(text, bad, sizeof bad) == 0, "%s", bad);
        checked++;
    }
    /* refused: not decimals, or beyond float32 */
    static const char *const no[] = {"", "-", ".", "e5", "1e", "1e+", "nan", "inf", "0x1p3",
                                     "1.2.3", "--1", "1e39", "-3.5e38", "1,5", "1 2"};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        float v;
        CHECK(!ffnn_csv_parse_float(no[i], strlen(no[i]), &v), "'%s' accepted as %g", no[i],
              (double)v);
    }
    printf("     %zu decimal texts: every one parsed to strtof's float32, bit for bit\n",
           checked);
    return TEST_PASS;
}

/* A messy table of n rows: an id, a number with missing cells, a text category
 * with missing cells, a quoted field, a class. */
static int write_messy(const char *path, int n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    static const char *const city[] = {"Lyon", "Oslo", "\"San Jose, CA\"", "Kyiv", "NA", ""};
    uint64_t s = 7;
    fprintf(f, "id,x,city,y,label\n");
    for (int i = 0; i < n; i++) {
        uint64_t r = next_u64(&s);
        if (r % 11 == 0)
            fprintf(f, "%d,,%s,%.5f,%c\n", i, city[r % 6], (double)(r % 1000) / 7.0,
                    'a' + (int)(r % 3));
        else
            fprintf(f, "%d,%.4f,%s,%.5f,%c\n", i, (double)(r % 100000) / 1000.0 - 50.0,
                    city[r % 6], (double)(r % 1000) / 7.0, 'a' + (int)(r % 3));
    }
    return fclose(f);
}

/* A numeric table of n rows x 8 columns written in many forms - plain decimals
 * ("%.4f", "%.9g", exponents, long mantissas, subnormals), and in some rows
 * spaces around a number, a quoted number, a CRLF line end, a blank line - with
 * want [n, 7] the strtof value of every feature cell and labels [n] the last. */
static int write_numbers(const char *path, size_t n, float *want, int32_t *labels)
{
    static const char *const formats[] = {"%.4f", "%.9g", "%.3e", "%.17g", "%g", "%.1f",
                                          "%.6E", "%.25g"};
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    uint64_t s = 42;
    fprintf(f, "a,b,c,d,e,f,g,label\n");
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next_u64(&s);
        int odd = r % 50 == 0; /* a record the one-pass parse leaves to csv_split */
        for (int j = 0; j < 7; j++) {
            uint64_t q = next_u64(&s);
            double v;
            if (q % 97 == 0) { /* any float32 bit pattern, subnormals included */
                uint32_t bits = (uint32_t)(q >> 32) % 0x7f000000u; /* below 2^127 */
                float fv;
                memcpy(&fv, &bits, 4);
                v = (double)fv;
            } else {
                v = ((double)(q >> 11) / 9007199254740992.0 - 0.5) * 8.0;
            }
            char cell[96], *end;
            snprintf(cell, sizeof cell, formats[(q >> 3) % 8], v);
            want[i * 7 + (size_t)j] = strtof(cell, &end);
            if (odd && j == (int)(r >> 8) % 7)
                fprintf(f, (r >> 16) & 1 ? " %s ," : "\"%s\",", cell);
            else
                fprintf(f, "%s,", cell);
        }
        labels[i] = (int32_t)((r >> 20) % 5);
        fprintf(f, "%d%s", labels[i], odd && (r >> 17) & 1 ? "\r\n" : "\n");
        if (r % 1000 == 1)
            fprintf(f, "\n");
    }
    return fclose(f);
}

/* Every cell of a numeric table equals strtof's value, bit for bit, for 1, 2, 3
 * and 8 threads (and whichever path each record took); the messy table (texts,
 * quotes, missing cells) reads the same for 1-3 threads. */
TEST_DIR_CASE("data_csv_threads_same_result", "csv", csv_threads_same_result)
{
    UNUSED_WHY();
    char path[512];
    snprintf(path, sizeof path, "%s/numbers.csv", dir);
    const size_t n = 120000; /* 13 MB: two chunks */
    float *want = malloc(n * 7 * sizeof *want);
    int32_t *labels = malloc(n * sizeof *labels);
    CHECK(want && labels && write_numbers(path, n, want, labels) == 0, "cannot write %s", path);
    static const int counts[] = {1, 2, 3, 8};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        ffnn_dataset *d = NULL;
        CHECK_OK(csv_load(path, NULL, counts[c], &d));
        CHECK(ffnn_dataset_count(d) == n && ffnn_dataset_features(d) == 7,
              "%d threads: %zu rows x %zu features, expected %zu x 7", counts[c],
              ffnn_dataset_count(d), ffnn_dataset_features(d), n);
        const float *x = ffnn_dataset_float_features(d);
        const int32_t *y = ffnn_dataset_labels(d);
        for (size_t k = 0; k < n * 7; k++)
            CHECK(memcmp(&x[k], &want[k], 4) == 0, "%d threads: row %zu column %zu read %.9g, "
                  "strtof %.9g", counts[c], k / 7, k % 7, (double)x[k], (double)want[k]);
        for (size_t i = 0; i < n; i++)
            CHECK(y[i] == labels[i], "%d threads: row %zu label %d, expected %d", counts[c], i,
                  y[i], labels[i]);
        ffnn_dataset_free(d);
    }
    free(want);
    free(labels);
    printf("     %zu x 7 cells equal strtof's for 1, 2, 3 and 8 threads\n", n);

    snprintf(path, sizeof path, "%s/messy.csv", dir);
    CHECK(write_messy(path, 150000) == 0, "cannot write %s", path);
    ffnn_csv_options o = ffnn_csv_options_default();
    o.ignore = "id";
    o.text_categories = 1;
    o.missing = 1;
    ffnn_dataset *ds[3] = {NULL, NULL, NULL};
    for (int t = 0; t < 3; t++)
        CHECK_OK(csv_load(path, &o, t + 1, &ds[t]));
    const ffnn_table *tb = ffnn_dataset_table(ds[0]);
    CHECK(ffnn_dataset_count(ds[0]) == 150000 && ffnn_dataset_features(ds[0]) == 3 && tb &&
              tb->count == 3 && tb->col[1].categorical && !tb->col[0].categorical &&
              tb->col[1].level_count == 4 && tb->col[0].missing > 0 && tb->col[1].missing > 0,
          "expected 150000 rows of x, city (4 levels, missing cells), y");
    int quoted = 0;
    for (size_t k = 0; k < tb->col[1].level_count; k++)
        quoted |= strcmp(tb->col[1].levels[k], "San Jose, CA") == 0;
    CHECK(quoted, "the quoted level 'San Jose, CA' is not among the levels");
    for (int t = 1; t < 3; t++)
        CHECK(memcmp(ffnn_dataset_float_features(ds[0]), ffnn_dataset_float_features(ds[t]),
                     150000 * 3 * sizeof(float)) == 0 &&
                  memcmp(ffnn_dataset_labels(ds[0]), ffnn_dataset_labels(ds[t]),
                         150000 * sizeof(int32_t)) == 0,
              "%d threads read other values than 1 thread", t + 1);
    /* the refusals the defaults keep, naming line and column */
    ffnn_dataset *no = NULL;
    o = ffnn_csv_options_default();
    o.ignore = "id";
    CHECK(ffnn_dataset_load_csv(path, &o, &no) == FFNN_ERR_FORMAT &&
              strstr(ffnn_last_error(), "column 3 ('city')"),
          "text without text_categories: %s", ffnn_last_error());
    o.text_categories = 1;
    CHECK(ffnn_dataset_load_csv(path, &o, &no) == FFNN_ERR_FORMAT &&
              strstr(ffnn_last_error(), "missing value"),
          "a missing cell without missing: %s", ffnn_last_error());
    for (int t = 0; t < 3; t++)
        ffnn_dataset_free(ds[t]);
    /* a delimiter that a number may hold ('-'): each record split first, so "1--2-0" is
     * the four fields 1, "", 2, 0 (a ragged row), not 1, -2, 0 */
    snprintf(path, sizeof path, "%s/minus.csv", dir);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs("x-y-label\n1-2-0\n1--2-0\n", f) >= 0 && fclose(f) == 0, "cannot write %s",
          path);
    o = ffnn_csv_options_default();
    o.delimiter = '-';
    CHECK(ffnn_dataset_load_csv(path, &o, &no) == FFNN_ERR_FORMAT &&
              strstr(ffnn_last_error(), "line 3") && strstr(ffnn_last_error(), "ragged"),
          "'1--2-0' with delimiter '-': %s", ffnn_last_error());
    return TEST_PASS;
}

TEST_DIR_CASE("data_csv_missing_target", "csv", csv_missing_target)
{
    UNUSED_WHY();
    char path[512];
    CHECK(test_write_text_in(dir, "t.csv", "a,b,y\n1,2,x\n3,4,\n5,NA,z\n7,8,NA\n", path,
                             sizeof path) == 0, "cannot write");
    ffnn_csv_options o = ffnn_csv_options_default();
    o.missing = 1;
    ffnn_dataset *ds = NULL;
    CHECK(ffnn_dataset_load_csv(path, &o, &ds) == FFNN_ERR_FORMAT &&
              strstr(ffnn_last_error(), "line 3, column 3 ('y')") &&
              strstr(ffnn_last_error(), "--drop-missing-target"),
          "a missing target: %s", ffnn_last_error());
    o.drop_missing_target = 1;
    CHECK_OK(ffnn_dataset_load_csv(path, &o, &ds));
    const ffnn_table *tb = ffnn_dataset_table(ds);
    const float *x = ffnn_dataset_float_features(ds);
    CHECK(ffnn_dataset_count(ds) == 2 && tb && tb->dropped == 2 && x[0] == 1.0f &&
              x[2] == 5.0f && isnan(x[3]) && ffnn_dataset_classes(ds) == 2,
          "expected rows 1 and 3 kept (2 dropped), b of row 3 NaN");
    ffnn_table *enc = NULL;
    CHECK_OK(ffnn_table_fit(ds, &enc));
    CHECK(enc->width == 3 && enc->col[1].indicator && enc->col[1].median == 2.0f &&
              !enc->col[0].indicator,
          "expected a, b (median 2) and b's indicator: width %zu", enc->width);
    ffnn_dataset *e = NULL;
    CHECK_OK(ffnn_table_encode(enc, ds, NULL, &e));
    const float *y = ffnn_dataset_float_features(e), want[6] = {1, 2, 0, 5, 2, 1};
    CHECK(memcmp(y, want, sizeof want) == 0, "encoded %g %g %g / %g %g %g", y[0], y[1], y[2],
          y[3], y[4], y[5]);
    TEST_FREE(enc, e, ds);
    return TEST_PASS;
}

/* Run `bin train --data data --epochs 1 --device cpu` (stderr to out, RLIMIT_AS 4 GiB)
 * under a small parent, python3, that reports the child's exit code and peak RSS:
 * a child forked from this test process would inherit its resident size into
 * ru_maxrss across exec (Linux keeps the old mm's high-water mark). 0 on success. */
static int peak_rss_kb(const char *dir, const char *out, const char *bin, const char *data,
                       int *code, long *kb)
{
    static const char measure[] =
        "import os, resource, sys\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
        "    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)\n"
        "    os.dup2(fd, 2)\n"
        "    os.execv(sys.argv[2], sys.argv[2:])\n"
        "_, status, ru = os.wait4(pid, 0)\n"
        "print(os.waitstatus_to_exitcode(status), ru.ru_maxrss)\n";
    char rss_path[600];
    snprintf(rss_path, sizeof rss_path, "%s/rss.txt", dir);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        FILE *o = freopen(rss_path, "w", stdout);
        (void)o;
        execl("/usr/bin/python3", "python3", "-c", measure, out, bin, "train", "--data", data,
              "--epochs", "1", "--device", "cpu", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    FILE *r = fopen(rss_path, "r");
    int got = r ? fscanf(r, "%d %ld", code, kb) : 0;
    if (r)
        fclose(r);
    return got == 2 ? 0 : -1;
}

/* An 8 GiB gzip stream of "0,0,0,0,0,0,0,0\n" (512 members of 16 MiB each, some
 * 8 MB on disk): ffnn train must refuse it with the estimate, its peak RSS under
 * 100 MB over the CLI's start-up. RLIMIT_AS of the child bounds what "available" means on any machine. */
TEST_DIR_CASE("data_csv_gzip_bomb_refused", "csv", csv_gzip_bomb_refused)
{
    const char *bin = cli_binary();
    if (!bin)
        SKIP("needs build/ffnn (FFNN_BIN)");
#if defined(__SANITIZE_ADDRESS__)
    SKIP("under ASan: RLIMIT_AS and the peak RSS mean nothing (the plain build runs it)");
#endif
    char path[512], out[600];
    snprintf(path, sizeof path, "%s/bomb.csv.gz", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    size_t block = 16u << 20;
    char *plain = malloc(block);
    uLongf zcap = compressBound(block) + 64;
    unsigned char *member = malloc(zcap);
    CHECK(plain && member, "out of memory");
    for (size_t i = 0; i < block; i += 16)
        memcpy(plain + i, "0,0,0,0,0,0,0,0\n", 16);
    z_stream z;
    memset(&z, 0, sizeof z);
    CHECK(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) == Z_OK, "zlib");
    z.next_in = (unsigned char *)plain;
    z.avail_in = (uInt)block;
    z.next_out = member;
    z.avail_out = (uInt)zcap;
    CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
    size_t msize = zcap - z.avail_out;
    deflateEnd(&z);
    FILE *f = fopen(path, "wb");
    CHECK(f, "cannot write %s", path);
    for (int k = 0; k < 512; k++)
        CHECK(fwrite(member, 1, msize, f) == msize, "short write");
    CHECK(fclose(f) == 0, "cannot write %s", path);
    free(plain);
    free(member);
    if (access("/usr/bin/python3", X_OK) != 0)
        SKIP("needs /usr/bin/python3 to measure the child's peak RSS");
    /* the CLI's own start-up (its shared libraries: cuBLAS, cuBLASLt and NCCL in a
     * CUDA build are some 200 MB resident) measured on a file that does not exist;
     * the bomb may add under 100 MB to it */
    char absent[600], out0[600];
    snprintf(absent, sizeof absent, "%s/absent.csv", dir);
    snprintf(out0, sizeof out0, "%s/out0.txt", dir);
    int code0 = -1, code = -1;
    long base_kb = -1, peak_kb = -1;
    CHECK(peak_rss_kb(dir, out0, bin, absent, &code0, &base_kb) == 0,
          "the python3 measurement failed; see %s/rss.txt", dir);
    CHECK(peak_rss_kb(dir, out, bin, path, &code, &peak_kb) == 0,
          "the python3 measurement failed; see %s/rss.txt", dir);
    const double base_mb = (double)base_kb * 1024.0 / 1e6, peak_mb = (double)peak_kb * 1024.0 / 1e6;
    CHECK(code0 > 0 && code > 0 && file_contains(out, "estimated") &&
              file_contains(out, "refused before allocating"),
          "expected a refusal with the estimate (exit %d); see %s", code, out);
    CHECK(peak_mb - base_mb < 100.0, "peak RSS %.1f MB, %.1f MB over the CLI's start-up (%.1f MB): "
          "expected under 100 MB over it", peak_mb, peak_mb - base_mb, base_mb);
    printf("     8 GiB gzip bomb (%.1f MB on disk) refused, peak RSS %.1f MB (the CLI's "
           "start-up alone: %.1f MB)\n", (double)(512 * msize) / 1e6, peak_mb, base_mb);
    return TEST_PASS;
}

/* The done-when check of real tables: a messy table (an id, a date, text
 * categories, missing cells; tests/messy_table.py) trains from one ffnn train
 * line with --ignore, evaluates and predicts on raw rows, and scores within 0.02
 * of scikit-learn's pipeline (imputers + one-hot + scaler + MLPClassifier) on
 * the same train/test files. Skipped without python3's numpy/pandas/sklearn. */
TEST_DIR_CASE("tabular_messy_table_vs_sklearn", "csv", messy_table_vs_sklearn)
{
    const char *bin = cli_binary();
    char cmd[2048], path[600], model[600], train[600], test[600], line[512];
    if (!bin)
        SKIP("needs build/ffnn (FFNN_BIN)");
    snprintf(path, sizeof path, "%s/sk.txt", dir);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/messy_table.py %s 0 > %s 2>&1", dir, path);
    int rc = system(cmd);
    if (WIFEXITED(rc) && WEXITSTATUS(rc) == 3)
        SKIP("needs /usr/bin/python3 with numpy, pandas and scikit-learn");
    CHECK(rc == 0, "tests/messy_table.py failed (see %s)", path);
    double sk = -1.0, acc = -1.0;
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        sscanf(line, "sklearn_accuracy %lf", &sk);
    if (f)
        fclose(f);
    CHECK(sk > 0.5, "no sklearn_accuracy in %s", path);
    snprintf(train, sizeof train, "%s/train.csv", dir);
    snprintf(test, sizeof test, "%s/test.csv", dir);
    snprintf(model, sizeof model, "%s/m.safetensors", dir);
    snprintf(path, sizeof path, "%s/train.txt", dir);
    const char *targs[] = {"train", "--data", train, "--test", test, "--ignore",
                           "customer_id,signup_date", "--standardize", "--optimizer", "adam",
                           "--lr", "0.001", "--epochs", "30", "--seed", "1", "--device", "cpu",
                           "--save", model, NULL};
    CHECK(cli_run(targs, path, NULL) == 0, "ffnn train failed (see %s)", path);
    CHECK(file_contains(path, "one-hot: city (9), plan (3), channel (5)") &&
              file_contains(path, "age 629 (median 48, + indicator)"),
          "the table line lacks the one-hot columns or the filled cells (see %s)", path);
    snprintf(path, sizeof path, "%s/eval.txt", dir);
    const char *eargs[] = {"eval", "--model", model, "--data", test, NULL};
    CHECK(cli_run(eargs, path, NULL) == 0, "ffnn eval failed (see %s)", path);
    f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "test_acc"))
            sscanf(strstr(line, "test_acc") + 8, "%lf", &acc);
    if (f)
        fclose(f);
    acc /= 100.0;
    CHECK(acc > 0.5 && fabs(acc - sk) <= 0.02, "ffnn %.4f, scikit-learn %.4f: expected within "
          "0.02 (see %s)", acc, sk, path);
    /* raw rows to predict: an unseen city and missing cells, no target column */
    snprintf(path, sizeof path, "%s/new.csv", dir);
    const char *rows = "customer_id,signup_date,age,income,city,plan,channel,visits\n"
                       "X1,2024-01-01,30,40000,Oslo,basic,web,3\n"
                       "X2,2024-01-02,,NA,Paris,pro,,9\n";
    CHECK(test_write_file(path, rows, strlen(rows)) == 0, "cannot write");
    char out[600];
    snprintf(out, sizeof out, "%s/predict.txt", dir);
    const char *pargs[] = {"predict", "--model", model, "--data", path, NULL};
    CHECK(cli_run(pargs, out, NULL) == 0 && file_contains(out, "class,p_no,p_yes") &&
              file_contains(out, "1 cell of a category the model was not trained on"),
          "ffnn predict on raw rows failed or did not count the unseen city (see %s)", out);
    const char *xargs[] = {"predict", "--model", model, "--data", path, "--unknown-category",
                           "error", NULL};
    CHECK(cli_run(xargs, out, NULL) != 0, "--unknown-category error accepted 'Paris'");
    printf("     messy table: ffnn %.4f, scikit-learn %.4f test accuracy (2000 rows)\n", acc,
           sk);
    return TEST_PASS;
}
