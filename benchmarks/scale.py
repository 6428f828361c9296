"""Scale: certify single lightning layers up to a real transformer head (d = 768, a = 64) and check them.

Prints, per size: parameters P, certification time and peak memory, check time
and peak memory (each in a fresh process, so peaks do not mix), the path used,
and the growth exponent fitted to time against P. For the sizes the dense
Jacobian path can still do, it is timed in the same run and the ratio printed.

    python3 benchmarks/scale.py                 # d in 64, 128, 256, 512, 768
    python3 benchmarks/scale.py --sizes 64,128  # a quick run
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
from attngeo.geometry import dimension
d, a, what = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
arch = Architecture((d, d), (a,), tokens=2)
if what == "dense":
    dimension.STRUCTURED_FROM = 10**12
elif what == "structured":
    dimension.STRUCTURED_FROM = 0
start = time.perf_counter()
if what == "check":
    result = check_certificate(sys.argv[4]).claim
else:
    cert = certify_dimension(arch, seed=0)
    cert.save(sys.argv[4])
    result = cert.dimension
print(json.dumps({"seconds": time.perf_counter() - start, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "result": result, "P": arch.parameter_count}))
"""


def run(d: int, a: int, what: str, path: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(d), str(a), what, path], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"d = {d} ({what}) failed: {out.stderr.strip()[-300:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="64,128,256,512,768")
    parser.add_argument("--dense-up-to", type=int, default=48, help="also time the dense path up to this d")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    print(f"{'d':>5} {'a':>4} {'P':>9} {'dim M':>9} {'certify s':>10} {'peak MB':>8} {'check s':>8} {'peak MB':>8}")
    for d in sizes:
        a = 64 if d == 768 else max(1, round(d / 12))
        path = f"/tmp/attngeo-scale-{d}.json"
        c = run(d, a, "structured", path)
        k = run(d, a, "check", path)
        rows.append((c["P"], c["seconds"]))
        print(f"{d:>5} {a:>4} {c['P']:>9} {c['result']:>9} {c['seconds']:>10.1f} {c['peak_mb']:>8.0f} "
              f"{k['seconds']:>8.1f} {k['peak_mb']:>8.0f}")
    if len(rows) >= 2:
        xs, ys = [math.log(p) for p, _ in rows], [math.log(max(s, 1e-3)) for _, s in rows]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        print(f"growth: certification time ~ P^{slope:.2f} (structured path)")
    for d in (24, 36, 48):
        if d > args.dense_up_to:
            break
        a = max(1, round(d / 12))
        s = run(d, a, "structured", f"/tmp/attngeo-scale-s{d}.json")
        n = run(d, a, "dense", f"/tmp/attngeo-scale-d{d}.json")
        print(f"d = {d}, a = {a}: structured {s['seconds']:.2f} s, dense {n['seconds']:.2f} s "
              f"(ratio dense/structured {n['seconds'] / max(s['seconds'], 1e-3):.1f}); same dimension: "
              f"{s['result'] == n['result']}")


if __name__ == "__main__":
    main()
