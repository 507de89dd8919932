#!/usr/bin/env python3
"""Summarises the validation harness's predictions from CrystalDiskMark's
eight numbers (scripts/validate-predict.sh): error, range, order and the
number named as tracked.

    python3 scripts/cdm-summary.py cases.jsonl drives.json
"""
import itertools
import json
import math
import statistics
import sys

cases = [json.loads(l) for l in open(sys.argv[1])]
figures = {}
for d in json.load(open(sys.argv[2])):
    if d["name"].startswith("cdm-") and d.get("provenance"):
        figures[d["name"][4:]] = {
            "%s%s Q%dT%d %s" % ("SEQ" if t["access"] == "seq" else "RND", "1M" if t["size_bytes"] == 1 << 20 else "4K",
                                t["depth"], t["threads"], t["op"]): t["mb_s"] for t in d["provenance"]["tests"]}


def summary(name, cs):
    err = [abs(c["p"] / c["m"] - 1) for c in cs]
    off = [max(c["p"] / c["m"], c["m"] / c["p"]) for c in cs]
    held = sum(c["lo"] <= c["m"] <= c["hi"] for c in cs)
    print("%s: %d cases, median |predicted/measured - 1| %.0f %%, beyond 2x: %d, worst %.2fx, range holds the measured time in %d (%.0f %%)"
          % (name, len(cs), 100 * statistics.median(err), sum(o > 2 for o in off), max(off), held, 100 * held / len(cs)))


print()
summary("all", cases)
for to in sorted({c["to"] for c in cases}):
    summary("to " + to, [c for c in cases if c["to"] == to])

# Order: for each workload and recording, each pair of drives whose
# measured times differ by 20 % or more.
right = hright = pairs = 0
key = lambda c: (c["w"], c["from"])
for _, group in itertools.groupby(sorted(cases, key=key), key=key):
    for x, y in itertools.combinations(list(group), 2):
        if max(x["m"], y["m"]) < 1.2 * min(x["m"], y["m"]):
            continue
        pairs += 1
        right += (x["p"] < y["p"]) == (x["m"] < y["m"])
        hright += (x["h"] < y["h"]) == (x["m"] < y["m"])
if pairs:
    print("order: %d pairs of drives whose measured times differ by 20 %% or more; predicted order right in %d (%.0f %%), the headline's in %d (%.0f %%)"
          % (pairs, right, 100 * right / pairs, hright, 100 * hright / pairs))

# Tracked: per workload, over the pairs of drives whose measured times
# differ by 20 % or more, the figure whose ratio between the two follows
# the measured time ratio best; the named one passes within 10 % of it.
good = total = 0
names = sorted(next(iter(figures.values()))) if figures else []
for w in sorted({c["w"] for c in cases}):
    cs = [c for c in cases if c["w"] == w]
    named = max({c["tracks"] for c in cs}, key=lambda t: sum(c["tracks"] == t for c in cs))
    m = {}
    for c in cs:
        m.setdefault(c["to"], c["m"])
    ps = [(a, b) for a, b in itertools.combinations(sorted(m), 2)
          if max(m[a], m[b]) >= 1.2 * min(m[a], m[b]) and a in figures and b in figures]
    if not ps or named not in names:
        continue

    def miss(fig):
        return statistics.median(abs(math.log(figures[b][fig] / figures[a][fig]) - math.log(m[a] / m[b])) for a, b in ps)

    best = min(names, key=miss)
    ok = miss(named) <= miss(best) + math.log(1.1)
    total += 1
    good += ok
    print("tracked: %-12s named %-18s closest %-18s %s" % (w, named, best, "yes" if ok else "no"))
if total:
    print("tracked number right in %d of %d workloads (%.0f %%)" % (good, total, 100 * good / total))
