/* commands.h - the commands of the ffnn program. Each lives in one file,
 * cli/cmd_NAME.c, and exports exactly two things: its run function and its --help
 * text; cli/main.c lists them in its one table (a new command: one file and one
 * line there).
 *
 * run(argc, argv): argv[0] is the command's word ("train"), the options follow.
 * It prints results on stdout, messages on stderr, and returns the exit status:
 * 0, 1 on an error, 2 on a usage error. */
#ifndef FFNN_CLI_COMMANDS_H
#define FFNN_CLI_COMMANDS_H

/* One line of the command table. */
typedef struct ffnn_cli_command {
    const char *name;                  /* the word after ffnn: "train"              */
    int (*run)(int argc, char **argv); /* as above                                   */
    const char *const *usage;          /* where its --help text is                   */
    const char *summary;               /* its line in ffnn --help                    */
} ffnn_cli_command;

/* cmd_train.c: train a network, print per-epoch metrics, save, log, checkpoint. */
int ffnn_cli_train(int argc, char **argv);
extern const char *const ffnn_cli_sweep_usage;
int ffnn_cli_sweep(int argc, char **argv);
extern const char *const ffnn_cli_train_usage;

/* cmd_eval.c: loss, accuracy, per-class accuracy, confusion matrix of a model file. */
int ffnn_cli_eval(int argc, char **argv);
extern const char *const ffnn_cli_eval_usage;

/* cmd_predict.c: a model file on IDX images or CSV rows, one CSV line per input. */
int ffnn_cli_predict(int argc, char **argv);
extern const char *const ffnn_cli_predict_usage;

/* cmd_info.c: describe a model file. */
int ffnn_cli_info(int argc, char **argv);
extern const char *const ffnn_cli_info_usage;

/* cmd_bench.c: run the separate benchmark program ffnn-bench (bench/, lab/). */
int ffnn_cli_bench(int argc, char **argv);
extern const char *const ffnn_cli_bench_usage;

/* cmd_export.c: a model file as an ONNX model. */
int ffnn_cli_export(int argc, char **argv);
extern const char *const ffnn_cli_export_usage;

/* cmd_plot.c: run bench/plot_log.py on ffnn train --log CSV files. */
int ffnn_cli_plot(int argc, char **argv);
extern const char *const ffnn_cli_plot_usage;

#endif
