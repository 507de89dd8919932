#!/usr/bin/env python3
"""Writes fio's JSON output of CrystalDiskMark 8's default tests as
CrystalDiskMark 8's text, for `ioshape drives import` (the validation
harness's "numbers only" profiles). Job names are the tests':
SEQ1M-Q8T1-read, RND4K-Q1T1-write, ...

    python3 scripts/cdm-text.py fio.json "what was measured" > cdm.txt
"""
import json
import sys


def main():
    out = json.load(open(sys.argv[1]))
    comment = sys.argv[2] if len(sys.argv) > 2 else ""
    rows = {}
    for j in out["jobs"]:
        name = j.get("jobname", "")
        if name.count("-") != 2:
            continue
        test, _, op = name.rpartition("-")
        d = j[op]
        rows[(op, test)] = (d["bw_bytes"] / 1e6, d["iops"], d["lat_ns"]["mean"] / 1e3)
    print("-" * 78)
    print("CrystalDiskMark 8's default tests, run by %s (CrystalDiskMark's text layout)" % out.get("fio version", "fio"))
    print("-" * 78)
    print("* MB/s = 1,000,000 bytes/s [SATA/600 = 600,000,000 bytes/s]")
    print("* KB = 1000 bytes, KiB = 1024 bytes")
    labels = {"SEQ1M-Q8T1": "SEQ    1MiB (Q=  8, T= 1)", "SEQ1M-Q1T1": "SEQ    1MiB (Q=  1, T= 1)",
              "RND4K-Q32T1": "RND    4KiB (Q= 32, T= 1)", "RND4K-Q1T1": "RND    4KiB (Q=  1, T= 1)"}
    for op, section in (("read", "[Read]"), ("write", "[Write]")):
        print()
        print(section)
        for test, label in labels.items():
            if (op, test) in rows:
                mbs, iops, lat = rows[(op, test)]
                print("  %s: %9.3f MB/s [%9.1f IOPS] <%9.2f us>" % (label, mbs, iops, lat))
    print()
    print("Profile: Default")
    size = out.get("global options", {}).get("size", "1g").lower().rstrip("b").rstrip("i")
    print("   Test: %s %siB (x1)" % (size[:-1], size[-1].upper()))
    print("   Date: %s" % out.get("time", ""))
    if comment:
        print("Comment: %s" % comment)


main()
