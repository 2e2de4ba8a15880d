/* cmd_plot.c - ffnn plot FILE.csv [...]: runs bench/plot_log.py with python3
 * (/usr/bin/python3 when present; FFNN_PYTHON overrides; the script is found
 * only relative to the executable, never in the current directory), which draws the train
 * loss and the test (or validation) loss and accuracy per epoch to a PNG. The drawing itself lives in the script
 * (matplotlib). The arguments go to the script as given: they are scanned here (for
 * --help and the file count), not parsed with getopt, which would reorder them. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "exe_path.h"

const char *const ffnn_cli_plot_usage =
    "usage: ffnn plot FILE.csv [FILE2.csv ...] [--out PNG] [--labels A,B,...]\n"
    "\n"
    "Draw the curves of ffnn train --log FILE.csv: train and test loss per epoch and,\n"
    "for classification, test accuracy per epoch (validation loss and accuracy for a\n"
    "run with --val-split); several files are overlaid. Runs\n"
    "python3 bench/plot_log.py (needs matplotlib; Debian: python3-matplotlib), found\n"
    "only relative to the executable: ../bench/plot_log.py (a source tree's build/ffnn)\n"
    "or ../share/ffnn/plot_log.py (an installed PREFIX/bin/ffnn), never in the current\n"
    "directory; without it, prints the command to run.\n"
    "\n"
    "options:\n"
    "  --out PNG         the image (default: the first CSV with .png; at most 200 KB)\n"
    "  --labels A,B,...  legend labels, one per file (default: the file names)\n"
    "  -h, --help        this help\n"
    "\n"
    "FFNN_PYTHON names the Python interpreter (default: /usr/bin/python3, else\n"
    "python3 on PATH).\n";

/* The script relative to the executable only (never the current directory, which
 * may be anyone's: running a script found there would run their code):
 * ../bench/plot_log.py (the source tree) or ../share/ffnn/plot_log.py (an
 * install prefix). 0 if found. */
static int find_script(char *path, size_t size)
{
    static const char *const relative[] = {"../bench/plot_log.py", "../share/ffnn/plot_log.py"};
    return ffnn_cli_beside_exe(relative, sizeof relative / sizeof relative[0], R_OK, path, size);
}

static void print_command(FILE *f, const char *python, const char *script, int argc,
                          char **argv)
{
    fprintf(f, "%s %s", python, script);
    for (int i = 1; i < argc; i++)
        fprintf(f, " '%s'", argv[i]);
    fputc('\n', f);
}

/* Run ffnn plot: argv[0] is "plot". Execs python3 on plot_log.py (found relative to
 * the executable: ../bench/plot_log.py from build/ffnn, ../share/ffnn/plot_log.py
 * from PREFIX/bin/ffnn) with the remaining arguments; without the script or python3, prints
 * the command to run. Exit status: the script's, 1 on an error, 2 on a usage error. */
int ffnn_cli_plot(int argc, char **argv)
{
    int files = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(ffnn_cli_plot_usage, stdout);
            return 0;
        }
        if (strcmp(argv[i], "--out") == 0 || strcmp(argv[i], "--labels") == 0)
            i++; /* its value */
        else if (argv[i][0] != '-')
            files++;
    }
    if (files == 0) {
        fprintf(stderr, "ffnn plot: expects at least one CSV file of ffnn train --log "
                "(see 'ffnn plot --help')\n");
        return 2;
    }
    /* Debian's python3-matplotlib installs for /usr/bin/python3 (a python3 first on
     * PATH, e.g. a virtual environment, may lack it); FFNN_PYTHON overrides. */
    const char *python = getenv("FFNN_PYTHON");
    if (!python || !*python)
        python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    char script[PATH_MAX + 32];
    if (find_script(script, sizeof script) != 0) {
        fprintf(stderr, "ffnn plot: plot_log.py not found relative to the executable "
                "(../bench/ or ../share/ffnn/; the current directory is not searched); from "
                "the ffnn source tree, run:\n  ");
        print_command(stderr, python, "bench/plot_log.py", argc, argv);
        return 1;
    }
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (!args) {
        fprintf(stderr, "ffnn plot: out of memory\n");
        return 1;
    }
    args[0] = (char *)python;
    args[1] = script;
    for (int i = 1; i < argc; i++)
        args[i + 1] = argv[i];
    fflush(stdout);
    fflush(stderr);
    execvp(python, args);
    int err = errno;
    fprintf(stderr, "ffnn plot: cannot run %s: %s; with python3 and matplotlib, run:\n  ",
            python, strerror(err));
    print_command(stderr, python, script, argc, argv);
    free(args);
    return 1;
}
