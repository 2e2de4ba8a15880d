#!/usr/bin/env python3
"""Which rounding the installed PyTorch uses in the optimizer formulas the twin
follows (tests/torch_twin.py): one step of SGD and Adam with weight_decay (L2 added
to the gradient) on random float32 tensors, against numpy float32 written with two
roundings (g + wd p) and with one (a fused multiply-add); and ReduceLROnPlateau's
rates for a fixed metric sequence. Prints what matched; exits 0.
  python3 tests/torch_optim_probe.py"""
import numpy as np
import torch


def fma32(a, b, c):  # a * b + c rounded once to float32
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)


def main():
    rng = np.random.default_rng(1)
    n, wd, lr = 1 << 16, np.float32(1e-3), 1e-3
    p0 = rng.standard_normal(n).astype(np.float32) * np.float32(0.05)
    g0 = rng.standard_normal(n).astype(np.float32) * np.float32(1e-3)
    print(f"torch {torch.__version__}")
    for name, make in (("sgd", lambda ps: torch.optim.SGD(ps, lr=lr, weight_decay=float(wd))),
                       ("adam", lambda ps: torch.optim.Adam(ps, lr=lr, weight_decay=float(wd)))):
        p = torch.tensor(p0, requires_grad=True)
        p.grad = torch.tensor(g0)
        opt = make([p])
        # the gradient the optimizer saw: recover it from adam's first moment or sgd's step
        opt.step()
        two = g0 + wd * p0                       # two roundings (numpy float32)
        one = fma32(np.full(n, wd), p0, g0)      # one rounding
        if name == "sgd":
            seen = None
            exp_two = p0 - np.float32(lr) * two
            exp_one = p0 - np.float32(lr) * one
            got = p.detach().numpy()
            print(f"  sgd+L2: params equal to two-rounding formula in {np.mean(got == exp_two):.4f}"
                  f" of elements, to fma formula in {np.mean(got == exp_one):.4f}")
        else:
            seen = opt.state[p]["exp_avg"].numpy() / np.float32(0.1)  # m = 0.1 g after step 1
            m = opt.state[p]["exp_avg"].numpy()
            m_two = (two * np.float32(0.1)).astype(np.float32)
            m_one = (one * np.float32(0.1)).astype(np.float32)
            # lerp(0, g, 0.1) may round differently than 0.1 g: compare the v state too
            v = opt.state[p]["exp_avg_sq"].numpy()
            v_two = (np.float32(0.001) * two * two).astype(np.float32)
            v_one = (np.float32(0.001) * one * one).astype(np.float32)
            print(f"  adam+L2: exp_avg equal two-rounding {np.mean(m == m_two):.4f}, fma "
                  f"{np.mean(m == m_one):.4f}; exp_avg_sq equal two-rounding "
                  f"{np.mean(v == v_two):.4f}, fma {np.mean(v == v_one):.4f}")
            del seen
    # ReduceLROnPlateau (patience 0, factor 0.5, threshold 0.3) on a fixed sequence
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([p], lr=0.05)
    s = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, factor=0.5, threshold=0.3)
    rates = []
    for metric in (1.0, 0.6, 0.5, 0.3, 0.29, 0.1):
        s.step(metric)
        rates.append(opt.param_groups[0]["lr"])
    print(f"  plateau rates after metrics 1.0 0.6 0.5 0.3 0.29 0.1: {rates}"
          f" (1.13: [0.05, 0.05, 0.025, 0.025, 0.0125, 0.0125])")


if __name__ == "__main__":
    main()
