/* test_install.c - ffnn as a user installs and uses it: the examples (examples/NAME.c,
 * shown verbatim in docs/C_API.md) run from the build tree; make install into a
 * temporary DESTDIR, the examples built against it with pkg-config (shared and
 * static) and run, make uninstall (tests/install_test.sh); the man page lists every
 * option; the program's OpenMP spin count; the Python module (tests/test_python.py). The build directory is that of
 * FFNN_BIN (make test sets it), else build/. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "cli_run.h"
#include "ffnn.h"
#include "test_files.h"

static const char *const fashion = "/usr/share/datasets/fashion-mnist";

/* The build directory (dirname of cli_binary(): FFNN_BIN, else build/ffnn) into buf. */
static const char *build_dir(char *buf, size_t size)
{
    const char *cli = cli_binary();
    const char *slash = cli ? strrchr(cli, '/') : NULL;
    if (!slash)
        return snprintf(buf, size, "build"), buf;
    snprintf(buf, size, "%.*s", (int)(slash - cli), cli);
    return buf;
}

/* Run argv (execvp) with stdout and stderr into out_path (NULL: inherited);
 * its exit status, or -1 (killed by a signal, which is printed). */
static int run(char *const argv[], const char *out_path)
{
    return test_run_argv_to(argv, out_path, out_path);
}

/* The file's text (NUL-terminated) into *text (caller frees); 0 on success. */
static int read_text(const char *path, char **text)
{
    blob b;
    if (test_read_file(path, &b) != 0)
        return -1;
    char *t = realloc(b.data, b.size + 1);
    if (!t) {
        free(b.data);
        return -1;
    }
    t[b.size] = '\0';
    *text = t;
    return 0;
}

/* The C library guide (docs/C_API.md) shows every examples/NAME.c verbatim (so what it
 * shows compiles and runs). */
TEST("examples_shown_verbatim_in_c_api_guide", examples_in_readme)
{
    char *readme = NULL;
    CHECK(read_text("docs/C_API.md", &readme) == 0, "cannot read docs/C_API.md (run from "
                                                    "the repository root)");
    DIR *d = opendir("examples");
    CHECK(d != NULL, "no examples/ directory");
    int n = 0;
    struct dirent *e;
    test_result r = TEST_PASS;
    while (r == TEST_PASS && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 3 || strcmp(e->d_name + len - 2, ".c") != 0)
            continue;
        char path[512], *text = NULL;
        snprintf(path, sizeof path, "examples/%s", e->d_name);
        if (read_text(path, &text) != 0) {
            fprintf(stderr, "    cannot read %s\n", path);
            r = TEST_FAIL;
            break;
        }
        if (!strstr(readme, text)) {
            fprintf(stderr, "    docs/C_API.md does not show %s verbatim\n", path);
            r = TEST_FAIL;
        }
        free(text);
        n++;
    }
    closedir(d);
    free(readme);
    CHECK(r == TEST_PASS, "see above");
    CHECK(n >= 2, "%d examples found, expected at least 2", n);
    return TEST_PASS;
}

/* The last "test_accuracy NN.NN%" in the file at path, or -1. */
static double last_accuracy(const char *path)
{
    char *text = NULL;
    if (read_text(path, &text) != 0)
        return -1;
    double acc = -1;
    for (const char *p = strstr(text, "test_accuracy "); p; p = strstr(p + 1, "test_accuracy "))
        acc = atof(p + strlen("test_accuracy "));
    free(text);
    return acc;
}

/* The examples of the build tree (linked to its libffnn.so through their rpath): the
 * circle of train_arrays learnt (>= 90% on fresh points); train_mnist trains one epoch
 * of Fashion-MNIST (>= 60%), saves, loads and predicts. */
TEST_DIR_CASE("examples_run_from_the_build_tree", "install", examples_run)
{
    char build[512], exe[1024], out[1024], model[1024];
    build_dir(build, sizeof build);
    snprintf(exe, sizeof exe, "%s/examples/train_arrays", build);
    CHECK(access(exe, X_OK) == 0, "%s not built (make examples)", exe);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    char *const arrays[] = {exe, NULL};
    CHECK(run(arrays, out) == 0, "%s failed", exe);
    double acc = last_accuracy(out);
    CHECK(acc >= 90, "train_arrays: test accuracy %.2f%%, expected >= 90%%", acc);

    if (access(fashion, R_OK) != 0)
        SKIP("train_arrays passed; train_mnist needs %s (apt-get install "
             "dataset-fashion-mnist)", fashion);
    snprintf(exe, sizeof exe, "%s/examples/train_mnist", build);
    snprintf(model, sizeof model, "%s/model.safetensors", dir);
    char *const mnist[] = {exe, (char *)fashion, "1", model, NULL};
    CHECK(run(mnist, out) == 0, "%s failed", exe);
    acc = last_accuracy(out);
    CHECK(acc >= 60, "train_mnist: test accuracy of the loaded model %.2f%%, expected >= 60%%",
          acc);
    remove(out);
    remove(model);
    return TEST_PASS;
}

/* tests/install_test.sh MODE BUILD [NVCC=] [FFNN_MAKE_ARGS...]: exit 0 passes, 77
 * skips. FFNN_MAKE_ARGS: the make variables of this build when the tests run outside
 * make test (e.g. "CJSON_DIR=DIR"; make test passes its own through MAKEFLAGS). */
static test_result install_script(char *why, size_t why_size, const char *mode)
{
    char build[512], extra[1024];
    build_dir(build, sizeof build);
    char *argv[40] = {"sh", "tests/install_test.sh", (char *)mode, build};
    int argc = 4;
    /* a build without CUDA stays one when make install runs (nvcc may be present) */
    if (!ffnn_has_cuda())
        argv[argc++] = "NVCC=";
    snprintf(extra, sizeof extra, "%s", getenv("FFNN_MAKE_ARGS") ? getenv("FFNN_MAKE_ARGS") : "");
    for (char *w = strtok(extra, " "); w && argc < 39; w = strtok(NULL, " "))
        argv[argc++] = w;
    argv[argc] = NULL;
    int rc = run(argv, NULL);
    if (rc == 77)
        SKIP("tests/install_test.sh %s: a tool or data set is missing (see above)", mode);
    CHECK(rc == 0, "tests/install_test.sh %s %s exited with %d", mode, build, rc);
    return TEST_PASS;
}

TEST_WITH("install_destdir_pkgconfig_shared_static", install_destdir, install_script, "install");

TEST_WITH("man_page_lists_every_option", man_page, install_script, "man");

/* docs/CLI.md, the CLI reference, names every option of each command's --help. */
TEST_WITH("cli_reference_lists_every_option", cli_reference, install_script, "clidoc");

/* ffnn train runs with the environment it was given: no OpenMP variable added, no
 * re-execution (its threads are the library's pool, docs/PERFORMANCE.md "Waiting
 * policy"); its environment, read from /proc. */
TEST("cli_environment_left_alone", cli_wait_policy)
{
    return install_script(why, why_size, "wait");
}

/* Run FFNN_PYTHON (default /usr/bin/python3, Debian's) on script with this build's
 * libffnn.so: PASS, SKIP (the interpreter missing, or exit 77: a package missing,
 * named by missing) or FAIL. */
static test_result python_script(const char *script, const char *missing, char *why,
                                 size_t why_size)
{
    const char *python = getenv("FFNN_PYTHON") && *getenv("FFNN_PYTHON") ? getenv("FFNN_PYTHON")
                                                                          : "/usr/bin/python3";
    if (access(python, X_OK) != 0)
        SKIP("%s not installed", python);
    char build[512], lib[1024];
    build_dir(build, sizeof build);
    snprintf(lib, sizeof lib, "%s/libffnn.so", build);
    char *const argv[] = {(char *)python, (char *)script, lib, NULL};
    int rc = run(argv, NULL);
    if (rc == 77)
        SKIP("%s %s", python, missing);
    CHECK(rc == 0, "%s %s exited with %d", script, lib, rc);
    return TEST_PASS;
}

/* The Python module over this build's libffnn.so (python3-numpy). */
TEST("python_module", python_module)
{
    return python_script("tests/test_python.py",
                         "cannot import numpy (apt-get install python3-numpy)", why, why_size);
}

/* The Python module's pytest suite (tests/python/: the scikit-learn estimator checks,
 * pickling, options, the wheel) over this build's libffnn.so. */
TEST("python_pytest", python_pytest)
{
    return python_script("tests/python/run_pytest.py",
                         "lacks pytest, numpy or scikit-learn (apt-get install python3-pytest "
                         "python3-numpy python3-sklearn)",
                         why, why_size);
}
