"""Cost of validating the hostile schemas of issue 12 with the bounded validator.

Run: `.venv/bin/python benchmarks/schema_cost.py`

Prints, per schema: verdict, keyword steps, wall time and peak Python memory (tracemalloc)
of `inspector.protocol.schema.validate`. The stated budget (docs/architecture.md, Issue 12):
every validation ends within MAX_STEPS keyword applications / MAX_SECONDS — before the fix
the depth-18 chain took 22 s and 1.5 GB, depth 20 98 s and 6.1 GB, and `^(a+)+$` on 30
characters 26 s.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from inspector.protocol import schema as schemas
from inspector.protocol.hostile_schemas import (
    doubling_chain,
    evil_string,
    input_schema_with_evil_default,
    pattern_properties_schema,
    pattern_schema,
)
from inspector.protocol.schema_budget import MAX_SECONDS, MAX_STEPS, STEPS_PER_NODE, budget_for


def measure(name: str, instance: Any, schema: Any) -> dict[str, Any]:
    budget = budget_for(instance)
    t0 = time.perf_counter()
    errs = schemas.validate(instance, schema, budget=budget)
    took = time.perf_counter() - t0
    # Memory in a second run: tracemalloc slows Python code about 3x.
    tracemalloc.start()
    schemas.validate(instance, schema, budget=budget_for(instance))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    verdict = errs[0][1][:60] if errs else "valid"
    return {"name": name, "verdict": verdict, "steps": budget.steps, "seconds": took,
            "peak_mib": peak / 2**20}


def cases() -> list[tuple[str, Any, Any]]:
    out: list[tuple[str, Any, Any]] = []
    for depth in (18, 20, 28):
        out.append((f"anyOf/$ref chain depth {depth}", 0, doubling_chain(depth)))
    for n in (30, 64, 10_000):
        out.append((f"pattern ^(a+)+$ on {n} chars", evil_string(n), pattern_schema()))
    out.append(("patternProperties ^(a+)+$ 64-char key", {evil_string(64): 1},
                pattern_properties_schema()))
    out.append(("default pre-fill (32 chars)", {"q": evil_string(32)},
                input_schema_with_evil_default(32)))
    out.append(("look-ahead pattern", "abc", pattern_schema("^(?=a)abc$")))
    return out


def main() -> int:
    print(f"budget: {MAX_STEPS:,} keyword steps (+{STEPS_PER_NODE} per instance node), "
          f"{MAX_SECONDS:g} s per validation")
    print(f"{'schema':42} {'steps':>8} {'seconds':>8} {'peak MiB':>9}  verdict")
    worst = 0.0
    for name, instance, schema in cases():
        r = measure(name, instance, schema)
        worst = max(worst, r["seconds"])
        print(f"{r['name']:42} {r['steps']:>8,} {r['seconds']:>8.3f} {r['peak_mib']:>9.1f}  "
              f"{r['verdict']}")
    print(f"slowest: {worst:.3f} s (budget {MAX_SECONDS:g} s + one step)")
    return 0 if worst <= MAX_SECONDS * 1.5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
