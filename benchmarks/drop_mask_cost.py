"""Modelled cost of the dense dropout mask in FA varlen and V5 backward: the same problem with
and without dropout, for a key length that is a multiple of 8 (a block's mask rows start on
bytes: one strided copy) and for two that are not (each row copied on its own and shifted down on
the scalar unit). The times are the emulator's timeline model on the 910B2 table, not a
measurement (docs/performance.md).

    python benchmarks/drop_mask_cost.py [--sq 512] [--skv 512 509 516]

One line per (operator, Skv): modelled us without and with dropout, their ratio, and the pipe
that bounds the run with dropout.
"""

from __future__ import annotations

import argparse

import fakit
from fakit.backends import cpu
from fakit.cases import flash_attention_unpadding_score_grad_v5 as v5
from fakit.cases import flash_attention_var_len_score as fav


def modelled_us(module, sq, skv, dropout):
    kw = module.make(
        "fp16", qlens=[sq], kvlens=[skv], N=2, D=64, dropout=dropout, keep_prob=0.8 if dropout else 1.0
    ).inputs()
    fakit.run(module.OP, backend="cpu", **kw)
    profile = cpu.last_profile()
    return profile["task_duration_us"], profile["bound_pipe"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sq", type=int, default=512)
    parser.add_argument("--skv", type=int, nargs="+", default=[512, 509, 516])
    args = parser.parse_args(argv)
    print(f"{'operator':40} {'Skv':>5} {'no drop us':>11} {'drop us':>8} {'ratio':>6}  bound (drop)")
    for module in (fav, v5):
        for skv in args.skv:
            plain, _ = modelled_us(module, args.sq, skv, False)
            drop, bound = modelled_us(module, args.sq, skv, True)
            print(f"{module.OP:40} {skv:5} {plain:11.1f} {drop:8.1f} {drop / plain:6.2f}  {bound}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
