"""Scale for multi-head single layers: the head point (attngeo/geometry/dimension/headpoint.py) up to GPT-2 small.

Prints, per width d (h = d / 64 heads of rank a = 64 by default, value rank b = a
or V unfactored): parameters P, the certified dimension, "parameters - dim G"
(naive_count), certification time and peak memory, check time and peak memory
(each in a fresh process, so peaks do not mix), and the growth exponent of the
certification time against P. For the sizes the dense path can still do, it is
timed too and the ratio printed. (Unfactored with one head is [HMK]'s layer: the
plain point of attngeo/geometry/dimension/plainpoint.py certifies it.)

    python3 benchmarks/multihead_scale.py                                   # factored, d = 64 .. 768
    python3 benchmarks/multihead_scale.py --sizes 64,128 --unfactored       # V_j of d x d per head
    python3 benchmarks/multihead_scale.py --sizes 16,24 --rank 4 --dense    # beside the dense path
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

from scale import exponent  # the growth fit of benchmarks/scale.py (this folder is on sys.path when run)

CHILD = r"""
import json, resource, sys, time
from attngeo import Architecture, certify_dimension, naive_count
from attngeo.check import check_certificate
from attngeo.geometry.dimension import dense as dimension
d, h, a, b = (int(x) for x in sys.argv[1:5])
what = sys.argv[5]
arch = Architecture((d, d), (a,), heads=h, value_ranks=b or None, tokens=2)
dimension.STRUCTURED_FROM = 10**12 if what == "dense" else 0
start = time.perf_counter()
if what == "check":
    result = check_certificate(sys.argv[6]).claim
else:
    cert = certify_dimension(arch, seed=0)
    cert.save(sys.argv[6])
    result = cert.dimension
print(json.dumps({"seconds": time.perf_counter() - start, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "result": result, "P": arch.parameter_count, "naive": naive_count(arch)}))
"""


def run(d: int, h: int, a: int, b: int, what: str, path: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(d), str(h), str(a), str(b), what, path],
                         capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"d = {d}, h = {h} ({what}) failed: {out.stderr.strip()[-300:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="64,128,256,512,768", help="widths d (heads h = d / rank)")
    parser.add_argument("--rank", type=int, default=64, help="attention rank a = value rank b (default 64)")
    parser.add_argument("--unfactored", action="store_true", help="V_j of d x d per head instead of O_j U_j")
    parser.add_argument("--dense", action="store_true", help="time the dense path at the same sizes too")
    args = parser.parse_args()
    a = args.rank
    b = 0 if args.unfactored else a
    print(f"{'d':>5} {'h':>3} {'a':>3} {'b':>3} {'P':>9} {'dim M':>9} {'P - dim G':>9} {'certify s':>10} "
          f"{'peak MB':>8} {'check s':>8} {'peak MB':>8}" + (f" {'dense s':>8} {'ratio':>6}" if args.dense else ""))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for d in (int(x) for x in args.sizes.split(",") if x):
            h = max(1, d // a)
            path = os.path.join(tmp, f"heads-{d}.json")
            c = run(d, h, a, b, "head", path)
            k = run(d, h, a, b, "check", path)
            rows.append((c["P"], c["seconds"]))
            line = (f"{d:>5} {h:>3} {a:>3} {b or '-':>3} {c['P']:>9} {c['result']:>9} {c['naive']:>9} "
                    f"{c['seconds']:>10.1f} {c['peak_mb']:>8.0f} {k['seconds']:>8.1f} {k['peak_mb']:>8.0f}")
            if args.dense:
                n = run(d, h, a, b, "dense", os.path.join(tmp, f"dense-{d}.json"))
                assert n["result"] == c["result"], (n["result"], c["result"])
                line += f" {n['seconds']:>8.1f} {n['seconds'] / max(c['seconds'], 1e-3):>6.0f}"
            print(line, flush=True)
    slope = exponent(rows)
    if slope is not None:
        print(f"growth: certification time ~ P^{slope:.2f}")


if __name__ == "__main__":
    main()
