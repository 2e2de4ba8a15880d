/* test_table_api.c - the table encoding through include/ffnn.h alone (the
 * functions a program or the CLI uses; no private header here): a raw table's
 * columns, the fitted encoding (medians, indicators, sorted one-hot levels,
 * "missing"), the encoded rows against values worked out by hand, the
 * refusals, and the encoding kept through a saved and reloaded model, then
 * encoding new rows with an unseen level. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "test_fixtures.h"
#include "ffnn.h"
#include "test_files.h"

/* Every accessor of a and b agrees (column i of n). 1 when they do. */
static int same_table(const ffnn_table *a, const ffnn_table *b)
{
    size_t n = ffnn_table_column_count(a);
    if (n != ffnn_table_column_count(b) || ffnn_table_width(a) != ffnn_table_width(b) ||
        ffnn_table_is_fitted(a) != ffnn_table_is_fitted(b))
        return 0;
    for (size_t i = 0; i < n; i++) {
        float ma = ffnn_table_median(a, i), mb = ffnn_table_median(b, i);
        if (strcmp(ffnn_table_column_name(a, i), ffnn_table_column_name(b, i)) ||
            ffnn_table_column_kind(a, i) != ffnn_table_column_kind(b, i) ||
            ffnn_table_indicator(a, i) != ffnn_table_indicator(b, i) ||
            !(ma == mb || (isnan(ma) && isnan(mb))) ||
            ffnn_table_level_count(a, i) != ffnn_table_level_count(b, i))
            return 0;
        for (size_t k = 0; k < ffnn_table_level_count(a, i); k++)
            if (strcmp(ffnn_table_level(a, i, k), ffnn_table_level(b, i, k)))
                return 0;
    }
    return 1;
}

/* The rows of e [rows, 5] equal want; 1 when they do. */
static int rows_are(const ffnn_dataset *e, const float *want, size_t rows)
{
    return ffnn_dataset_count(e) == rows && ffnn_dataset_features(e) == 5 &&
           memcmp(ffnn_dataset_float_features(e), want, rows * 5 * sizeof(float)) == 0;
}

TEST_DIR_CASE("tabular_table_api_fit_encode_model_roundtrip", "table_api",
              table_api_fit_encode_model_roundtrip)
{
    UNUSED_WHY();
    char train_csv[512], new_csv[512], num_csv[512], model_path[512];
    snprintf(train_csv, sizeof train_csv, "%s/train.csv", dir);
    snprintf(new_csv, sizeof new_csv, "%s/new.csv", dir);
    snprintf(num_csv, sizeof num_csv, "%s/num.csv", dir);
    snprintf(model_path, sizeof model_path, "%s/m.safetensors", dir);
    const char *train = "age,city,y\n30,Paris,a\n,Rome,b\n50,,a\n40,Paris,b\nNA,Rome,a\n";
    const char *fresh = "age,city,y\n35,Lyon,a\n,Paris,b\n";
    const char *num = "age,city,y\n1,2,a\n";
    CHECK(test_write_file(train_csv, train, strlen(train)) == 0 &&
              test_write_file(new_csv, fresh, strlen(fresh)) == 0 &&
              test_write_file(num_csv, num, strlen(num)) == 0,
          "cannot write the CSV files");
    ffnn_csv_options o = ffnn_csv_options_default();
    o.text_categories = 1;
    o.missing = 1;
    ffnn_dataset *ds = NULL, *e = NULL, *nd = NULL, *ne = NULL, *nn = NULL;
    CHECK_OK(ffnn_dataset_load_csv(train_csv, &o, &ds));

    /* the raw table: columns as read, levels in order of appearance */
    const ffnn_table *raw = ffnn_dataset_table(ds);
    CHECK(raw && !ffnn_table_is_fitted(raw) && ffnn_table_needs_encoding(raw) &&
              ffnn_table_column_count(raw) == 2 && ffnn_table_width(raw) == 0 &&
              !strcmp(ffnn_table_column_name(raw, 0), "age") &&
              !strcmp(ffnn_table_column_name(raw, 1), "city") &&
              ffnn_table_column_kind(raw, 0) == FFNN_TABLE_NUMERIC &&
              ffnn_table_column_kind(raw, 1) == FFNN_TABLE_CATEGORICAL &&
              ffnn_table_level_count(raw, 1) == 2 &&
              !strcmp(ffnn_table_level(raw, 1, 0), "Paris") &&
              !strcmp(ffnn_table_level(raw, 1, 1), "Rome") && ffnn_table_missing(raw, 0) == 2 &&
              ffnn_table_missing(raw, 1) == 1 && isnan(ffnn_table_median(raw, 0)),
          "the raw table is not age (2 missing), city (Paris, Rome; 1 missing)");
    CHECK(ffnn_table_column_kind(raw, 2) == -1 && ffnn_table_column_name(raw, 2) == NULL &&
              ffnn_table_level(raw, 1, 2) == NULL && ffnn_table_level_count(raw, 0) == 0,
          "out-of-range accessors answer something other than -1 / NULL / 0");

    /* fitted: median 40 of {30, 50, 40} + indicator; levels sorted by bytes */
    ffnn_table *enc = NULL;
    CHECK_OK(ffnn_table_fit(ds, &enc));
    CHECK(ffnn_table_is_fitted(enc) && ffnn_table_width(enc) == 5 &&
              ffnn_table_median(enc, 0) == 40.0f && ffnn_table_indicator(enc, 0) == 1 &&
              ffnn_table_level_count(enc, 1) == 3 &&
              !strcmp(ffnn_table_level(enc, 1, 0), "Paris") &&
              !strcmp(ffnn_table_level(enc, 1, 1), "Rome") &&
              !strcmp(ffnn_table_level(enc, 1, 2), "missing") && ffnn_table_missing(enc, 0) == 2 &&
              ffnn_table_missing(enc, 1) == 1,
          "expected width 5: age (median 40, indicator), city Paris/Rome/missing");
    size_t unseen = 99;
    CHECK_OK(ffnn_table_encode(enc, ds, &unseen, &e));
    /* [age, Paris, Rome, missing, age missing?] */
    static const float want[25] = {30, 1, 0, 0, 0, 40, 0, 1, 0, 1, 50, 0, 0, 1, 0,
                                   40, 1, 0, 0, 0, 40, 0, 1, 0, 1};
    const int32_t *y = ffnn_dataset_labels(e);
    CHECK(unseen == 0 && rows_are(e, want, 5) && y && y[0] == 0 && y[1] == 1 && y[4] == 0 &&
              !strcmp(ffnn_dataset_class_name(e, 1), "b"),
          "the encoded training rows or their labels differ from the hand-worked ones");
    CHECK(ffnn_table_is_fitted(ffnn_dataset_table(e)) && same_table(ffnn_dataset_table(e), enc),
          "the encoded set does not carry the encoding");

    /* refusals: a raw table as the encoding, a numeric column where text was */
    CHECK(ffnn_table_encode(raw, ds, NULL, &nn) == FFNN_ERR_INVALID_ARGUMENT,
          "a raw table accepted as the encoding");
    CHECK_OK(ffnn_dataset_load_csv(num_csv, &o, &nd));
    CHECK(ffnn_table_encode(enc, nd, NULL, &nn) == FFNN_ERR_INVALID_ARGUMENT &&
              strstr(ffnn_last_error(), "'city'"),
          "numbers in the categorical column accepted: %s", ffnn_last_error());
    ffnn_dataset_free(nd);
    nd = NULL;

    /* the model keeps a copy; checked against its input size; saved and read */
    ffnn_model *m = NULL, *small = NULL, *back = NULL;
    ffnn_table *got = NULL;
    CHECK_OK(ffnn_model_create("5-8relu-2", &m));
    CHECK_OK(ffnn_model_create("4-2", &small));
    CHECK_OK(ffnn_model_table(m, &got));
    CHECK(got == NULL, "a new model has a table");
    CHECK(ffnn_model_set_table(small, enc) == FFNN_ERR_INVALID_ARGUMENT &&
              ffnn_model_set_table(m, raw) == FFNN_ERR_INVALID_ARGUMENT,
          "a table of another width or a raw table accepted by a model");
    CHECK_OK(ffnn_model_set_table(m, enc));
    ffnn_table_free(enc); /* the model's copy is its own */
    enc = NULL;
    (void)ffnn_model_set_loss(m, FFNN_LOSS_SOFTMAX_CE);
    CHECK_OK(ffnn_model_save(m, model_path));
    CHECK_OK(ffnn_model_load(model_path, &back, NULL));
    CHECK_OK(ffnn_model_table(back, &got));
    CHECK(got && same_table(got, ffnn_dataset_table(e)) && ffnn_table_missing(got, 0) == 0,
          "the encoding read back from %s differs from the fitted one", model_path);

    /* new rows with the loaded encoding: Lyon unseen (all zeros), age filled */
    CHECK_OK(ffnn_dataset_load_csv(new_csv, &o, &nd));
    CHECK_OK(ffnn_table_encode(got, nd, &unseen, &ne));
    static const float want_new[10] = {35, 0, 0, 0, 0, 40, 1, 0, 0, 1};
    CHECK(unseen == 1 && rows_are(ne, want_new, 2), "new rows: %zu unseen, expected 1 (Lyon)",
          unseen);
    CHECK_OK(ffnn_model_set_table(back, NULL));
    ffnn_table_free(got);
    got = NULL;
    CHECK_OK(ffnn_model_table(back, &got));
    CHECK(got == NULL, "ffnn_model_set_table(NULL) left a table");

    TEST_FREE(m, small, back, ds, e, nd, ne);
    return TEST_PASS;
}

/* A raw table built from columns in memory (the Python module's pandas path)
 * fits and encodes exactly as the same rows read from a CSV file; its
 * refusals name the row, the column or the level. */
TEST_DIR_CASE("tabular_table_api_from_columns_as_csv", "table_api", table_api_from_columns_as_csv)
{
    UNUSED_WHY();
    char path[512];
    const char *train = "age,city,y\n30,Paris,a\n,Rome,b\n50,,a\n40,Paris,b\nNA,Rome,a\n";
    CHECK(test_write_text_in(dir, "train.csv", train, path, sizeof path) == 0, "cannot write %s",
          path);
    ffnn_csv_options o = ffnn_csv_options_default();
    o.text_categories = 1;
    o.missing = 1;
    ffnn_dataset *csv = NULL, *mem = NULL, *e = NULL, *bad = NULL;
    ffnn_table *from_csv = NULL, *from_mem = NULL;
    CHECK_OK(ffnn_dataset_load_csv(path, &o, &csv));
    const float x[10] = {30, 0, NAN, 1, 50, NAN, 40, 0, NAN, 1}; /* [5, 2]: age, city id */
    const char *names[2] = {"age", "city"}, *levels[2] = {"Paris", "Rome"};
    const int kinds[2] = {FFNN_TABLE_NUMERIC, FFNN_TABLE_CATEGORICAL};
    const size_t counts[2] = {0, 2};
    CHECK_OK(ffnn_dataset_from_columns(5, 2, x, names, kinds, counts, levels, &mem));
    const ffnn_table *raw = ffnn_dataset_table(mem);
    CHECK(raw && !ffnn_table_is_fitted(raw) && ffnn_table_needs_encoding(raw) &&
              same_table(raw, ffnn_dataset_table(csv)) && ffnn_table_missing(raw, 0) == 2 &&
              ffnn_table_missing(raw, 1) == 1 && ffnn_dataset_labels(mem)[4] == 0,
          "the raw table from columns differs from the CSV file's");
    CHECK_OK(ffnn_table_fit(csv, &from_csv));
    CHECK_OK(ffnn_table_fit(mem, &from_mem));
    CHECK(same_table(from_csv, from_mem), "the encodings fitted from columns and from the CSV "
          "file differ");
    size_t unseen = 99;
    CHECK_OK(ffnn_table_encode(from_csv, mem, &unseen, &e));
    static const float want[25] = {30, 1, 0, 0, 0, 40, 0, 1, 0, 1, 50, 0, 0, 1, 0,
                                   40, 1, 0, 0, 0, 40, 0, 1, 0, 1};
    CHECK(unseen == 0 && rows_are(e, want, 5), "the rows from columns encode differently");

    /* refusals, each naming what is wrong */
    const float inf_x[2] = {INFINITY, 0}, id_x[2] = {1, 2}, frac_x[2] = {1, 0.5f};
    const char *twice[2] = {"Rome", "Rome"};
    const size_t two[2] = {0, 2};
    CHECK(ffnn_dataset_from_columns(1, 2, inf_x, names, kinds, counts, levels, &bad) ==
                  FFNN_ERR_INVALID_ARGUMENT && strstr(ffnn_last_error(), "row 0, column 'age'"),
          "an infinite value accepted: %s", ffnn_last_error());
    CHECK(ffnn_dataset_from_columns(1, 2, id_x, names, kinds, counts, levels, &bad) ==
                  FFNN_ERR_INVALID_ARGUMENT && strstr(ffnn_last_error(), "column 'city'"),
          "level id 2 of 2 levels accepted: %s", ffnn_last_error());
    CHECK(ffnn_dataset_from_columns(1, 2, frac_x, names, kinds, counts, levels, &bad) ==
              FFNN_ERR_INVALID_ARGUMENT,
          "a fractional level id accepted");
    CHECK(ffnn_dataset_from_columns(1, 2, x, names, kinds, two, twice, &bad) ==
                  FFNN_ERR_INVALID_ARGUMENT && strstr(ffnn_last_error(), "'Rome' is given twice"),
          "a repeated level accepted: %s", ffnn_last_error());
    CHECK(ffnn_dataset_from_columns(0, 2, x, names, kinds, counts, levels, &bad) ==
                  FFNN_ERR_INVALID_ARGUMENT &&
              ffnn_dataset_from_columns(1, 2, x, names, NULL, counts, levels, &bad) ==
                  FFNN_ERR_INVALID_ARGUMENT && bad == NULL,
          "no rows or NULL kinds accepted");
    ffnn_dataset *plain = NULL;
    CHECK_OK(ffnn_dataset_from_columns(1, 2, x, NULL, kinds, counts, levels, &plain));
    CHECK(!strcmp(ffnn_table_column_name(ffnn_dataset_table(plain), 1), "1"),
          "names NULL: column 1 is not named '1'");
    TEST_FREE(plain, from_csv, from_mem, csv, mem, e);
    return TEST_PASS;
}
