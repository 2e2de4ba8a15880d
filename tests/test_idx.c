/* test_idx.c - the IDX loader on small synthetic files written to a temporary
 * directory, raw and gzip: a valid pair loads with the right counts, pixels,
 * labels and classes; each malformed file of RELIABILITY.md cases 1-6 gets the
 * right status and a message naming the file and the offset; and Fashion-MNIST
 * loads when the Debian package dataset-fashion-mnist is installed.
 * Set FFNN_TEST_VERBOSE=1 to see each error message. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "test_fixtures.h"
#include "test_files.h"
#include "ffnn.h"

#define FASHION_DIR "/usr/share/datasets/fashion-mnist"

/* ---------------------------------------------------------------- helpers */

/* An IDX file: magic 00 00 type ndims, the dims big-endian, then payload_size
 * bytes taken from payload (or the pattern (i * 37 + 11) mod 256 when NULL).
 * Returns a blob with data NULL when out of memory. */
static blob idx_blob(uint8_t type, int ndims, const uint32_t *dims, const uint8_t *payload,
                     size_t payload_size)
{
    blob b;
    size_t header = 4 + 4 * (size_t)ndims;

    b.size = header + payload_size;
    b.data = malloc(b.size);
    if (!b.data)
        return b;
    b.data[0] = 0;
    b.data[1] = 0;
    b.data[2] = type;
    b.data[3] = (uint8_t)ndims;
    for (int i = 0; i < ndims; i++)
        for (int k = 0; k < 4; k++)
            b.data[4 + 4 * i + k] = (uint8_t)(dims[i] >> (24 - 8 * k));
    for (size_t i = 0; i < payload_size; i++)
        b.data[header + i] = payload ? payload[i] : (uint8_t)(i * 37 + 11);
    return b;
}

/* A well-formed image file of count rows x cols images (pattern pixels). */
static blob images_blob(uint32_t count, uint32_t rows, uint32_t cols)
{
    uint32_t dims[3] = {count, rows, cols};
    return idx_blob(0x08, 3, dims, NULL, (size_t)count * rows * cols);
}

/* A well-formed label file holding labels [count]. */
static blob labels_blob(const uint8_t *labels, uint32_t count)
{
    return idx_blob(0x08, 1, &count, labels, count);
}

/* dir/name into out [size]. */
static void path_in(const char *dir, const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", dir, name);
}

/* Write bytes [n] to path; 0 on success. */
static int write_raw(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok;

    if (!f)
        return -1;
    ok = fwrite(bytes, 1, n, f) == n;
    if (fclose(f) != 0)
        ok = 0;
    return ok ? 0 : -1;
}

/* Write bytes [n] gzip-compressed to path; 0 on success. */
static int write_gz(const char *path, const void *bytes, size_t n)
{
    gzFile gz = gzopen(path, "wb");
    int ok;

    if (!gz)
        return -1;
    ok = n == 0 || gzwrite(gz, bytes, (unsigned)n) == (int)n;
    if (gzclose(gz) != Z_OK)
        ok = 0;
    return ok ? 0 : -1;
}

/* Write b to dir/name (gzip when gz) and free b; 0 on success. */
static int put(const char *dir, const char *name, blob b, int gz)
{
    char path[256];
    int rc;

    if (!b.data)
        return -1;
    path_in(dir, name, path, sizeof path);
    rc = gz ? write_gz(path, b.data, b.size) : write_raw(path, b.data, b.size);
    free(b.data);
    return rc;
}

typedef test_result (*dir_body)(const char *dir);

/* Run body in a fresh temporary directory and remove it afterwards. */
static test_result in_tmpdir(dir_body body)
{
    char dir[] = "/tmp/ffnn-test-idx-XXXXXX";
    test_result r;

    CHECK(mkdtemp(dir) != NULL, "mkdtemp failed");
    r = body(dir);
    test_remove_dir(dir);
    return r;
}

/* Define test_NAME as body_NAME run in a temporary directory. */
#define DIR_TEST(test, name)                                                      \
    static test_result body_##name(const char *dir);                              \
    static test_result test_##name(char *why, size_t why_size)                    \
    {                                                                             \
        (void)why;                                                                \
        (void)why_size;                                                           \
        return in_tmpdir(body_##name);                                            \
    }                                                                             \
    TEST_CASE(test, test_##name);                                                 \
    static test_result body_##name(const char *dir)

static long long sentinel_object;
#define SENTINEL ((ffnn_dataset *)(void *)&sentinel_object)

/* Load dir/img + dir/lbl, expecting status want, *out untouched, and a message
 * that contains the path of the file named by blame (when not NULL) and each
 * non-NULL needle. */
static test_result expect_fail(const char *dir, const char *img, const char *lbl,
                               ffnn_status want, const char *blame, const char *needle1,
                               const char *needle2)
{
    char img_path[256], lbl_path[256], blame_path[256];
    ffnn_dataset *ds = SENTINEL;
    ffnn_status st;
    const char *msg;

    path_in(dir, img, img_path, sizeof img_path);
    path_in(dir, lbl, lbl_path, sizeof lbl_path);
    st = ffnn_dataset_load_idx(img_path, lbl_path, &ds);
    msg = ffnn_last_error();
    if (getenv("FFNN_TEST_VERBOSE"))
        fprintf(stderr, "    [%s] %s\n", ffnn_status_name(st), msg);
    CHECK(st == want, "status %d (%s), expected %d; message: %s", (int)st,
          ffnn_status_name(st), (int)want, msg);
    CHECK(ds == SENTINEL, "*out was changed on error");
    if (blame) {
        path_in(dir, blame, blame_path, sizeof blame_path);
        CHECK(strstr(msg, blame_path) != NULL, "message lacks the path %s: %s", blame_path,
              msg);
    }
    CHECK(!needle1 || strstr(msg, needle1), "message lacks \"%s\": %s", needle1, msg);
    CHECK(!needle2 || strstr(msg, needle2), "message lacks \"%s\": %s", needle2, msg);
    return TEST_PASS;
}

static const uint8_t labels3[3] = {0, 4, 2};

/* Write a valid 3-image (2 x 3) pair named img/lbl, each raw or gzip. */
static int put_valid_pair(const char *dir, const char *img, int img_gz, const char *lbl,
                          int lbl_gz)
{
    if (put(dir, img, images_blob(3, 2, 3), img_gz) != 0)
        return -1;
    return put(dir, lbl, labels_blob(labels3, 3), lbl_gz);
}

/* Load dir/img + dir/lbl and check it is the pair of put_valid_pair. */
static test_result check_valid_pair(const char *dir, const char *img, const char *lbl)
{
    char img_path[256], lbl_path[256];
    ffnn_dataset *ds = NULL;
    const uint8_t *px;

    path_in(dir, img, img_path, sizeof img_path);
    path_in(dir, lbl, lbl_path, sizeof lbl_path);
    CHECK_OK(ffnn_dataset_load_idx(img_path, lbl_path, &ds));
    CHECK(ffnn_dataset_count(ds) == 3, "count %zu", ffnn_dataset_count(ds));
    CHECK(ffnn_dataset_features(ds) == 6, "features %zu", ffnn_dataset_features(ds));
    CHECK(ffnn_dataset_classes(ds) == 5, "classes %d", ffnn_dataset_classes(ds));
    px = ffnn_dataset_images(ds);
    for (size_t i = 0; i < 18; i++)
        CHECK(px[i] == (uint8_t)(i * 37 + 11), "pixel %zu is %u", i, px[i]);
    for (size_t i = 0; i < 3; i++) /* one byte in the file, int32 in the data set */
        CHECK(ffnn_dataset_labels(ds)[i] == labels3[i], "label %zu is %d, expected %u", i,
              (int)ffnn_dataset_labels(ds)[i], labels3[i]);
    ffnn_dataset_free(ds);
    return TEST_PASS;
}

/* ---------------------------------------------------------------- valid data */

DIR_TEST("idx_valid_raw", valid_raw)
{
    CHECK(put_valid_pair(dir, "i", 0, "l", 0) == 0, "cannot write test files");
    return check_valid_pair(dir, "i", "l");
}

DIR_TEST("idx_valid_gzip", valid_gzip)
{
    CHECK(put_valid_pair(dir, "i.gz", 1, "l.gz", 1) == 0, "cannot write test files");
    return check_valid_pair(dir, "i.gz", "l.gz");
}

/* gzip is detected by its magic bytes, whatever the name; raw and gzip mix. */
DIR_TEST("idx_gzip_detected_by_magic", gzip_detected_by_magic)
{
    CHECK(put_valid_pair(dir, "i", 1, "l", 0) == 0, "cannot write test files");
    return check_valid_pair(dir, "i", "l");
}

/* classes = max label + 1, even far above the labels' count. */
DIR_TEST("idx_classes_from_max_label", classes_from_max_label)
{
    const uint8_t labels[2] = {200, 7};
    char img[256], lbl[256];
    ffnn_dataset *ds = NULL;

    CHECK(put(dir, "i", images_blob(2, 1, 4), 0) == 0, "cannot write");
    CHECK(put(dir, "l", labels_blob(labels, 2), 0) == 0, "cannot write");
    path_in(dir, "i", img, sizeof img);
    path_in(dir, "l", lbl, sizeof lbl);
    CHECK_OK(ffnn_dataset_load_idx(img, lbl, &ds));
    CHECK(ffnn_dataset_classes(ds) == 201, "classes %d", ffnn_dataset_classes(ds));
    ffnn_dataset_free(ds);
    return TEST_PASS;
}

/* ---------------------------------------------------------------- case 1 */

DIR_TEST("idx_empty_file", empty_file)
{
    char path[256];

    CHECK(put_valid_pair(dir, "i", 0, "l", 0) == 0, "cannot write test files");
    path_in(dir, "empty", path, sizeof path);
    CHECK(write_raw(path, "", 0) == 0, "cannot write");
    PASS_OR_RETURN(expect_fail(dir, "empty", "l", FFNN_ERR_FORMAT, "empty", "offset 0", "empty"));
    return expect_fail(dir, "i", "empty", FFNN_ERR_FORMAT, "empty", "offset 0", "empty");
}

DIR_TEST("idx_seven_byte_file", seven_byte_file)
{
    blob b = images_blob(3, 2, 3);

    CHECK(b.data != NULL, "out of memory");
    b.size = 7;
    CHECK(put(dir, "i7", b, 0) == 0, "cannot write");
    CHECK(put_valid_pair(dir, "i", 0, "l", 0) == 0, "cannot write test files");
    PASS_OR_RETURN(expect_fail(dir, "i7", "l", FFNN_ERR_FORMAT, "i7", "offset 7", "image count"));
    b = labels_blob(labels3, 3);
    CHECK(b.data != NULL, "out of memory");
    b.size = 7;
    CHECK(put(dir, "l7", b, 0) == 0, "cannot write");
    return expect_fail(dir, "i", "l7", FFNN_ERR_FORMAT, "l7", "offset 7", "end of file");
}

/* ---------------------------------------------------------------- case 2 */

DIR_TEST("idx_type_byte_0x0d", type_byte_0x0d)
{
    uint32_t dims[3] = {3, 2, 3};

    CHECK(put(dir, "f", idx_blob(0x0D, 3, dims, NULL, 18), 0) == 0, "cannot write");
    CHECK(put(dir, "fl", idx_blob(0x0D, 1, dims, NULL, 3), 1) == 0, "cannot write");
    CHECK(put_valid_pair(dir, "i", 0, "l", 0) == 0, "cannot write test files");
    PASS_OR_RETURN(expect_fail(dir, "f", "l", FFNN_ERR_FORMAT, "f", "offset 2", "found 0x0d"));
    return expect_fail(dir, "i", "fl", FFNN_ERR_FORMAT, "fl",
                       "offset 2 of the decompressed data", "found 0x0d");
}

DIR_TEST("idx_nonzero_magic_byte", nonzero_magic_byte)
{
    blob b = images_blob(3, 2, 3), c = images_blob(3, 2, 3);

    CHECK(b.data && c.data, "out of memory");
    b.data[0] = 0x01;
    c.data[1] = 0x42;
    CHECK(put(dir, "b0", b, 0) == 0 && put(dir, "b1", c, 0) == 0, "cannot write");
    CHECK(put_valid_pair(dir, "i", 0, "l", 0) == 0, "cannot write test files");
    PASS_OR_RETURN(expect_fail(dir, "b0", "l", FFNN_ERR_FORMAT, "b0", "offset 0", "found 0x01"));
    return expect_fail(dir, "b1", "l", FFNN_ERR_FORMAT, "b1", "offset 1", "found 0x42");
}

DIR_TEST("idx_wrong_dimension_count", wrong_dimension_count)
{

    CHECK(put_valid_pair(dir, "i", 0, "l", 0) == 0, "cannot write test files");
    /* the label file given as images and the image file given as labels */
    PASS_OR_RETURN(expect_fail(dir, "l", "l", FFNN_ERR_FORMAT, "l", "offset 3",
                               "expected 3 dimensions"));
    return expect_fail(dir, "i", "i", FFNN_ERR_FORMAT, "i", "offset 3",
                       "expected 1 dimension");
}

/* ---------------------------------------------------------------- case 3 */

DIR_TEST("idx_count_ffffffff", count_ffffffff)
{
    uint32_t dims[3] = {0xFFFFFFFFu, 28, 28};

    CHECK(put(dir, "big", idx_blob(0x08, 3, dims, NULL, 784), 0) == 0, "cannot write");
    CHECK(put(dir, "bigl", idx_blob(0x08, 1, dims, NULL, 3), 0) == 0, "cannot write");
    CHECK(put(dir, "bigz", idx_blob(0x08, 3, dims, NULL, 784), 1) == 0, "cannot write");
    CHECK(put_valid_pair(dir, "i", 0, "l", 0) == 0, "cannot write test files");
    PASS_OR_RETURN(expect_fail(dir, "big", "l", FFNN_ERR_FORMAT, "big", "offset 4",
                               "4294967295 images of 28 x 28"));
    PASS_OR_RETURN(expect_fail(dir, "bigz", "l", FFNN_ERR_FORMAT, "bigz", "offset 4", "at most"));
    /* 0xFFFFFFFF labels is under the 4 GiB cap: caught by the file size */
    return expect_fail(dir, "i", "bigl", FFNN_ERR_FORMAT, "bigl", "offset 11", "truncated");
}

/* count x rows x cols overflowing 64 bits */
DIR_TEST("idx_dims_overflow", dims_overflow)
{
    uint32_t dims[3] = {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};

    CHECK(put(dir, "o", idx_blob(0x08, 3, dims, NULL, 16), 0) == 0, "cannot write");
    CHECK(put_valid_pair(dir, "i", 0, "l", 0) == 0, "cannot write test files");
    return expect_fail(dir, "o", "l", FFNN_ERR_FORMAT, "o", "offset 4", "at most");
}

DIR_TEST("idx_zero_dimension", zero_dimension)
{
    uint32_t dims[3] = {3, 0, 3};

    CHECK(put(dir, "z", idx_blob(0x08, 3, dims, NULL, 0), 0) == 0, "cannot write");
    CHECK(put_valid_pair(dir, "i", 0, "l", 0) == 0, "cannot write test files");
    return expect_fail(dir, "z", "l", FFNN_ERR_FORMAT, "z", "offset 8", "non-zero row count");
}

DIR_TEST("idx_sizes_larger_than_file", sizes_larger_than_file)
{
    uint32_t dims[3] = {1000, 28, 28};

    CHECK(put(dir, "big", idx_blob(0x08, 3, dims, NULL, 5 * 784), 0) == 0, "cannot write");
    CHECK(put_valid_pair(dir, "i", 0, "l", 0) == 0, "cannot write test files");
    return expect_fail(dir, "big", "l", FFNN_ERR_FORMAT, "big", "offset 3936",
                       "expected 784000 bytes");
}

/* ---------------------------------------------------------------- case 4 */

DIR_TEST("idx_truncated_payload", truncated_payload)
{
    blob b = images_blob(3, 2, 3), c = images_blob(3, 2, 3);

    CHECK(b.data && c.data, "out of memory");
    b.size--;
    c.size--;
    CHECK(put(dir, "t", b, 0) == 0 && put(dir, "tz", c, 1) == 0, "cannot write");
    CHECK(put_valid_pair(dir, "i", 0, "l", 0) == 0, "cannot write test files");
    PASS_OR_RETURN(expect_fail(dir, "t", "l", FFNN_ERR_FORMAT, "t", "offset 33", "truncated"));
    return expect_fail(dir, "tz", "l", FFNN_ERR_FORMAT, "tz",
                       "offset 33 of the decompressed data", "truncated");
}

/* Write b plus one extra byte to dir/name, raw or gzip. */
static int put_with_extra(const char *dir, const char *name, blob b, int gz)
{
    uint8_t *grown;

    if (!b.data)
        return -1;
    grown = realloc(b.data, b.size + 1);
    if (!grown) {
        free(b.data);
        return -1;
    }
    b.data = grown;
    b.data[b.size++] = 0x5a;
    return put(dir, name, b, gz);
}

DIR_TEST("idx_trailing_bytes", trailing_bytes)
{

    CHECK(put_with_extra(dir, "x", images_blob(3, 2, 3), 0) == 0, "cannot write");
    CHECK(put_with_extra(dir, "xz", labels_blob(labels3, 3), 1) == 0, "cannot write");
    CHECK(put_valid_pair(dir, "i", 0, "l", 0) == 0, "cannot write test files");
    PASS_OR_RETURN(expect_fail(dir, "x", "l", FFNN_ERR_FORMAT, "x", "offset 34", "trailing"));
    return expect_fail(dir, "i", "xz", FFNN_ERR_FORMAT, "xz",
                       "offset 11 of the decompressed data", "trailing");
}

/* ---------------------------------------------------------------- case 5 */

DIR_TEST("idx_count_mismatch", count_mismatch)
{
    char img[256], lbl[256];
    const char *msg;

    CHECK(put(dir, "i", images_blob(4, 2, 3), 0) == 0, "cannot write");
    CHECK(put(dir, "l", labels_blob(labels3, 3), 1) == 0, "cannot write");
    CHECK_PASS(expect_fail(dir, "i", "l", FFNN_ERR_FORMAT, "i", "offset 4", "4 images"));
    msg = ffnn_last_error();
    path_in(dir, "i", img, sizeof img);
    path_in(dir, "l", lbl, sizeof lbl);
    CHECK(strstr(msg, img) && strstr(msg, lbl) && strstr(msg, "3 labels"),
          "message should name both files and counts: %s", msg);
    return TEST_PASS;
}

/* ---------------------------------------------------------------- case 6 */

DIR_TEST("idx_raw_named_gz", raw_named_gz)
{
    CHECK(put_valid_pair(dir, "i.gz", 0, "l", 0) == 0, "cannot write test files");
    return expect_fail(dir, "i.gz", "l", FFNN_ERR_FORMAT, "i.gz", "offset 0",
                       "expected gzip magic 1f 8b");
}

DIR_TEST("idx_corrupt_gzip", corrupt_gzip)
{
    /* a valid 10-byte gzip member header, then a deflate block of invalid type */
    uint8_t bytes[42] = {0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03};
    char path[256];

    memset(bytes + 10, 0xff, sizeof bytes - 10);
    path_in(dir, "c.gz", path, sizeof path);
    CHECK(write_raw(path, bytes, sizeof bytes) == 0, "cannot write");
    CHECK(put_valid_pair(dir, "i", 0, "l", 0) == 0, "cannot write test files");
    return expect_fail(dir, "c.gz", "l", FFNN_ERR_FORMAT, "c.gz", "offset 0",
                       "corrupt compressed data");
}

/* Write a valid gzip image file to dir/name, then rewrite it changed by edit. */
static int put_gz_edited(const char *dir, const char *name, void (*edit)(blob *))
{
    char path[256];
    blob b;
    int rc;

    if (put(dir, name, images_blob(100, 28, 28), 1) != 0)
        return -1;
    path_in(dir, name, path, sizeof path);
    if (test_read_file(path, &b) != 0)
        return -1;
    edit(&b);
    rc = write_raw(path, b.data, b.size);
    free(b.data);
    return rc;
}

/* Keep the first half of a file. */
static void cut_half(blob *b) { b->size /= 2; }

/* Flip a bit of the gzip trailer's CRC-32. */
static void flip_crc(blob *b) { b->data[b->size - 8] ^= 0x01; }

/* dir/name: a valid gzip image file changed by edit, with 100 labels: refused with
 * FFNN_ERR_FORMAT, the message naming the file, n1 and n2. */
static test_result edited_gz_refused(const char *dir, const char *name, void (*edit)(blob *),
                                     const char *n1, const char *n2)
{
    uint8_t labels[100] = {0};

    CHECK(put_gz_edited(dir, name, edit) == 0, "cannot write");
    CHECK(put(dir, "l", labels_blob(labels, 100), 0) == 0, "cannot write");
    return expect_fail(dir, name, "l", FFNN_ERR_FORMAT, name, n1, n2);
}

DIR_TEST("idx_truncated_gzip", truncated_gzip)
{
    return edited_gz_refused(dir, "t.gz", cut_half, "of the decompressed data", "truncated");
}

DIR_TEST("idx_gzip_crc_mismatch", gzip_crc_mismatch)
{
    return edited_gz_refused(dir, "c.gz", flip_crc, "offset", "incorrect data check");
}

/* ---------------------------------------------------------------- other */

DIR_TEST("idx_missing_file", missing_file)
{
    CHECK(put_valid_pair(dir, "i", 0, "l", 0) == 0, "cannot write test files");
    return expect_fail(dir, "i", "nope", FFNN_ERR_IO, "nope", "No such file", NULL);
}

DIR_TEST("idx_load_dir", load_dir)
{
    ffnn_dataset *train = NULL, *test = NULL;

    CHECK(put_valid_pair(dir, "train-images-idx3-ubyte.gz", 1, "train-labels-idx1-ubyte", 0)
              == 0, "cannot write");
    CHECK(put_valid_pair(dir, "t10k-images-idx3-ubyte", 0, "t10k-labels-idx1-ubyte.gz", 1)
              == 0, "cannot write");
    CHECK_OK(ffnn_dataset_load_idx_dir(dir, &train, &test));
    CHECK(ffnn_dataset_count(train) == 3 && ffnn_dataset_count(test) == 3, "counts");
    CHECK(ffnn_dataset_classes(test) == 5, "classes %d", ffnn_dataset_classes(test));
    TEST_FREE(train, test);
    test = NULL;
    CHECK_OK(ffnn_dataset_load_idx_dir(dir, NULL, &test));
    CHECK(ffnn_dataset_count(test) == 3, "test count");
    ffnn_dataset_free(test);
    return TEST_PASS;
}

DIR_TEST("idx_load_dir_missing_file", load_dir_missing_file)
{
    ffnn_dataset *train = SENTINEL, *test = SENTINEL;
    const char *msg;

    CHECK(put_valid_pair(dir, "train-images-idx3-ubyte", 0, "train-labels-idx1-ubyte", 0)
              == 0, "cannot write");
    CHECK(ffnn_dataset_load_idx_dir(dir, &train, &test) == FFNN_ERR_IO, "expected I/O error");
    msg = ffnn_last_error();
    CHECK(train == SENTINEL && test == SENTINEL, "outputs changed on error");
    CHECK(strstr(msg, "t10k-images-idx3-ubyte.gz") && strstr(msg, dir),
          "message should name the paths tried: %s", msg);
    return TEST_PASS;
}

DIR_TEST("idx_slice", slice)
{
    char img[256], lbl[256];
    ffnn_dataset *ds = NULL, *s = SENTINEL;

    CHECK(put_valid_pair(dir, "i", 0, "l", 0) == 0, "cannot write test files");
    path_in(dir, "i", img, sizeof img);
    path_in(dir, "l", lbl, sizeof lbl);
    CHECK_OK(ffnn_dataset_load_idx(img, lbl, &ds));
    CHECK(ffnn_dataset_slice(ds, 2, 2, &s) == FFNN_ERR_INVALID_ARGUMENT && s == SENTINEL,
          "a range past the end must fail and leave *out alone");
    CHECK(ffnn_dataset_slice(ds, 0, 0, &s) == FFNN_ERR_INVALID_ARGUMENT && s == SENTINEL,
          "an empty range must fail");
    CHECK(ffnn_dataset_slice(ds, SIZE_MAX, 2, &s) == FFNN_ERR_INVALID_ARGUMENT,
          "first = SIZE_MAX must fail");
    if (ffnn_dataset_slice(ds, 1, 2, &s) != FFNN_OK) {
        ffnn_dataset_free(ds);
        CHECK(0, "slice failed: %s", ffnn_last_error());
    }
    CHECK(ffnn_dataset_count(s) == 2 && ffnn_dataset_features(s) == 6, "shape");
    CHECK(ffnn_dataset_classes(s) == 5, "classes %d (inherited)", ffnn_dataset_classes(s));
    CHECK(memcmp(ffnn_dataset_images(s), ffnn_dataset_images(ds) + 6, 12) == 0, "pixels");
    CHECK(ffnn_dataset_labels(s)[0] == 4 && ffnn_dataset_labels(s)[1] == 2, "labels");
    TEST_FREE(s, ds);
    ffnn_dataset_free(NULL);
    CHECK(ffnn_dataset_count(NULL) == 0 && ffnn_dataset_images(NULL) == NULL, "NULL");
    return TEST_PASS;
}

/* Fashion-MNIST from the Debian package: 60000 + 10000 balanced 28 x 28 images. */
TEST("idx_fashion_mnist", test_fashion_mnist)
{
    ffnn_dataset *train = NULL, *test = NULL;
    size_t per_class[10] = {0};

    if (access(FASHION_DIR, R_OK) != 0)
        SKIP("%s not present (sudo apt-get install dataset-fashion-mnist)", FASHION_DIR);
    CHECK_OK(ffnn_dataset_load_idx_dir(FASHION_DIR, &train, &test));
    CHECK(ffnn_dataset_count(train) == 60000, "train count %zu", ffnn_dataset_count(train));
    CHECK(ffnn_dataset_count(test) == 10000, "test count %zu", ffnn_dataset_count(test));
    CHECK(ffnn_dataset_features(train) == 784 && ffnn_dataset_features(test) == 784,
          "features %zu", ffnn_dataset_features(train));
    CHECK(ffnn_dataset_classes(train) == 10 && ffnn_dataset_classes(test) == 10, "classes %d",
          ffnn_dataset_classes(train));
    for (size_t i = 0; i < 60000; i++)
        per_class[ffnn_dataset_labels(train)[i]]++;
    for (int c = 0; c < 10; c++)
        CHECK(per_class[c] == 6000, "class %d has %zu training samples", c, per_class[c]);
    TEST_FREE(train, test);
    return TEST_PASS;
}
