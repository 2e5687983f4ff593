#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The measuring tools' rule, checked on their JSON (argv[1]): tlbmiss_cost
--json (tlbmiss_cost(8) OUTPUT) or cpupcstat --compare --json (cpupcstat(8)
OUTPUT). The figures consistent with each other; measurable iff the interval
is within the bound (and, for tlbmiss_cost's cost, above 0); tlbmiss_cost's
figure round(estimate) or 0. Prints one line of what was measured; exits 1
with the broken rule."""
import json
import sys

doc = json.loads(sys.argv[1])
tool = "tlbmiss_cost" if "tlbmiss_cost" in doc else "cpupcstat"
t = doc[tool]
if tool == "tlbmiss_cost":
    e, floor, positive = t["estimate"], t["bound_cycles"], True
else:
    e, floor, positive = t["saving_pct"], t["bound_points"], False
lo, hi, b = t["low"], t["high"], t["bound"]
bad = []
known = e is not None and lo is not None and hi is not None
if t["rounds"] != t["rounds_kept"] + t["rounds_discarded"]:
    bad.append("rounds %r != kept %r + discarded %r" % (t["rounds"], t["rounds_kept"], t["rounds_discarded"]))
if t["rounds_discarded"] != t["discarded_switched"] + t["discarded_stalled"]:
    bad.append("discarded %r != switched + stalled" % t["rounds_discarded"])
if t["rounds"] > t["max_rounds"]:
    bad.append("more rounds than --runs")
if t["stopped"] == "narrow" and not t["narrow"]:
    bad.append("stopped narrow, not narrow")
if t["stopped"] == "budget" and t["budget_used_s"] < t["budget_s"]:
    bad.append("stopped by a budget not spent")
if t["stopped"] == "rounds" and t["rounds"] != t["max_rounds"]:
    bad.append("stopped by --runs before %r rounds" % t["max_rounds"])
if t["measurable"] == ("reason" in t):
    bad.append("a reason is given iff not measurable")
if tool == "cpupcstat":
    for way in ("plain", "huge"):
        if len(t[way]["times_s"]) != t["rounds_kept"] or t["runs"] != t["rounds_kept"]:
            bad.append("%s: %d times for %d rounds kept" % (way, len(t[way]["times_s"]), t["rounds_kept"]))
if not known:
    # no interval: too few rounds kept (fewer than 6 at 95 %)
    if t["measurable"] or t["narrow"]:
        bad.append("measurable or narrow without an interval")
    if t["rounds_kept"] >= 6:
        bad.append("no interval from %d rounds kept" % t["rounds_kept"])
    print("%s: no interval: %d rounds, %d kept; stopped %s; measurable %s"
          % (tool, t["rounds"], t["rounds_kept"], t["stopped"], t["measurable"]))
else:
    if not lo <= e <= hi:
        bad.append("estimate %r outside the interval [%r, %r]" % (e, lo, hi))
    want_b = max(floor, abs(e) * t["bound_pct"] / 100)
    if abs(b - want_b) > 0.011:
        bad.append("bound %r, rule says %r" % (b, want_b))
    narrow = hi - e <= b + 0.011 and e - lo <= b + 0.011
    edge = abs(hi - e - b) <= 0.011 or abs(e - lo - b) <= 0.011 or (positive and abs(lo) <= 0.011)
    rule = narrow and (lo > 0 or not positive)
    if t["measurable"] != rule and not edge:
        bad.append("measurable %r, rule says %r" % (t["measurable"], rule))
    if tool == "cpupcstat" and t["rounds_kept"] > 0:
        # the saving is the median of the rounds' savings: between the least and the most
        s = [(p - h) / p * 100 for p, h in zip(t["plain"]["times_s"], t["huge"]["times_s"]) if p > 0]
        if s and not min(s) - 0.01 <= e <= max(s) + 0.01:
            bad.append("saving %r outside the rounds' savings [%r, %r]" % (e, min(s), max(s)))
    print("%s: %.2f, 95 %% interval %.2f to %.2f, bound %.2f; %d rounds, %d discarded; stopped %s; measurable %s"
          % (tool, e, lo, hi, b, t["rounds"], t["rounds_discarded"], t["stopped"], t["measurable"]))
if tool == "tlbmiss_cost":
    # the estimate rounded (it is printed to 2 decimals: 919.50 may be 919.4999)
    if t["measurable"] and abs(t["tlb_miss_cost"] - e) > 0.506:
        bad.append("tlb_miss_cost %r, want the estimate %r rounded" % (t["tlb_miss_cost"], e))
    if not t["measurable"] and t["tlb_miss_cost"] != 0:
        bad.append("tlb_miss_cost %r, want 0 (not measurable)" % t["tlb_miss_cost"])
if bad:
    print("rule broken: " + "; ".join(bad))
    sys.exit(1)
