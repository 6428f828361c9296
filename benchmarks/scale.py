"""Scale: certify lightning networks up to a real transformer head (d = 768, a = 64) and check them.

Prints, per size: parameters P, certification time and peak memory, check time
and peak memory (each in a fresh process, so peaks do not mix), and the growth
exponent fitted to time against P, for single layers (the plain point,
attngeo/geometry/dimension/plainpoint.py) and deep networks of equal widths (the identity
point, attngeo/geometry/dimension/identitypoint.py). For the sizes the dense Jacobian
path can still do, it is timed in the same run and the ratio printed.

    python3 benchmarks/scale.py                              # everything below
    python3 benchmarks/scale.py --sizes 64,128 --deep 4:64   # a quick run
    python3 benchmarks/scale.py --sizes "" --deep 4:64,4:128,12:64 --dense-deep 4:32,4:48,4:64
"""

import argparse
import json
import math
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
from attngeo import Architecture, certify_dimension
from attngeo.check import check_certificate
from attngeo.geometry.dimension import dense as dimension
l, d, a, what = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
arch = Architecture((d,) * (l + 1), (a,) * l, tokens=2)
if what == "dense":
    dimension.STRUCTURED_FROM = 10**12
elif what == "structured":
    dimension.STRUCTURED_FROM = 0
start = time.perf_counter()
if what == "check":
    result = check_certificate(sys.argv[5]).claim
else:
    cert = certify_dimension(arch, seed=0)
    cert.save(sys.argv[5])
    result = cert.dimension
print(json.dumps({"seconds": time.perf_counter() - start, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "result": result, "P": arch.parameter_count}))
"""


def run(l: int, d: int, a: int, what: str, path: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(l), str(d), str(a), what, path], capture_output=True,
                         text=True)
    if out.returncode:
        raise SystemExit(f"l = {l}, d = {d} ({what}) failed: {out.stderr.strip()[-300:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def exponent(rows: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of log(time) against log(P)."""
    if len(rows) < 2:
        return None
    xs, ys = [math.log(p) for p, _ in rows], [math.log(max(s, 1e-3)) for _, s in rows]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def table(shapes: list[tuple[int, int, int]], title: str) -> None:
    print(f"\n{title}")
    print(f"{'l':>3} {'d':>5} {'a':>4} {'P':>9} {'dim M':>9} {'certify s':>10} {'peak MB':>8} {'check s':>8} {'peak MB':>8}")
    rows = []
    for l, d, a in shapes:
        path = f"/tmp/attngeo-scale-{l}-{d}.json"
        c = run(l, d, a, "structured", path)
        k = run(l, d, a, "check", path)
        rows.append((c["P"], c["seconds"]))
        print(f"{l:>3} {d:>5} {a:>4} {c['P']:>9} {c['result']:>9} {c['seconds']:>10.1f} {c['peak_mb']:>8.0f} "
              f"{k['seconds']:>8.1f} {k['peak_mb']:>8.0f}", flush=True)
    slope = exponent(rows)
    if slope is not None:
        print(f"growth: certification time ~ P^{slope:.2f}")


def compare(shapes: list[tuple[int, int, int]]) -> None:
    for l, d, a in shapes:
        s = run(l, d, a, "structured", f"/tmp/attngeo-scale-s{l}-{d}.json")
        n = run(l, d, a, "dense", f"/tmp/attngeo-scale-d{l}-{d}.json")
        print(f"l = {l}, d = {d}, a = {a}: structured {s['seconds']:.2f} s ({s['peak_mb']:.0f} MB), dense "
              f"{n['seconds']:.2f} s ({n['peak_mb']:.0f} MB), ratio dense/structured "
              f"{n['seconds'] / max(s['seconds'], 1e-3):.0f}; same dimension: {s['result'] == n['result']}", flush=True)


def pairs(text: str) -> list[tuple[int, int]]:
    return [tuple(int(x) for x in item.split(":")) for item in text.split(",") if item]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="64,128,256,512,768", help="single-layer widths d")
    parser.add_argument("--dense-up-to", type=int, default=48, help="also time the dense single layer up to this d")
    parser.add_argument("--deep", default="4:64,4:128,4:256,12:64,12:128", help="deep rows l:d (a = 4)")
    parser.add_argument("--dense-deep", default="4:32,4:48", help="deep rows l:d also timed on the dense path")
    args = parser.parse_args()
    single = [(1, d, 64 if d == 768 else max(1, round(d / 12))) for d in (int(s) for s in args.sizes.split(",") if s)]
    if single:
        table(single, "single layers (plain point)")
        compare([(1, d, max(1, round(d / 12))) for d in (24, 36, 48) if d <= args.dense_up_to])
    deep = [(l, d, 4) for l, d in pairs(args.deep)]
    if deep:
        table(deep, "deep networks of equal widths, a = 4 (identity point)")
        compare([(l, d, 4) for l, d in pairs(args.dense_deep)])


if __name__ == "__main__":
    main()
