/* test_tabular.c - tabular data: the CSV and NPY readers (round trips,
 * every malformed-file class with its message), the seeded stratified split, the
 * standardisation kept in the model file, batches larger than the set and
 * drop_last, a model read while its trainer trains, and ffnn train's early
 * stopping, also across --max-steps and --resume (the CLI: build/ffnn, FFNN_BIN
 * overrides; skipped when not built). */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "test_fixtures.h"
#include "data/dataset.h"
#include "cli_run.h"
#include "ffnn.h"
#include "test_files.h"

/* path = dir/name; text written there. */
static int put_text(const char *dir, const char *name, const char *text, char *path,
                    size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    return test_write_file(path, text, strlen(text));
}

/* ------------------------------------------------------------ CSV */

TEST_DIR_CASE("tabular_csv_round_trip", "tabular", csv_round_trip)
{
    (void)why, (void)why_size;
    char path[512];
    /* BOM, header, CRLF, a blank line, quoted fields (a delimiter, an escaped quote
     * and a line break inside), spaces around numbers */
    const char *text = "\xEF\xBB\xBF" "x1,\"x 2\",label\r\n"
                       "1.5, -2 ,\"b, \"\"quoted\"\"\"\r\n"
                       "\r\n"
                       "3,4e-1,a\r\n"
                       "5,6,\"line\nbreak\"\r\n"
                       "-7,8.25,a\r\n";
    CHECK(put_text(dir, "t.csv", text, path, sizeof path) == 0, "cannot write");
    for (int gz = 0; gz < 2; gz++) {
        if (gz) { /* the same text gzip'ed, named .csv.gz */
            snprintf(path, sizeof path, "%s/t.csv.gz", dir);
            gzFile f = gzopen(path, "wb");
            CHECK(f && gzwrite(f, text, (unsigned)strlen(text)) == (int)strlen(text) &&
                      gzclose(f) == Z_OK, "cannot write gzip");
        }
        ffnn_dataset *ds = NULL;
        CHECK_OK(ffnn_dataset_load_csv(path, NULL, &ds));
        CHECK(ffnn_dataset_count(ds) == 4 && ffnn_dataset_features(ds) == 2 &&
                  ffnn_dataset_classes(ds) == 3,
              "shape %zu x %zu, %d classes", ffnn_dataset_count(ds), ffnn_dataset_features(ds),
              ffnn_dataset_classes(ds));
        const float want_x[8] = {1.5f, -2.0f, 3.0f, 0.4f, 5.0f, 6.0f, -7.0f, 8.25f};
        CHECK(memcmp(ffnn_dataset_float_features(ds), want_x, sizeof want_x) == 0,
              "features differ");
        /* classes in sorted (byte) order: a, b, "quoted"..., line\nbreak */
        CHECK(!strcmp(ffnn_dataset_class_name(ds, 0), "a") &&
                  !strcmp(ffnn_dataset_class_name(ds, 1), "b, \"quoted\"") &&
                  !strcmp(ffnn_dataset_class_name(ds, 2), "line\nbreak"),
              "class names '%s' '%s' '%s'", ffnn_dataset_class_name(ds, 0),
              ffnn_dataset_class_name(ds, 1), ffnn_dataset_class_name(ds, 2));
        const int32_t want_y[4] = {1, 0, 2, 0};
        CHECK(memcmp(ffnn_dataset_labels(ds), want_y, sizeof want_y) == 0, "labels differ");
        ffnn_dataset_free(ds);
    }
    return TEST_PASS;
}

/* Columns by name and index, several targets (regression), a TSV, no header,
 * integer labels sorted as numbers, skip_rows, the mapping of a test file. */
TEST_DIR_CASE("tabular_csv_columns", "tabular", csv_columns)
{
    (void)why, (void)why_size;
    char path[512];
    ffnn_dataset *ds = NULL;
    ffnn_csv_options o = ffnn_csv_options_default();
    CHECK(put_text(dir, "r.tsv", "a\tb\tc\td\n1\t2\t3\t4\n5\t6\t7\t8\n", path, sizeof path) == 0,
          "write");
    o.regression = 1;
    o.target = "d,a";
    CHECK_OK(ffnn_dataset_load_csv(path, &o, &ds)); /* tab from the name */
    CHECK(ffnn_dataset_target_width(ds) == 2 && ffnn_dataset_features(ds) == 2, "widths");
    CHECK(ffnn_dataset_targets(ds)[0] == 4 && ffnn_dataset_targets(ds)[1] == 1 &&
              ffnn_dataset_float_features(ds)[0] == 2 && ffnn_dataset_float_features(ds)[3] == 7,
          "values");
    ffnn_dataset_free(ds);
    o.target = "-3";
    o.features = "2,3";
    CHECK_OK(ffnn_dataset_load_csv(path, &o, &ds));
    CHECK(ffnn_dataset_targets(ds)[1] == 6 && ffnn_dataset_float_features(ds)[1] == 4 &&
              ffnn_dataset_features(ds) == 2, "by index");
    ffnn_dataset_free(ds);

    /* no header (auto), integer labels: 10 sorts after 9 */
    CHECK(put_text(dir, "n.csv", "comment line\n0.5,10\n1.5,9\n2.5,10\n3.5,-1\n", path,
                   sizeof path) == 0, "write");
    o = ffnn_csv_options_default();
    o.skip_rows = 1;
    CHECK_OK(ffnn_dataset_load_csv(path, &o, &ds));
    CHECK(ffnn_dataset_count(ds) == 4 && ffnn_dataset_classes(ds) == 3 &&
              !strcmp(ffnn_dataset_class_name(ds, 0), "-1") &&
              !strcmp(ffnn_dataset_class_name(ds, 2), "10") && ffnn_dataset_labels(ds)[0] == 2 &&
              ffnn_dataset_labels(ds)[1] == 1 && ffnn_dataset_labels(ds)[3] == 0,
          "numeric class order");
    ffnn_dataset *sel = NULL; /* --classes 2,0 keeps the texts of the labels chosen */
    CHECK_OK(ffnn_dataset_select_classes(ds, 2, 0, &sel));
    CHECK(ffnn_dataset_count(sel) == 3 && !strcmp(ffnn_dataset_class_name(sel, 0), "10") &&
              !strcmp(ffnn_dataset_class_name(sel, 1), "-1") && ffnn_dataset_labels(sel)[2] == 1,
          "selected classes' names");
    ffnn_dataset_free(sel);
    /* a test file with the training set's classes; one class only there is refused */
    const char *names[3] = {"-1", "9", "10"};
    char test_path[512];
    CHECK(put_text(dir, "t.csv", "1,9\n2,-1\n", test_path, sizeof test_path) == 0, "write");
    ffnn_dataset *t = NULL;
    o = ffnn_csv_options_default();
    o.class_names = names;
    o.class_count = 3;
    CHECK_OK(ffnn_dataset_load_csv(test_path, &o, &t));
    CHECK(ffnn_dataset_labels(t)[0] == 1 && ffnn_dataset_labels(t)[1] == 0 &&
              ffnn_dataset_classes(t) == 3, "mapped labels");
    TEST_FREE(t, ds);
    return TEST_PASS;
}

/* Every malformed-file class gets its message (file, line, column, what). */
TEST_DIR_CASE("tabular_csv_malformed_messages", "tabular", csv_malformed)
{
    (void)why, (void)why_size;
    static const struct {
        const char *text, *target, *expect[3];
        ffnn_status status;
    } cases[] = {
        {"", NULL, {"line 1", "empty file", ""}, FFNN_ERR_FORMAT},
        {"\n\n  \n", NULL, {"empty file", "", ""}, FFNN_ERR_FORMAT},
        {"a,b,c\n", NULL, {"line 2", "no data", ""}, FFNN_ERR_FORMAT},
        {"a,b,c\n1,2,x\n3,,y\n", NULL, {"line 3, column 2 ('b')", "missing value", ""},
         FFNN_ERR_FORMAT},
        {"a,b,c\n1,2,x\n3,abc,y\n", NULL, {"line 3, column 2", "found 'abc'", ""},
         FFNN_ERR_FORMAT},
        {"1,2,x\n3,nan,y\n", NULL, {"line 2, column 2", "'nan'", ""}, FFNN_ERR_FORMAT},
        {"1,2,x\n3,1e999,y\n", NULL, {"line 2, column 2", "float32 range", "'1e999'"},
         FFNN_ERR_FORMAT},
        {"a,b,c\n1,2,x\n3,4\n", NULL, {"line 3", "expected 3 fields", "ragged"},
         FFNN_ERR_FORMAT},
        {"a,b,c\n1,2,\"x\n", NULL, {"line 2, column 3", "closing quote", ""}, FFNN_ERR_FORMAT},
        {"a,b,c\n1,2,\"x\"y\n", NULL, {"line 2", "after a closing quote", "'y'"},
         FFNN_ERR_FORMAT},
        {"a,b,c\n1,2,x\n", "zzz", {"target column 'zzz'", "a, b, c", ""},
         FFNN_ERR_INVALID_ARGUMENT},
        {"a,b,c\n1,2,x\n", "c,c", {"given twice", "", ""}, FFNN_ERR_INVALID_ARGUMENT},
    };
    char path[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ffnn_dataset *ds = NULL;
        ffnn_csv_options o = ffnn_csv_options_default();
        o.target = cases[i].target;
        CHECK(put_text(dir, "bad.csv", cases[i].text, path, sizeof path) == 0, "write");
        ffnn_status st = ffnn_dataset_load_csv(path, &o, &ds);
        CHECK(st == cases[i].status && ds == NULL, "case %zu: status %d", i, (int)st);
        CHECK(strstr(ffnn_last_error(), path) || cases[i].status != FFNN_ERR_FORMAT,
              "case %zu: '%s' lacks the file name", i, ffnn_last_error());
        for (int k = 0; k < 3; k++)
            CHECK(strstr(ffnn_last_error(), cases[i].expect[k]), "case %zu: '%s' lacks '%s'",
                  i, ffnn_last_error(), cases[i].expect[k]);
    }
    /* a NUL byte; a class the training data does not have */
    CHECK(test_write_file(path, "1,2\n3\0,4\n", 9) == 0, "write");
    ffnn_dataset *ds = NULL;
    CHECK(ffnn_dataset_load_csv(path, NULL, &ds) == FFNN_ERR_FORMAT &&
              strstr(ffnn_last_error(), "line 2, column 1") &&
              strstr(ffnn_last_error(), "NUL byte"), "NUL: %s", ffnn_last_error());
    CHECK(put_text(dir, "test.csv", "1,cat\n2,dog\n3,cow\n", path, sizeof path) == 0, "write");
    const char *names[2] = {"cat", "dog"};
    ffnn_csv_options o = ffnn_csv_options_default();
    o.class_names = names;
    o.class_count = 2;
    CHECK(ffnn_dataset_load_csv(path, &o, &ds) == FFNN_ERR_FORMAT &&
              strstr(ffnn_last_error(), "line 3, column 2") &&
              strstr(ffnn_last_error(), "'cow'") &&
              strstr(ffnn_last_error(), "the training data does not have"),
          "unseen class: %s", ffnn_last_error());
    snprintf(path, sizeof path, "%s/missing.csv", dir);
    CHECK(ffnn_dataset_load_csv(path, NULL, &ds) == FFNN_ERR_IO, "missing file");
    return TEST_PASS;
}

/* ------------------------------------------------------------ NPY */

/* A .npy file: header dict text padded to total bytes (the payload's offset),
 * then n bytes of payload. */
static int put_npy_at(const char *path, const char *dict, const void *data, size_t n,
                      size_t total)
{
    char head[256];
    size_t len = strlen(dict);
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    head[8] = (char)((total - 10) & 0xff);
    head[9] = (char)((total - 10) >> 8);
    memcpy(head + 10, dict, len);
    memset(head + 10 + len, ' ', total - 10 - len - 1);
    head[total - 1] = '\n';
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(head, 1, total, f) == total && fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* The same with the payload 64-byte aligned, as numpy.save writes it. */
static int put_npy(const char *path, const char *dict, const void *data, size_t n)
{
    return put_npy_at(path, dict, data, n, (10 + strlen(dict) + 1 + 63) / 64 * 64);
}

/* float32 features of a plain .npy are mapped in place; a payload at an offset
 * that is not a multiple of 4 is read into a copy: both hold the same bits
 * (-0, a subnormal, FLT_MAX, 1/3), the mapping goes with ffnn_dataset_free, and
 * a feature removed from a mapped set copies it first (it is read-only). A file
 * one byte short of its shape is refused before anything is mapped. */
TEST_DIR_CASE("tabular_npy_mapped_equals_read", "tabular", npy_mapped_equals_read)
{
    (void)why, (void)why_size;
    char al[512], un[512], x8[512], cut[512];
    snprintf(al, sizeof al, "%s/aligned.npy", dir);
    snprintf(un, sizeof un, "%s/unaligned.npy", dir);
    snprintf(x8, sizeof x8, "%s/f8.npy", dir);
    snprintf(cut, sizeof cut, "%s/cut.npy", dir);
    enum { R = 1000, C = 7 };
    static float xf[R * C];
    static double xd[R * C];
    for (size_t i = 0; i < R * C; i++) {
        xf[i] = (float)((double)i / 3.0 - 1000.0);
        xd[i] = xf[i];
    }
    xf[0] = -0.0f, xf[1] = 1e-40f, xf[2] = 3.4028235e38f, xf[3] = 1.0f / 3.0f;
    for (int k = 0; k < 4; k++)
        xd[k] = xf[k];
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000, 7), }";
    size_t aligned = (10 + strlen(dict) + 1 + 63) / 64 * 64;
    CHECK(put_npy(al, dict, xf, sizeof xf) == 0 &&
              put_npy_at(un, dict, xf, sizeof xf, aligned + 2) == 0 &&
              put_npy(x8, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000, 7), }",
                      xd, sizeof xd) == 0 &&
              put_npy(cut, dict, xf, sizeof xf - 1) == 0, "write");
    ffnn_dataset *a = NULL, *b = NULL, *c = NULL;
    CHECK_OK(ffnn_dataset_load_npy(al, NULL, &a));
    CHECK_OK(ffnn_dataset_load_npy(un, NULL, &b));
    CHECK_OK(ffnn_dataset_load_npy(x8, NULL, &c));
    CHECK(a->map != NULL && b->map == NULL && c->map == NULL, "mapped: %d %d %d",
          a->map != NULL, b->map != NULL, c->map != NULL);
    CHECK((const unsigned char *)a->values == (const unsigned char *)a->map + aligned,
          "values point into the mapping at the payload");
    CHECK(memcmp(ffnn_dataset_float_features(a), xf, sizeof xf) == 0 &&
              memcmp(ffnn_dataset_float_features(b), xf, sizeof xf) == 0 &&
              memcmp(ffnn_dataset_float_features(c), xf, sizeof xf) == 0, "bits differ");
    float column[R];
    CHECK_OK(ffnn_dataset_remove_feature(a, 3, column));
    CHECK(a->map == NULL && ffnn_dataset_features(a) == C - 1 && column[0] == xf[3] &&
              ffnn_dataset_float_features(a)[C - 1] == xf[C], "remove feature of a mapping");
    TEST_FREE(a, b, c);
    a = NULL;
    CHECK(ffnn_dataset_load_npy(cut, NULL, &a) == FFNN_ERR_FORMAT && a == NULL,
          "truncated accepted");
    CHECK(strstr(ffnn_last_error(), cut) && strstr(ffnn_last_error(), "truncated") &&
              strstr(ffnn_last_error(), "28000 bytes") && strstr(ffnn_last_error(), "27999"),
          "truncated: %s", ffnn_last_error());
    return TEST_PASS;
}

TEST_DIR_CASE("tabular_npy_round_trip_and_errors", "tabular", npy_round_trip)
{
    (void)why, (void)why_size;
    char x4[512], x8[512], y8[512], t4[512], bad[512];
    const float xf[6] = {1, 2, 3, 4, 5, 6.5f};
    const double xd[6] = {1, 2, 3, 4, 5, 6.5};
    const int64_t yl[3] = {2, 0, 7};
    const float tf[3] = {0.5f, -1, 2};
    snprintf(x4, sizeof x4, "%s/x4.npy", dir);
    snprintf(x8, sizeof x8, "%s/x8.npy", dir);
    snprintf(y8, sizeof y8, "%s/y.npy", dir);
    snprintf(t4, sizeof t4, "%s/t.npy", dir);
    snprintf(bad, sizeof bad, "%s/bad.npy", dir);
    CHECK(put_npy(x4, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", xf,
                  sizeof xf) == 0 &&
              put_npy(x8, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }", xd,
                      sizeof xd) == 0 &&
              put_npy(y8, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", yl,
                      sizeof yl) == 0 &&
              put_npy(t4, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", tf,
                      sizeof tf) == 0, "write");
    ffnn_dataset *a = NULL, *b = NULL, *c = NULL;
    CHECK_OK(ffnn_dataset_load_npy(x4, y8, &a));
    CHECK_OK(ffnn_dataset_load_npy(x8, t4, &b));
    CHECK(ffnn_dataset_count(a) == 3 && ffnn_dataset_features(a) == 2 &&
              memcmp(ffnn_dataset_float_features(a), xf, sizeof xf) == 0 &&
              memcmp(ffnn_dataset_float_features(b), xf, sizeof xf) == 0, "features");
    CHECK(ffnn_dataset_classes(a) == 8 && ffnn_dataset_labels(a)[2] == 7, "labels");
    CHECK(ffnn_dataset_target_width(b) == 1 && memcmp(ffnn_dataset_targets(b), tf, sizeof tf) == 0,
          "targets");
    CHECK_OK(ffnn_dataset_load_npy(x4, NULL, &c));
    CHECK(ffnn_dataset_labels(c)[1] == 0, "no labels");
    TEST_FREE(a, b, c);
    static const struct { const char *dict; size_t bytes; const char *expect; } cases[] = {
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (3, 2), }", 24, "C order"},
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (3, 2), }", 24, "big-endian"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", 20, "truncated"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", 28, "trailing"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (3, 2), }", 24, "integer dtype"},
        {"{'descr': '<c8', 'fortran_order': False, 'shape': (3, 2), }", 48, "float"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2, 1), }", 24, "shape"},
        {"{'descr': '<f4', 'shape': (3, 2), }", 24, "'fortran_order' missing"},
    };
    const float payload[12] = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK(put_npy(bad, cases[i].dict, payload, cases[i].bytes) == 0, "write");
        c = NULL;
        CHECK(ffnn_dataset_load_npy(bad, NULL, &c) == FFNN_ERR_FORMAT && c == NULL,
              "case %zu accepted", i);
        CHECK(strstr(ffnn_last_error(), cases[i].expect) && strstr(ffnn_last_error(), bad),
              "case %zu: '%s' lacks '%s'", i, ffnn_last_error(), cases[i].expect);
    }
    /* a NaN feature; labels of another row count */
    const float nan_x[6] = {1, 2, NAN, 4, 5, 6};
    CHECK(put_npy(bad, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", nan_x,
                  sizeof nan_x) == 0, "write");
    CHECK(ffnn_dataset_load_npy(bad, NULL, &c) == FFNN_ERR_FORMAT &&
              strstr(ffnn_last_error(), "row 1, column 0"), "NaN: %s", ffnn_last_error());
    CHECK(put_npy(bad, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", yl, 16) == 0,
          "write");
    CHECK(ffnn_dataset_load_npy(x4, bad, &c) == FFNN_ERR_FORMAT &&
              strstr(ffnn_last_error(), "as many rows"), "rows: %s", ffnn_last_error());
    return TEST_PASS;
}

/* ------------------------------------------------------------ splits */

/* 100 samples: class 0 x 50, class 1 x 30, class 2 x 20; feature = row number. */
static ffnn_status three_classes(ffnn_dataset **out)
{
    float x[100];
    int32_t y[100];
    for (int i = 0; i < 100; i++) {
        x[i] = (float)i;
        y[i] = i % 10 < 5 ? 0 : i % 10 < 8 ? 1 : 2;
    }
    return ffnn_dataset_from_arrays(100, 1, x, y, 0, NULL, out);
}

TEST("tabular_split_reproducible_stratified", split_reproducible_stratified)
{
    ffnn_dataset *ds = NULL, *rest[3] = {NULL}, *part[3] = {NULL};
    CHECK_OK(three_classes(&ds));
    CHECK_OK(ffnn_dataset_split(ds, 0.2, 5, &rest[0], &part[0]));
    CHECK_OK(ffnn_dataset_split(ds, 0.2, 5, &rest[1], &part[1]));
    CHECK_OK(ffnn_dataset_split(ds, 0.2, 6, &rest[2], &part[2]));
    CHECK(ffnn_dataset_count(part[0]) == 20 && ffnn_dataset_count(rest[0]) == 80, "sizes");
    CHECK(memcmp(ffnn_dataset_float_features(part[0]), ffnn_dataset_float_features(part[1]),
                 20 * sizeof(float)) == 0, "same seed, another split");
    CHECK(memcmp(ffnn_dataset_float_features(part[0]), ffnn_dataset_float_features(part[2]),
                 20 * sizeof(float)) != 0, "another seed, the same split");
    int per_class[3] = {0, 0, 0}, seen[100] = {0};
    for (int k = 0; k < 20; k++)
        per_class[ffnn_dataset_labels(part[0])[k]]++;
    CHECK(per_class[0] == 10 && per_class[1] == 6 && per_class[2] == 4,
          "not stratified: %d %d %d", per_class[0], per_class[1], per_class[2]);
    for (int s = 0; s < 2; s++) { /* disjoint, complete, each side in file order */
        const ffnn_dataset *d = s ? rest[0] : part[0];
        for (size_t k = 0; k < ffnn_dataset_count(d); k++) {
            int row = (int)ffnn_dataset_float_features(d)[k];
            seen[row]++;
            CHECK(ffnn_dataset_labels(d)[k] == ffnn_dataset_labels(ds)[row], "label moved");
            CHECK(k == 0 || ffnn_dataset_float_features(d)[k - 1] < (float)row, "order");
        }
    }
    for (int i = 0; i < 100; i++)
        CHECK(seen[i] == 1, "row %d seen %d times", i, seen[i]);
    /* uneven strata: the total is still round(fraction * count) */
    ffnn_dataset *r = NULL, *p = NULL;
    CHECK_OK(ffnn_dataset_split(ds, 0.33, 1, &r, &p));
    CHECK(ffnn_dataset_count(p) == 33, "round(0.33 * 100) = 33, found %zu", ffnn_dataset_count(p));
    TEST_FREE(r, p);
    CHECK(ffnn_dataset_split(ds, 1.0, 1, &r, &p) == FFNN_ERR_INVALID_ARGUMENT &&
              ffnn_dataset_split(ds, 0.001, 1, &r, &p) == FFNN_ERR_INVALID_ARGUMENT,
          "fractions that leave a side empty");
    for (int s = 0; s < 3; s++) {
        ffnn_dataset_free(rest[s]);
        ffnn_dataset_free(part[s]);
    }
    ffnn_dataset_free(ds);
    return TEST_PASS;
}

/* ------------------------------------------------------------ standardisation */

TEST_DIR_CASE("tabular_standardize_model_file_round_trip", "tabular",
              standardize_model_file_round_trip)
{
    (void)why, (void)why_size;
    enum { N = 40 };
    float x[N * 3], t[N * 2];
    for (int i = 0; i < N; i++) {
        x[3 * i] = 100.0f + (float)i;       /* mean 119.5 */
        x[3 * i + 1] = 7.0f;                /* constant: scale 1 */
        x[3 * i + 2] = 0.01f * (float)(i % 7);
        t[2 * i] = 1000.0f + 10.0f * (float)i;
        t[2 * i + 1] = -3.0f + 0.5f * (float)(i % 3);
    }
    ffnn_dataset *ds = NULL, *std = NULL;
    ffnn_model *m = NULL, *back = NULL;
    CHECK_OK(ffnn_dataset_from_arrays(N, 3, x, NULL, 2, t, &ds));
    CHECK_OK(ffnn_model_create("3-8tanh-2", &m));
    CHECK_OK(ffnn_model_init(m, 3));
    CHECK_OK(ffnn_model_fit_standardization(m, ds, 1));
    const float *im, *is, *tm, *ts;
    CHECK_OK(ffnn_model_standardization(m, &im, &is, &tm, &ts));
    CHECK(fabsf(im[0] - 119.5f) < 1e-4f && is[1] == 1.0f && im[1] == 7.0f,
          "stats %g %g %g", (double)im[0], (double)is[1], (double)im[1]);
    CHECK(fabs(is[0] - sqrt((N * N - 1) / 12.0)) < 1e-4, "population std %g", (double)is[0]);
    CHECK_OK(ffnn_dataset_standardize(ds, m, &std));
    double sum = 0, sq = 0;
    for (int i = 0; i < N; i++) {
        sum += ffnn_dataset_float_features(std)[3 * i];
        sq += ffnn_dataset_float_features(std)[3 * i] * ffnn_dataset_float_features(std)[3 * i];
    }
    CHECK(fabs(sum / N) < 1e-5 && fabs(sq / N - 1.0) < 1e-4, "z-scores: mean %g var %g",
          sum / N, sq / N);
    const char *names[2] = {"small", "large"};
    ffnn_model *cls = NULL;
    CHECK_OK(ffnn_model_create("3-2", &cls));
    CHECK_OK(ffnn_model_set_class_names(cls, names, 2));
    char path[512], path2[512];
    snprintf(path, sizeof path, "%s/std.safetensors", dir);
    snprintf(path2, sizeof path2, "%s/cls.safetensors", dir);
    (void)ffnn_model_set_loss(m, FFNN_LOSS_MSE);
    CHECK_OK(ffnn_model_save(m, path));
    (void)ffnn_model_set_loss(cls, FFNN_LOSS_SOFTMAX_CE);
    CHECK_OK(ffnn_model_save(cls, path2));
    CHECK_OK(ffnn_model_load(path, &back, NULL));
    const float *bm, *bs, *btm, *bts;
    CHECK_OK(ffnn_model_standardization(back, &bm, &bs, &btm, &bts));
    CHECK(bm && bs && btm && bts && !memcmp(bm, im, 12) && !memcmp(bs, is, 12) &&
              !memcmp(btm, tm, 8) && !memcmp(bts, ts, 8), "statistics differ after the file");
    /* predict on raw rows = the network on standardised rows, outputs unstandardised */
    float p[N * 2], net[N * 2];
    (void)ffnn_model_set_loss(back, FFNN_LOSS_MSE);
    CHECK_OK(ffnn_model_predict(back, x, N, p, NULL));
    CHECK_OK(ffnn_model_forward(back, ffnn_dataset_float_features(std), N, net));
    for (int k = 0; k < N * 2; k++)
        CHECK(fabsf(p[k] - (net[k] * ts[k % 2] + tm[k % 2])) <= 1e-5f * fabsf(p[k]) + 1e-5f,
              "output %d: %g vs %g", k, (double)p[k], (double)(net[k] * ts[k % 2] + tm[k % 2]));
    /* evaluate in the targets' units: the mse of those outputs against t */
    ffnn_metrics r;
    (void)ffnn_model_set_loss(back, FFNN_LOSS_MSE);
    CHECK_OK(ffnn_model_evaluate_metrics(back, ds, 7, &r, NULL));
    double mse = 0, mae = 0;
    for (int k = 0; k < N * 2; k++) {
        mse += ((double)p[k] - t[k]) * ((double)p[k] - t[k]);
        mae += fabs((double)p[k] - t[k]);
    }
    CHECK(fabs(r.mse - mse / (N * 2)) <= 1e-4 * r.mse &&
              fabs(r.mae - mae / (N * 2)) <= 1e-4 * r.mae &&
              fabs(r.rmse - sqrt(r.mse)) < 1e-9 * r.rmse && isnan(r.accuracy) && r.r2 < 1.0,
          "metrics mse %g (want %g) mae %g", r.mse, mse / (N * 2), r.mae);
    ffnn_model *cback = NULL;
    CHECK_OK(ffnn_model_load(path2, &cback, NULL));
    CHECK(!strcmp(ffnn_model_class_name(cback, 1), "large"), "class names after the file");
    TEST_FREE(cback, cls, back, m, std, ds);
    return TEST_PASS;
}

/* ------------------------------------------------------------ trainer */

/* A batch larger than the set is the whole set; drop_last drops the short batch. */
TEST("tabular_batches_whole_set_and_drop_last", batches_whole_set_and_drop_last)
{
    ffnn_dataset *ds = NULL;
    ffnn_model *m = NULL;
    ffnn_trainer *t = NULL;
    CHECK_OK(three_classes(&ds));
    CHECK_OK(ffnn_model_create("1-4relu-3", &m));
    CHECK_OK(ffnn_model_init(m, 1));
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.device = FFNN_DEVICE_CPU;
    cfg.batch_size = 1000;
    CHECK_OK(ffnn_trainer_create(m, ds, &cfg, &t));
    CHECK(ffnn_trainer_batch_size(t) == 100 && ffnn_trainer_steps_per_epoch(t) == 1,
          "batch %zu steps %zu", ffnn_trainer_batch_size(t), ffnn_trainer_steps_per_epoch(t));
    ffnn_epoch_stats s;
    CHECK_OK(ffnn_trainer_run_epoch(t, NULL, NULL, &s));
    CHECK(isnan(s.val_loss), "no validation set: NaN");
    ffnn_trainer_free(t);
    cfg.batch_size = 30;
    cfg.drop_last = 1;
    CHECK_OK(ffnn_trainer_create(m, ds, &cfg, &t));
    CHECK(ffnn_trainer_steps_per_epoch(t) == 3, "drop_last: %zu steps",
          ffnn_trainer_steps_per_epoch(t));
    CHECK_OK(ffnn_trainer_set_validation(t, ds));
    CHECK_OK(ffnn_trainer_run_epoch(t, NULL, NULL, &s));
    double loss, acc;
    CHECK_OK(ffnn_trainer_evaluate(t, ds, &loss, &acc));
    CHECK(s.val_loss == loss && s.val_accuracy == acc, "val_loss %g, evaluate %g", s.val_loss,
          loss);
    ffnn_trainer_free(t);
    cfg.drop_last = 0;
    CHECK_OK(ffnn_trainer_create(m, ds, &cfg, &t));
    CHECK(ffnn_trainer_steps_per_epoch(t) == 4, "kept: %zu steps",
          ffnn_trainer_steps_per_epoch(t));
    TEST_FREE(t, m, ds);
    return TEST_PASS;
}

/* A model read while its trainer trains is never stale: every reader syncs. */
TEST_DIR_CASE("tabular_model_never_stale", "tabular", model_never_stale)
{
    (void)why, (void)why_size;
    ffnn_dataset *ds = NULL;
    ffnn_model *m = NULL, *back = NULL;
    ffnn_trainer *t = NULL;
    CHECK_OK(three_classes(&ds));
    CHECK_OK(ffnn_model_create("1-4relu-3", &m));
    CHECK_OK(ffnn_model_init(m, 1));
    size_t n = ffnn_model_parameter_count(m);
    float *initial = malloc(n * sizeof *initial), *seen = malloc(n * sizeof *seen);
    CHECK(initial && seen, "malloc");
    memcpy(initial, ffnn_model_parameters(m), n * sizeof *initial);
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.device = FFNN_DEVICE_CPU;
    cfg.batch_size = 10;
    cfg.learning_rate = 0.001f;
    CHECK_OK(ffnn_trainer_create(m, ds, &cfg, &t));
    ffnn_epoch_stats s;
    CHECK_OK(ffnn_trainer_run_epoch(t, NULL, NULL, &s));
    /* no ffnn_trainer_sync_model: the model's readers see the trained weights */
    char path[512];
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE);
    CHECK_OK(ffnn_model_save(m, path));
    memcpy(seen, ffnn_model_parameters(m), n * sizeof *seen);
    CHECK(memcmp(seen, initial, n * sizeof *seen) != 0, "the model still has the initial "
          "weights after an epoch");
    CHECK_OK(ffnn_trainer_step(t, &s.train_loss));
    float *w = ffnn_model_weight(m, 0);
    CHECK(w && memcmp(w, seen, 4 * sizeof *w) != 0, "weight pointer stale after a step");
    CHECK_OK(ffnn_trainer_sync_model(t));
    CHECK_OK(ffnn_model_load(path, &back, NULL));
    CHECK(memcmp(ffnn_model_parameters(back), seen, n * sizeof *seen) == 0,
          "saved file differs from the epoch's weights");
    float out[3], x = 5.0f;
    CHECK_OK(ffnn_trainer_step(t, &s.train_loss)); /* predict right after a step */
    float expect[3];
    CHECK_OK(ffnn_model_forward(m, &x, 1, out));
    CHECK_OK(ffnn_trainer_sync_model(t));
    CHECK_OK(ffnn_model_forward(m, &x, 1, expect));
    CHECK(memcmp(out, expect, sizeof out) == 0, "forward used stale weights");
    TEST_FREE(t, back, m, ds);
    free(initial);
    free(seen);
    return TEST_PASS;
}

/* ------------------------------------------------------------ the CLI */

/* Run argv with stdout to out_path (and stderr to /dev/null); the exit status. */
static int run_to(char *const argv[], const char *out_path)
{
    return test_run_argv_to(argv, out_path, "/dev/null");
}

/* A noisy two-class CSV of 200 rows (3 features, labels "no"/"yes"). */
static int write_noisy_csv(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "u,v,w,label\n");
    uint64_t s = 12345;
    for (int i = 0; i < 200; i++) {
        double r[4];
        const int yes = test_noisy_row(&s, r);
        fprintf(f, "%.4f,%.4f,%.4f,%s\n", 50 * r[0], r[1], 3 * r[2] - 1, yes ? "yes" : "no");
    }
    return fclose(f);
}

/* Early stopping restores the best epoch: the model saved by a run stopped early is
 * bit for bit the model of the same run trained for exactly the best epoch's count. */
TEST_CLI_CASE("tabular_cli_early_stopping_restores_best_epoch", "tabular",
              cli_early_stopping_restores_best_epoch)
{
    (void)why, (void)why_size;
    const char *ffnn = cli_binary();
    char csv[512], out[512], early[512], exact[512], epochs[16];
    snprintf(csv, sizeof csv, "%s/noisy.csv", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(early, sizeof early, "%s/early.safetensors", dir);
    snprintf(exact, sizeof exact, "%s/exact.safetensors", dir);
    CHECK(write_noisy_csv(csv) == 0, "write");
    char *argv[] = {(char *)ffnn, "train", "--data", csv, "--val-split", "0.25", "--test-split",
                    "0.2", "--early-stopping", "3", "--epochs", "200", "--lr", "0.5", "--batch",
                    "8", "--standardize", "--arch", "3-32relu-2", "--threads", "1", "--json",
                    "--save", early, NULL};
    CHECK(run_to(argv, out) == 0, "ffnn train failed");
    FILE *f = fopen(out, "r");
    CHECK(f, "no output");
    char line[1024];
    int best = 0, last = 0, test_lines = 0;
    double best_loss = INFINITY;
    while (fgets(line, sizeof line, f)) {
        int e;
        double v;
        const char *p = strstr(line, "\"val_loss\": ");
        if (sscanf(line, "{\"epoch\": %d", &e) == 1 && p && sscanf(p + 12, "%lf", &v) == 1) {
            last = e;
            if (v < best_loss)
                best_loss = v, best = e;
        }
        test_lines += strstr(line, "\"test_accuracy\"") != NULL && !strstr(line, "epoch");
    }
    fclose(f);
    CHECK(best > 0 && last == best + 3, "stopped at epoch %d, best %d: expected 3 epochs of "
          "patience", last, best);
    CHECK(test_lines == 1, "the test set is evaluated once at the end (%d lines)", test_lines);
    snprintf(epochs, sizeof epochs, "%d", best);
    argv[11] = epochs;      /* --epochs best */
    argv[8] = "--seed";     /* no early stopping: --seed 1 (the default) in its place */
    argv[9] = "1";
    argv[23] = exact;
    CHECK(run_to(argv, out) == 0, "ffnn train --epochs %s failed", epochs);
    int same = test_same_files(early, exact);
    CHECK(same >= 0, "read models");
    CHECK(same, "the early-stopped model is not epoch %d's", best);
    /* predict on the raw rows: the labels of the file, standardised by the model */
    char *pargv[] = {(char *)ffnn, "predict", "--model", early, "--data", csv, NULL};
    CHECK(run_to(pargv, out) == 0, "ffnn predict failed");
    f = fopen(out, "r");
    CHECK(f && fgets(line, sizeof line, f) && !strcmp(line, "class,p_no,p_yes\n"),
          "header '%s'", line);
    int rows = 0, named = 0;
    while (fgets(line, sizeof line, f))
        rows++, named += !strncmp(line, "yes,", 4) || !strncmp(line, "no,", 3);
    fclose(f);
    CHECK(rows == 200 && named == 200, "%d rows, %d with a class label", rows, named);
    return TEST_PASS;
}

/* What an ffnn train --json run printed (stdout and stderr in one file): the last
 * epoch line's epoch (0: none), its "early stopping:" line and its test line
 * ("" when absent). */
typedef struct train_output {
    int last_epoch;
    char stopping[1024], test[1024];
} train_output;

static int read_train_output(const char *path, train_output *o)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    memset(o, 0, sizeof *o);
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        int e;
        if (sscanf(line, "{\"epoch\": %d", &e) == 1)
            o->last_epoch = e;
        else if (!strncmp(line, "early stopping:", 15))
            snprintf(o->stopping, sizeof o->stopping, "%s", line);
        else if (!strncmp(line, "{\"test_loss\"", 12))
            snprintf(o->test, sizeof o->test, "%s", line);
    }
    fclose(f);
    return 0;
}

/* The model files at a and b hold the same bytes and parameters (memcmp). */
static test_result same_models(const char *a, const char *b, const char *what)
{
    ffnn_model *ma = NULL, *mb = NULL;
    int same_bytes = test_same_files(a, b);
    CHECK(same_bytes >= 0, "%s: read models", what);
    CHECK_OK(ffnn_model_load(a, &ma, NULL));
    CHECK_OK(ffnn_model_load(b, &mb, NULL));
    size_t n = ffnn_model_parameter_count(ma);
    int same_params = n == ffnn_model_parameter_count(mb) &&
                      memcmp(ffnn_model_parameters(ma), ffnn_model_parameters(mb),
                             n * sizeof(float)) == 0;
    TEST_FREE(ma, mb);
    CHECK(same_params, "%s: the restored parameters differ from the uninterrupted run's", what);
    CHECK(same_bytes, "%s: the model file differs from the uninterrupted run's", what);
    return TEST_PASS;
}

/* --early-stopping across an interruption: a run stopped by --max-steps with
 * --checkpoint and resumed with --resume stops after the same epoch, restores
 * the same best epoch (the same "early stopping:" line), evaluates the same test
 * line and saves the same model file (bytes and parameters) as the run that
 * never stopped - cut before the best epoch, after it mid-epoch and at an
 * epoch's end (patience not run out), and at the end of the epoch that stops;
 * resumed with --early-stopping given again, or (the first cut) taken from the
 * checkpoint. A checkpoint of a run without --early-stopping (no early-stopping
 * state, as the files before it) resumes with --early-stopping: the resumed run
 * tracks its own epochs. */
TEST_CLI_CASE("tabular_cli_early_stopping_resume_same_stop", "tabular",
              cli_early_stopping_resume_same_stop)
{
    char csv[512], out[512], full[512], ck[512], resumed[512], steps[5][24];
    (void)why, (void)why_size;
    snprintf(csv, sizeof csv, "%s/noisy.csv", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(full, sizeof full, "%s/full.safetensors", dir);
    snprintf(ck, sizeof ck, "%s/ck.safetensors", dir);
    snprintf(resumed, sizeof resumed, "%s/resumed.safetensors", dir);
    CHECK(write_noisy_csv(csv) == 0, "write");
#define DATA "train", "--data", csv, "--val-split", "0.25", "--test-split", "0.2", \
             "--standardize", "--threads", "1", "--json"
#define RUN DATA, "--early-stopping", "3", "--epochs", "200", "--lr", "0.1", "--batch", "8", \
            "--arch", "3-32relu-2"
    const char *a[] = {RUN, "--save", full, NULL};
    train_output ref, b1, b2;
    CHECK(cli_run(a, out, NULL) == 0, "the uninterrupted run failed (see %s)", out);
    CHECK(read_train_output(out, &ref) == 0 && ref.stopping[0] && ref.test[0], "output");
    int best = 0;
    const char *at = strstr(ref.stopping, "restored epoch ");
    CHECK(strstr(ref.stopping, "did not improve") && at && sscanf(at, "restored epoch %d",
                                                                  &best) == 1 &&
              best >= 3 && ref.last_epoch == best + 3,
          "the uninterrupted run: last epoch %d, %s", ref.last_epoch, ref.stopping);
    const int spe = 15; /* 120 training rows, batch 8 */
    const int cuts[4] = {(best - 2) * spe + 7, best * spe + 4, (best + 1) * spe,
                         ref.last_epoch * spe};
    for (int i = 0; i < 4; i++) {
        snprintf(steps[i], sizeof steps[i], "%d", cuts[i]);
        const char *part[] = {RUN, "--max-steps", steps[i], "--checkpoint", ck, NULL};
        const char *rest[] = {DATA, "--resume", ck, "--save", resumed,
                              i ? "--early-stopping" : NULL, "3", NULL};
        CHECK(cli_run(part, out, NULL) == 0, "--max-steps %s failed (see %s)", steps[i], out);
        CHECK(read_train_output(out, &b1) == 0, "output");
        CHECK(cli_run(rest, out, NULL) == 0, "resuming at step %s failed (see %s)", steps[i],
              out);
        CHECK(read_train_output(out, &b2) == 0, "output");
        int last = b2.last_epoch ? b2.last_epoch : b1.last_epoch;
        CHECK(last == ref.last_epoch && !strcmp(b2.stopping, ref.stopping),
              "stopped at step %s and resumed: last epoch %d, %s; uninterrupted: %d, %s",
              steps[i], last, b2.stopping, ref.last_epoch, ref.stopping);
        CHECK(!strcmp(b2.test, ref.test), "resumed at step %s: %s; uninterrupted: %s", steps[i],
              b2.test, ref.test);
        char what[160];
        snprintf(what, sizeof what, "resumed at step %s", steps[i]);
        CHECK_PASS(same_models(full, resumed, what));
    }
    /* a checkpoint without early stopping's state, resumed with --early-stopping */
    const char *plain[] = {DATA, "--epochs", "200", "--lr", "0.1", "--batch", "8", "--arch",
                           "3-32relu-2", "--max-steps", "40", "--checkpoint", ck, NULL};
    const char *later[] = {DATA, "--resume", ck, "--early-stopping", "3", NULL};
    CHECK(cli_run(plain, out, NULL) == 0, "the run without --early-stopping failed");
    CHECK(!file_contains(ck, "early_stopping"), "a run without --early-stopping wrote its keys");
    CHECK(cli_run(later, out, NULL) == 0, "resuming it with --early-stopping failed (see %s)",
          out);
    CHECK(read_train_output(out, &b2) == 0, "output");
    at = strstr(b2.stopping, "restored epoch ");
    CHECK(at && sscanf(at, "restored epoch %d", &best) == 1 && best >= 3 &&
              b2.last_epoch == best + 3,
          "resumed with --early-stopping 3 at epoch 3: last epoch %d, %s", b2.last_epoch,
          b2.stopping);
#undef RUN
#undef DATA
    printf("     stopped at steps %s, %s, %s, %s and resumed: %s", steps[0], steps[1], steps[2],
           steps[3], ref.stopping);
    return TEST_PASS;
}

/* .npz archives (numpy.savez, savez_compressed; the seeds of the npy fuzz target):
 * x and y by name or position; a damaged archive is refused with its reason. */
TEST_DIR_CASE("tabular_npz_archives", "tabular", npz_archives)
{
    (void)why, (void)why_size;
    static const char *const files[3] = {"fuzz/corpus/npy/xy_stored.npz",
                                         "fuzz/corpus/npy/xy_deflate.npz",
                                         "fuzz/corpus/npy/positional.npz"};
    if (access(files[0], R_OK) != 0)
        SKIP("%s missing (run the tests from the repository root)", files[0]);
    for (int k = 0; k < 3; k++) {
        ffnn_dataset *ds = NULL;
        CHECK_OK(ffnn_dataset_load_npy(files[k], NULL, &ds));
        CHECK(ffnn_dataset_count(ds) == 4 && ffnn_dataset_features(ds) == 3 &&
                  ffnn_dataset_float_features(ds)[11] == 11.0f, "%s: features", files[k]);
        if (k < 2)
            CHECK(ffnn_dataset_classes(ds) == 3 && ffnn_dataset_labels(ds)[2] == 2,
                  "%s: labels", files[k]);
        else
            CHECK(ffnn_dataset_target_width(ds) == 1 && ffnn_dataset_targets(ds)[3] == 1.0f,
                  "%s: float targets", files[k]);
        ffnn_dataset_free(ds);
    }
    blob b = {NULL, 0};
    CHECK(test_read_file(files[1], &b) == 0 && b.size > 120, "read");
    char path[512];
    snprintf(path, sizeof path, "%s/bad.npz", dir);
    struct { size_t at; const char *expect; } cases[] = {{60, "corrupt"}, {0, "central"}};
    for (int c = 0; c < 2; c++) {
        unsigned char *copy = malloc(b.size);
        CHECK(copy, "malloc");
        memcpy(copy, b.data, b.size);
        if (c == 0)
            copy[cases[c].at] ^= 0x5a; /* inside the first member's deflate stream */
        else
            memset(copy + b.size - 22 + 16, 0x7f, 4); /* the central directory's offset */
        int w = test_write_file(path, copy, b.size);
        free(copy);
        CHECK(w == 0, "write");
        ffnn_dataset *ds = NULL;
        ffnn_status st = ffnn_dataset_load_npy(path, NULL, &ds);
        CHECK(st == FFNN_ERR_FORMAT && ds == NULL && strstr(ffnn_last_error(), path),
              "case %d: status %d: %s", c, (int)st, ffnn_last_error());
        CHECK(strstr(ffnn_last_error(), cases[c].expect) || strstr(ffnn_last_error(), "CRC"),
              "case %d: '%s' lacks '%s'", c, ffnn_last_error(), cases[c].expect);
    }
    free(b.data);
    return TEST_PASS;
}

/* drop_last travels in a checkpoint: saved mid-epoch, resumed in a new trainer, the
 * rest of the epoch's losses are the uninterrupted run's, bit for bit. */
TEST_DIR_CASE("tabular_drop_last_checkpoint_resume", "tabular", drop_last_checkpoint_resume)
{
    (void)why, (void)why_size;
    ffnn_dataset *ds = NULL;
    ffnn_model *a = NULL, *b = NULL;
    ffnn_trainer *ta = NULL, *tb = NULL;
    CHECK_OK(three_classes(&ds));
    CHECK_OK(ffnn_model_create("1-4relu-3", &a));
    CHECK_OK(ffnn_model_init(a, 2));
    CHECK_OK(ffnn_model_create("1-4relu-3", &b));
    ffnn_train_config cfg = ffnn_train_config_default();
    cfg.device = FFNN_DEVICE_CPU;
    cfg.batch_size = 30;
    cfg.drop_last = 1;
    cfg.learning_rate = 0.001f;
    CHECK_OK(ffnn_trainer_create(a, ds, &cfg, &ta));
    double loss[3], again;
    char path[512];
    snprintf(path, sizeof path, "%s/run.ck", dir);
    CHECK_OK(ffnn_trainer_step(ta, &loss[0]));
    CHECK_OK(ffnn_trainer_save_checkpoint(ta, path));
    CHECK_OK(ffnn_trainer_step(ta, &loss[1]));
    CHECK_OK(ffnn_trainer_step(ta, &loss[2]));
    ffnn_checkpoint_info info;
    CHECK_OK(ffnn_checkpoint_load(path, NULL, &info));
    CHECK(info.cfg.drop_last == 1 && info.steps_per_epoch == 3, "drop_last %d, %zu steps",
          info.cfg.drop_last, info.steps_per_epoch);
    cfg.drop_last = 0; /* a resume with another drop_last is refused, naming it */
    CHECK_OK(ffnn_trainer_create(b, ds, &cfg, &tb));
    CHECK(ffnn_trainer_resume(tb, path) == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "drop_last"), "resume: %s", ffnn_last_error());
    ffnn_trainer_free(tb);
    cfg.drop_last = 1;
    CHECK_OK(ffnn_trainer_create(b, ds, &cfg, &tb));
    CHECK_OK(ffnn_trainer_resume(tb, path));
    for (int k = 1; k < 3; k++) {
        CHECK_OK(ffnn_trainer_step(tb, &again));
        CHECK(again == loss[k], "step %d: %.9g after the resume, %.9g without", k + 1, again,
              loss[k]);
    }
    TEST_FREE(ta, tb, a, b, ds);
    return TEST_PASS;
}

/* Regression through the CLI: --standardize on features and targets, predict and
 * eval in the targets' units (the targets are about 1000: standardised units
 * would show as outputs near 0 and a negative R^2). */
TEST_CLI_CASE("tabular_cli_regression_original_units", "tabular", cli_regression_original_units)
{
    (void)why, (void)why_size;
    const char *ffnn = cli_binary();
    char csv[512], out[512], model[512], line[512];
    snprintf(csv, sizeof csv, "%s/reg.csv", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(model, sizeof model, "%s/reg.safetensors", dir);
    FILE *f = fopen(csv, "w");
    CHECK(f, "write");
    fprintf(f, "a,b,price\n");
    for (int i = 0; i < 300; i++) {
        double a = (i * 37 % 101) / 100.0, b = (i * 53 % 97) / 96.0;
        fprintf(f, "%.4f,%.4f,%.4f\n", a, b, 1000 + 500 * a - 200 * b);
    }
    CHECK(fclose(f) == 0, "write");
    char *argv[] = {(char *)ffnn, "train", "--data", csv, "--loss", "mse", "--standardize",
                    "--test-split", "0.2", "--epochs", "40", "--lr", "0.05", "--batch", "16",
                    "--threads", "1", "--save", model, NULL};
    CHECK(run_to(argv, out) == 0, "ffnn train failed");
    char *eargv[] = {(char *)ffnn, "eval", "--model", model, "--data", csv, "--json", NULL};
    CHECK(run_to(eargv, out) == 0, "ffnn eval failed");
    f = fopen(out, "r");
    CHECK(f && fgets(line, sizeof line, f), "no eval output");
    fclose(f);
    const char *r2 = strstr(line, "\"r2\": "), *rmse = strstr(line, "\"rmse\": ");
    CHECK(r2 && rmse && atof(r2 + 6) > 0.98 && atof(rmse + 8) < 20, "eval: %s", line);
    char *pargv[] = {(char *)ffnn, "predict", "--model", model, "--data", csv, NULL};
    CHECK(run_to(pargv, out) == 0, "ffnn predict failed");
    f = fopen(out, "r");
    CHECK(f && fgets(line, sizeof line, f) && !strcmp(line, "output0\n"), "header %s", line);
    double first = 0;
    CHECK(fgets(line, sizeof line, f) && sscanf(line, "%lf", &first) == 1, "row 1: %s", line);
    fclose(f);
    CHECK(fabs(first - (1000 + 500 * 0.0 - 200 * 0.0)) < 30, "row 1 predicted %g, target 1000",
          first);
    return TEST_PASS;
}

/* The C program of doc (its first C block that starts with #include <stdio.h> and
 * #include "ffnn.h": a program that trains on a CSV file) compiled against this build's
 * libffnn.so and run: it must exit 0 and print a test accuracy above 90%. Skipped
 * without cc, the build's libffnn.so or the CSV. */
static test_result doc_csv_program_runs(const char *doc, const char *dir, char *why,
                                        size_t why_size)
{
    const char *ffnn = cli_binary();
    const char *csv = TEST_SKLEARN_DATA "breast_cancer.csv";
    char lib_dir[512], src[600], exe[600], out[600], cmd[4096], line[256];
    snprintf(lib_dir, sizeof lib_dir, "%s", ffnn);
    char *slash = strrchr(lib_dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(lib_dir, sizeof lib_dir, ".");
    char cwd[256]; /* the rpath must hold from the test's directory: absolute */
    if (lib_dir[0] != '/' && getcwd(cwd, sizeof cwd)) {
        char rel[512];
        snprintf(rel, sizeof rel, "%s", lib_dir);
        snprintf(lib_dir, sizeof lib_dir, "%.255s/%.250s", cwd, rel);
    }
    snprintf(cmd, sizeof cmd, "%s/libffnn.so", lib_dir);
    if (access(cmd, R_OK) != 0 || access(csv, R_OK) != 0 || system("cc --version >/dev/null 2>&1"))
        SKIP("needs cc, %s and %s (apt-get install python3-sklearn)", cmd, csv);
    blob readme = {NULL, 0};
    CHECK(test_read_file(doc, &readme) == 0, "%s not found (run from the root)", doc);
    char *text = realloc(readme.data, readme.size + 1);
    CHECK(text, "malloc");
    text[readme.size] = '\0';
    char *begin = strstr(text, "#include <stdio.h>\n#include \"ffnn.h\"");
    char *end = begin ? strstr(begin, "```") : NULL;
    CHECK(begin && end, "%s has no C example starting with #include <stdio.h>", doc);
    snprintf(src, sizeof src, "%s/example.c", dir);
    snprintf(exe, sizeof exe, "%s/example", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    int w = test_write_file(src, begin, (size_t)(end - begin));
    free(text);
    CHECK(w == 0, "write");
    snprintf(cmd, sizeof cmd, "cc -std=c11 -Wall -Wextra -Werror -Iinclude %s -L%s -lffnn "
             "-Wl,-rpath,%s -o %s", src, lib_dir, lib_dir, exe);
    CHECK(system(cmd) == 0, "the example of %s does not compile: %s", doc, cmd);
    snprintf(cmd, sizeof cmd, "cd %s && ./example > out.txt 2>&1", dir);
    CHECK(system(cmd) == 0, "the example of %s failed (see %s)", doc, out);
    FILE *f = fopen(out, "r");
    double acc = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "test accuracy %lf", &acc) == 1)
            break;
    if (f)
        fclose(f);
    CHECK(acc > 90.0, "test accuracy %g%% (see %s)", acc, out);
    return TEST_PASS;
}

/* The README's C quick start. */
TEST_DIR_CASE("tabular_readme_library_example_runs", "tabular", readme_library_example_runs)
{
    return doc_csv_program_runs("README.md", dir, why, why_size);
}

/* The C library guide's CSV program (validation split, standardisation, save). */
TEST_DIR_CASE("tabular_c_api_guide_example_runs", "tabular", c_api_guide_example_runs)
{
    return doc_csv_program_runs("docs/C_API.md", dir, why, why_size);
}
