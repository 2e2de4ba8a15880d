/* plot_command.h - ffnn plot: a thin wrapper that runs bench/plot_log.py (python3
 * with matplotlib) on the CSV files of ffnn train --log. */
#ifndef FFNN_CLI_PLOT_COMMAND_H
#define FFNN_CLI_PLOT_COMMAND_H

/* The --help text of ffnn plot. */
extern const char *const ffnn_cli_plot_usage;

/* Run ffnn plot: argv[0] is "plot". Execs python3 on bench/plot_log.py (found next
 * to the executable, ../bench/plot_log.py from build/ffnn, or in the current
 * directory) with the remaining arguments; without the script or python3, prints
 * the command to run. Exit status: the script's, 1 on an error, 2 on a usage error. */
int ffnn_cli_plot(int argc, char **argv);

#endif
