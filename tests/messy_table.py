#!/usr/bin/env python3
"""messy_table.py DIR [SEED] - a realistic messy customer table (an id, a date,
text categories, missing cells, a churn label from a noisy logistic rule) split
into DIR/train.csv and DIR/test.csv, and the scikit-learn pipeline a user would
write for it fitted on train.csv and scored on test.csv: SimpleImputer(median,
add_indicator) + StandardScaler on the numbers, SimpleImputer("missing") +
OneHotEncoder(handle_unknown="ignore") on the categories, then MLPClassifier.
Prints "sklearn_accuracy A" (A in [0, 1]). Exit 3 without numpy/pandas/sklearn
(the C test then skips). Used by tests/test_csv.c and docs/TABLES.md."""
import csv, os, sys, warnings

try:
    import numpy as np
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler
except ImportError as e:
    print("needs numpy, pandas and scikit-learn: %s" % e)
    sys.exit(3)

CITIES = ["Lyon", "Oslo", "San Jose, CA", "Kyiv", "Lima", "Pune", "Accra", "Hanoi"]
PLANS = ["basic", "plus", "pro"]
CHANNELS = ["web", "store", "phone", "partner"]


def rows(rng, n, first_id):
    for i in range(n):
        age = int(rng.integers(18, 80))
        income = float(rng.lognormal(10, 0.5))
        city = int(rng.integers(0, len(CITIES)))
        plan = int(rng.integers(0, len(PLANS)))
        channel = int(rng.integers(0, len(CHANNELS)))
        visits = int(rng.poisson(5))
        logit = (-0.05 * (age - 45) + 1.0 * (plan == 0) - 0.8 * (plan == 2) + 0.7 * (city == 1)
                 - 0.5 * (city == 4) + 0.4 * (channel == 2) - 0.2 * (visits - 5)
                 - 0.5 * np.log(income / 22000) + 0.8 * rng.standard_normal())
        row = ["C%06d" % (first_id + i),
               "2023-%02d-%02d" % (rng.integers(1, 13), rng.integers(1, 29)),
               age, "%.2f" % income, CITIES[city], PLANS[plan], CHANNELS[channel], visits,
               "yes" if logit > 0 else "no"]
        if rng.random() < 0.10:
            row[2] = ""
        if rng.random() < 0.05:
            row[3] = "NA"
        if rng.random() < 0.08:
            row[4] = ""
        if rng.random() < 0.03:
            row[6] = "null"
        yield row


def main():
    out = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    rng = np.random.default_rng(seed)
    header = ["customer_id", "signup_date", "age", "income", "city", "plan", "channel",
              "visits", "churn"]
    for name, n, first in (("train.csv", 6000, 0), ("test.csv", 2000, 6000)):
        with open(os.path.join(out, name), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(header)
            w.writerows(rows(rng, n, first))
    na = ["", "NA", "null"]
    train = pd.read_csv(os.path.join(out, "train.csv"), na_values=na, keep_default_na=False)
    test = pd.read_csv(os.path.join(out, "test.csv"), na_values=na, keep_default_na=False)
    num, cat = ["age", "income", "visits"], ["city", "plan", "channel"]
    pre = ColumnTransformer([
        ("num", make_pipeline(SimpleImputer(strategy="median", add_indicator=True),
                              StandardScaler()), num),
        ("cat", make_pipeline(SimpleImputer(strategy="constant", fill_value="missing"),
                              OneHotEncoder(handle_unknown="ignore")), cat)])
    # ffnn's run: 256 relu units, adam lr 1e-3, batch 64, 30 epochs (no early stop)
    model = make_pipeline(pre, MLPClassifier(hidden_layer_sizes=(256,), batch_size=64,
                                             learning_rate_init=1e-3, max_iter=30,
                                             random_state=seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning at max_iter: as intended
        model.fit(train[num + cat], train["churn"])
    print("sklearn_accuracy %.4f" % model.score(test[num + cat], test["churn"]))


if __name__ == "__main__":
    main()
