"""`fakit run`: run cases on a backend, compare with the golden by the precision standard,
print a table and exit non-zero when any case fails."""
from __future__ import annotations

import importlib
import json
import sys
import time
from collections import defaultdict
from typing import Any, Dict, List, Optional

from .. import cases
from ..errors import AclnnError, BackendUnavailable
from ..report import fmt, table
from ..runner import BACKENDS


def register(sub):
    p = sub.add_parser("run", help="run cases on a backend and compare with the golden")
    p.add_argument("--op", help=f"operator: {', '.join(cases.OPERATORS)} (optional with --case)")
    sel = p.add_mutually_exclusive_group(required=True)
    sel.add_argument("--suite", help="suite name: smoke, full (PFA/IFA also: peer)")
    sel.add_argument("--case", nargs="+", dest="case_ids", metavar="ID", help="case id(s)")
    p.add_argument("--backend", default="cpu", choices=BACKENDS)
    p.add_argument("--filter", default=None, help="only cases whose features contain this text")
    p.add_argument("--limit", type=int, default=None, help="run at most this many cases")
    p.add_argument("--counters", action="store_true",
                   help="print the emulator's per-pipe counters of each case (cpu backend)")
    p.add_argument("--json", dest="json_path", default=None, metavar="PATH",
                   help="write every case's result (metrics, verdict, time, counters) as JSON")
    p.set_defaults(func=main)


def select(args) -> List[cases.Case]:
    if args.case_ids:
        selected = [cases.get(args.op, cid) for cid in args.case_ids]
    else:
        if not args.op:
            raise ValueError("--suite needs --op")
        if args.op not in cases.OPERATORS:
            raise KeyError(f"unknown operator {args.op!r}; expected one of {', '.join(cases.OPERATORS)}")
        selected = cases.suite(args.op, args.suite)
    if args.filter:
        selected = [c for c in selected if args.filter in c.features]
    return selected[: args.limit] if args.limit is not None else selected


def run_case(case: cases.Case, backend: str, counters: bool = False) -> Dict[str, Any]:
    """Run one case; returns a result dict (verdict, metrics, time, report, error, counters)."""
    import fakit
    from fakit import golden
    from fakit.compare import compare

    kwargs = case.inputs()
    gold = getattr(golden, case.op)(**kwargs)
    # the golden backend is the golden itself: there is no device error for a benchmark to bound
    bench = None if backend == "golden" else golden.benchmark(case.op, **kwargs)
    result: Dict[str, Any] = {"id": case.id, "op": case.op, "features": case.features, "backend": backend}
    t0 = time.perf_counter()
    try:
        actual = fakit.run(case.op, backend=backend, **kwargs)
    except AclnnError as exc:
        # every suite case is valid by the spec, so a rejection is a failure
        result.update(verdict="FAIL", time=time.perf_counter() - t0, error=f"AclnnError {exc.status}: {exc.log}")
        return result
    result["time"] = time.perf_counter() - t0
    report = compare(case.op, actual, gold, bench, dtype=case.output_dtypes())
    result.update(verdict=report.verdict, report=report.as_dict(), summary=report.summary(),
                  mare=report.worst("mare"), mere=report.worst("mere"), rmse=report.worst("rmse"),
                  ratio_mare=report.worst("ratio_mare"), ratio_mere=report.worst("ratio_mere"),
                  ratio_rmse=report.worst("ratio_rmse"))
    if counters:
        result["counters"] = last_counters(backend)
    return result


def last_counters(backend: str) -> Optional[dict]:
    """The cpu backend's counters of its last run, or None when the backend has none."""
    try:
        module = importlib.import_module(f"fakit.backends.{backend}")
    except ImportError:
        return None
    fn = getattr(module, "last_counters", None)
    return fn() if fn else None


def summarise_counters(counters) -> Dict[str, float]:
    """Totals over cores: per-pipe counters ({"cores": [{"MTE2": {"bytes": ..}}, ..]}) are
    summed as 'MTE2.bytes'; top-level scalars (block_dim) are kept; per-core scalars (the
    core index) are dropped."""
    totals: Dict[str, float] = defaultdict(float)

    def walk(node, path, in_list):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, path + (str(k),), in_list)
        elif isinstance(node, list):
            for v in node:
                walk(v, (), True)
        elif isinstance(node, (int, float)) and not isinstance(node, bool):
            if not in_list:
                totals[".".join(path)] = node
            elif len(path) >= 2:
                totals[".".join(path[-2:])] += node

    walk(counters, (), False)
    return dict(totals)


def main(args) -> int:
    from tqdm import tqdm

    selected = select(args)
    if not selected:
        print("fakit run: no cases selected", file=sys.stderr)
        return 1
    results = []
    bar = tqdm(selected, desc=f"{args.backend}", unit="case", file=sys.stderr, disable=len(selected) < 2)
    for case in bar:
        bar.set_postfix_str(case.id)
        try:
            res = run_case(case, args.backend, args.counters)
        except BackendUnavailable:
            raise
        except (ValueError, RuntimeError) as exc:     # golden/backend errors: the case fails
            res = {"id": case.id, "op": case.op, "features": case.features, "backend": args.backend,
                   "verdict": "FAIL", "time": None, "error": f"{type(exc).__name__}: {exc}"}
        results.append(res)
    rows = [(r["id"], r["features"], r["verdict"], r.get("mare"), r.get("mere"), r.get("rmse"),
             r.get("ratio_mare"), r.get("ratio_mere"), r.get("ratio_rmse"),
             None if r.get("time") is None else f"{r['time']:.3f}") for r in results]
    print(table(("case", "features", "verdict", "MARE", "MERE", "RMSE", "xMARE", "xMERE", "xRMSE", "time[s]"),
                rows, max_width=70))
    failed = [r for r in results if r["verdict"] != "PASS"]
    for r in failed:
        print(f"FAIL {r['id']}: {r.get('error') or r.get('summary')}")
    if args.counters:
        for r in results:
            c = r.get("counters")
            text = "no counters (backend has no last_counters)" if c is None else \
                ", ".join(f"{k} {fmt(float(v), '.4g')}" for k, v in sorted(summarise_counters(c).items()))
            print(f"[counters] {r['id']}: {text}")
    if args.json_path:
        with open(args.json_path, "w") as fh:
            json.dump({"backend": args.backend, "passed": not failed, "results": results}, fh, indent=1, default=str)
    print(f"{len(results) - len(failed)}/{len(results)} passed on {args.backend}")
    return 1 if failed else 0
