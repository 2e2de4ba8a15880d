/* commands.h - the commands of the ffnn program. Each lives in one file,
 * cli/cmd_NAME.c, and exports exactly two things: its run function and its --help
 * text; FFNN_CLI_COMMANDS below lists them, and cli/main.c's table is made from
 * it (a new command: one file and one line there).
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

/* The commands, in the order of ffnn --help, each X(NAME, SUMMARY): cli/cmd_NAME.c
 * defines ffnn_cli_NAME (run) and ffnn_cli_NAME_usage (its --help text); SUMMARY is
 * its line in ffnn --help. train: per-epoch metrics, save, log, checkpoint; sweep:
 * many configurations at once, ranked; eval: loss, accuracy, per-class accuracy,
 * confusion matrix of a model file; predict: one CSV line per input; info: describe
 * a model file; bench: run the separate benchmark program ffnn-bench (bench/, lab/);
 * plot: run bench/plot_log.py on ffnn train --log CSV files; export: a model file as
 * an ONNX model. */
#define FFNN_CLI_COMMANDS(X)                                                             \
    X(train, "train a network on an IDX data set and report test accuracy")              \
    X(sweep, "train many configurations of ffnn train at once and rank them")            \
    X(eval, "evaluate a saved model: loss, accuracy, per class, confusion matrix")       \
    X(predict, "run a saved model on an IDX image file or CSV rows")                     \
    X(info, "describe a model file: architecture, tensors, metadata")                    \
    X(bench, "run a benchmark suite of ffnn-bench (ffnn bench --help lists them)")       \
    X(plot, "draw the loss and accuracy curves of ffnn train --log CSV files")           \
    X(export, "write a saved model as an ONNX file (onnxruntime, TensorRT, onnx2c)")

#define FFNN_CLI_DECLARE_COMMAND(name, summary)                                          \
    int ffnn_cli_##name(int argc, char **argv);                                          \
    extern const char *const ffnn_cli_##name##_usage;
FFNN_CLI_COMMANDS(FFNN_CLI_DECLARE_COMMAND)

#endif
