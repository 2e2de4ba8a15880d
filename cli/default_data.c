/* default_data.c - the data of --data (a synthetic set or an IDX directory), and
 * finding (or fetching) a data set for the CLI when the user gave no --data:
 * data/mnist/, an MNIST download, the Fashion-MNIST Debian package, installing that
 * package as root; else say how to get data. External tools (curl, wget, apt-get)
 * run through fork/execvp: no shell, so no quoting issues. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "default_data.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ffnn.h"
#include "options.h"

#define MNIST_DIR "data/mnist"
#ifndef FFNN_CLI_FASHION_DIR /* overridable for tests */
#define FFNN_CLI_FASHION_DIR "/usr/share/datasets/fashion-mnist"
#endif
#define FASHION_PACKAGE "dataset-fashion-mnist"
#define IDX_FILE_COUNT 4

/* The four files of an IDX directory: train images, train labels, test images,
 * test labels (each may also carry .gz). */
static const char *const idx_names[IDX_FILE_COUNT] = {
    "train-images-idx3-ubyte", "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte",
};

static const char *const mnist_mirrors[] = {
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
};

/* printf to log (nothing when log is NULL), flushed at once. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void say(FILE *log, const char *fmt, ...)
{
    va_list ap;

    if (!log)
        return;
    va_start(ap, fmt);
    vfprintf(log, fmt, ap);
    va_end(ap);
    fflush(log);
}

/* 1 when path is a regular file. */
static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* 1 when dir holds all four IDX files, each raw or .gz. */
static int has_idx_files(const char *dir)
{
    char path[1024];

    for (int i = 0; i < IDX_FILE_COUNT; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, idx_names[i]);
        if (is_file(path))
            continue;
        snprintf(path, sizeof path, "%s/%s.gz", dir, idx_names[i]);
        if (!is_file(path))
            return 0;
    }
    return 1;
}

/* 1 when an executable called name is on $PATH. */
static int on_path(const char *name)
{
    const char *path = getenv("PATH");
    char candidate[1024];

    while (path && *path) {
        size_t len = strcspn(path, ":");
        if (len > 0 && len < sizeof candidate - strlen(name) - 2) {
            snprintf(candidate, sizeof candidate, "%.*s/%s", (int)len, path, name);
            if (access(candidate, X_OK) == 0)
                return 1;
        }
        path += len;
        if (*path == ':')
            path++;
    }
    return 0;
}

/* In the child: stdin from /dev/null, stdout and stderr to log (or /dev/null). */
static void child_redirect(FILE *log)
{
    int null_fd = open("/dev/null", O_RDWR);
    int out_fd = log ? fileno(log) : null_fd;

    if (null_fd >= 0)
        dup2(null_fd, STDIN_FILENO);
    if (out_fd >= 0) {
        dup2(out_fd, STDOUT_FILENO);
        dup2(out_fd, STDERR_FILENO);
    }
}

/* Run argv [NULL-terminated] and wait for it; 0 when it exited with status 0. */
static int run(char *const argv[], FILE *log)
{
    pid_t pid, done;
    int status;

    if (log)
        fflush(log);
    fflush(stdout);
    pid = fork();
    if (pid < 0) {
        say(log, "cannot start %s: %s\n", argv[0], strerror(errno));
        return -1;
    }
    if (pid == 0) {
        child_redirect(log);
        execvp(argv[0], argv);
        _exit(127);
    }
    do
        done = waitpid(pid, &status, 0);
    while (done < 0 && errno == EINTR);
    if (done < 0)
        return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Download url into path with curl (or wget); 0 on success. */
static int fetch(const char *url, const char *path, FILE *log)
{
    if (on_path("curl")) {
        char *const argv[] = {"curl", "-fsL", "--connect-timeout", "5", "--max-time", "600", "-o",
                              (char *)path, (char *)url, NULL};
        return run(argv, log);
    }
    char *const argv[] = {"wget", "-q", "--timeout=5", "--tries=1", "-O",
                          (char *)path, (char *)url, NULL};
    return run(argv, log);
}

/* Remove the temporary files tmp [IDX_FILE_COUNT][...] that exist (non-empty names). */
static void remove_temps(char tmp[][256])
{
    for (int i = 0; i < IDX_FILE_COUNT; i++)
        if (tmp[i][0] != '\0') {
            remove(tmp[i]);
            tmp[i][0] = '\0';
        }
}

/* A fresh empty temporary file in MNIST_DIR for idx_names[i] into tmp [256]; 0 on success. */
static int make_temp(int i, char *tmp)
{
    int fd;

    snprintf(tmp, 256, MNIST_DIR "/.%s.gz.XXXXXX", idx_names[i]);
    fd = mkstemp(tmp);
    if (fd < 0) {
        tmp[0] = '\0';
        return -1;
    }
    close(fd);
    return 0;
}

/* Both pairs of tmp [4 paths] load as IDX data; 0 when they do, else why [why_size]
 * says what failed. */
static int temps_load(char tmp[][256], char *why, size_t why_size)
{
    for (int pair = 0; pair < 2; pair++) {
        ffnn_dataset *ds = NULL;
        if (ffnn_dataset_load_idx(tmp[2 * pair], tmp[2 * pair + 1], &ds) != FFNN_OK) {
            snprintf(why, why_size, "the downloaded files do not load: %s", ffnn_last_error());
            return -1;
        }
        ffnn_dataset_free(ds);
    }
    return 0;
}

/* Rename each tmp [4 paths] to MNIST_DIR/<name>.gz; 0 on success, else why [why_size]. */
static int install_temps(char tmp[][256], char *why, size_t why_size)
{
    char final[256];

    for (int i = 0; i < IDX_FILE_COUNT; i++) {
        snprintf(final, sizeof final, MNIST_DIR "/%s.gz", idx_names[i]);
        chmod(tmp[i], 0644); /* mkstemp made it 0600; a failure here is harmless */
        if (rename(tmp[i], final) != 0) {
            snprintf(why, why_size, "cannot rename %.160s to %.160s: %.100s", tmp[i], final,
                     strerror(errno));
            return -1;
        }
        tmp[i][0] = '\0';
    }
    return 0;
}

/* Download the four MNIST files from mirror (the tools' own messages discarded), check
 * they load, move them into MNIST_DIR; 0 on success, else why [why_size] says what
 * failed (on failure no temporary file is left). */
static int try_mirror(const char *mirror, char *why, size_t why_size)
{
    char tmp[IDX_FILE_COUNT][256] = {{0}};
    char url[512];
    int rc = 0;

    for (int i = 0; rc == 0 && i < IDX_FILE_COUNT; i++) {
        snprintf(url, sizeof url, "%s%s.gz", mirror, idx_names[i]);
        rc = make_temp(i, tmp[i]);
        if (rc != 0)
            snprintf(why, why_size, "cannot create a file in %s/: %s", MNIST_DIR,
                     strerror(errno));
        else if ((rc = fetch(url, tmp[i], NULL)) != 0)
            snprintf(why, why_size, "its download failed: no network, or the mirrors are down");
    }
    if (rc == 0)
        rc = temps_load(tmp, why, why_size);
    if (rc == 0)
        rc = install_temps(tmp, why, why_size);
    remove_temps(tmp);
    return rc;
}

/* mkdir path unless it exists; *created = 1 when this call made it. 0 on success. */
static int make_dir(const char *path, int *created)
{
    *created = 0;
    if (mkdir(path, 0777) == 0) {
        *created = 1;
        return 0;
    }
    return errno == EEXIST ? 0 : -1;
}

/* Step (b): download MNIST into MNIST_DIR from the first mirror that works; one line
 * on log when it did. Directories made for it are removed again on failure. 0 on
 * success, else why [why_size] says what failed (the caller prints it once). */
static int download_mnist(FILE *log, char *why, size_t why_size)
{
    int made_data = 0, made_mnist = 0, rc = -1;

    if (!on_path("curl") && !on_path("wget")) {
        snprintf(why, why_size, "no curl or wget to download it");
        return -1;
    }
    if (make_dir("data", &made_data) != 0 || make_dir(MNIST_DIR, &made_mnist) != 0) {
        snprintf(why, why_size, "cannot create %s/: %s", MNIST_DIR, strerror(errno));
    } else {
        for (size_t m = 0; rc != 0 && m < sizeof mnist_mirrors / sizeof mnist_mirrors[0]; m++)
            if ((rc = try_mirror(mnist_mirrors[m], why, why_size)) == 0)
                say(log, "downloaded MNIST into %s/ from %s\n", MNIST_DIR, mnist_mirrors[m]);
    }
    if (rc != 0 && made_mnist)
        rmdir(MNIST_DIR);
    if (rc != 0 && made_data)
        rmdir("data");
    return rc;
}

/* Step (d): as root with apt-get, install the Fashion-MNIST package (after an
 * `apt-get update` when the first try fails). 0 when apt-get succeeded. */
static int apt_install_fashion(FILE *log)
{
    char *const install[] = {"apt-get", "install", "-y", FASHION_PACKAGE, NULL};
    char *const update[] = {"apt-get", "update", NULL};

    if (geteuid() != 0 || !on_path("apt-get"))
        return -1;
    say(log, "no --data given, no MNIST in " MNIST_DIR "/ and no download: as root, ffnn "
             "will now install the Debian package " FASHION_PACKAGE " (Fashion-MNIST, "
             "into " FFNN_CLI_FASHION_DIR ") with apt-get; give --data DIR (or "
             "--data synth:points) to avoid this\n");
    say(log, "running: apt-get install -y " FASHION_PACKAGE "\n");
    if (run(install, log) == 0)
        return 0;
    say(log, "running: apt-get update, then apt-get install -y " FASHION_PACKAGE "\n");
    if (run(update, log) != 0)
        return -1;
    return run(install, log);
}

/* Copy the result into the caller's buffers; 0 unless they are too small. */
static int found(const char *path, const char *name, char *dir, size_t dir_size,
                 char *description, size_t desc_size, FILE *log)
{
    int n = snprintf(dir, dir_size, "%s", path);
    if (n < 0 || (size_t)n >= dir_size) {
        say(log, "internal error: the buffer for the data path is too small\n");
        return -1;
    }
    snprintf(description, desc_size, "%s (%s)", name, path);
    return 0;
}

/* Find a data directory (see default_data.h). */
int ffnn_cli_find_default_data(char *dir, size_t dir_size, char *description,
                               size_t desc_size, FILE *log)
{
    char why[512] = "";
    if (!dir || dir_size == 0 || !description || desc_size == 0)
        return -1;
    if (has_idx_files(MNIST_DIR) || download_mnist(log, why, sizeof why) == 0)
        return found(MNIST_DIR, "MNIST", dir, dir_size, description, desc_size, log);
    if (has_idx_files(FFNN_CLI_FASHION_DIR) ||
        (apt_install_fashion(log) == 0 && has_idx_files(FFNN_CLI_FASHION_DIR))) {
        say(log, "no MNIST in " MNIST_DIR "/ (%s): using Fashion-MNIST from "
                 FFNN_CLI_FASHION_DIR " (--data DIR chooses)\n", why);
        return found(FFNN_CLI_FASHION_DIR, "Fashion-MNIST", dir, dir_size, description,
                     desc_size, log);
    }
    say(log, "no data found (no MNIST in " MNIST_DIR "/: %s). Get it with: sudo apt-get "
             "install " FASHION_PACKAGE "   (or put MNIST's four IDX files in data/mnist/, "
             "or pass --data DIR)\n", why);
    return 1;
}

int ffnn_cli_load_data(const char *cmd, const char *spec, ffnn_dataset **train,
                       ffnn_dataset **test, char *description, size_t desc_size)
{
    char found_dir[4096];
    const char *dir = found_dir;

    if (spec && strncmp(spec, "synth:", 6) == 0) {
        snprintf(description, desc_size, "%s", spec);
        if (ffnn_dataset_synthetic(spec, 1, train, test) != FFNN_OK)
            return ffnn_cli_fail(cmd, "--data");
        return 0;
    }
    if (spec) {
        dir = spec; /* at any length */
        snprintf(description, desc_size, "%s", spec);
    } else if (ffnn_cli_find_default_data(found_dir, sizeof found_dir, description, desc_size,
                                          stderr) != 0) {
        return 1;
    }
    if (ffnn_dataset_load_idx_dir(dir, train, test) != FFNN_OK)
        return ffnn_cli_fail(cmd, train ? "loading data" : "loading the test set");
    return 0;
}
