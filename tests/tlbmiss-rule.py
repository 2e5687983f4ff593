#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tlbmiss_cost --json's rule (tlbmiss_cost(8) OUTPUT), checked on its JSON
(argv[1]): the figures consistent with each other, measurable iff the
interval is within the bound and above 0, the figure round(estimate) or 0.
Prints one line of what was measured; exits 1 with the broken rule."""
import json
import sys

t = json.loads(sys.argv[1])["tlbmiss_cost"]
e, lo, hi, b = t["estimate"], t["low"], t["high"], t["bound"]
bad = []
if not lo <= e <= hi:
    bad.append("estimate %r outside the interval [%r, %r]" % (e, lo, hi))
if t["rounds"] != t["rounds_kept"] + t["rounds_discarded"]:
    bad.append("rounds %r != kept %r + discarded %r" % (t["rounds"], t["rounds_kept"], t["rounds_discarded"]))
if t["rounds_discarded"] != t["discarded_switched"] + t["discarded_stalled"]:
    bad.append("discarded %r != switched + stalled" % t["rounds_discarded"])
if t["rounds"] > t["max_rounds"]:
    bad.append("more rounds than --runs")
want_b = max(t["bound_cycles"], abs(e) * t["bound_pct"] / 100)
if abs(b - want_b) > 0.011:
    bad.append("bound %r, rule says %r" % (b, want_b))
narrow = hi - e <= b + 0.011 and e - lo <= b + 0.011
edge = abs(hi - e - b) <= 0.011 or abs(e - lo - b) <= 0.011 or abs(lo) <= 0.011
rule = narrow and lo > 0
if t["measurable"] != rule and not edge:
    bad.append("measurable %r, rule says %r" % (t["measurable"], rule))
# the estimate rounded (it is printed to 2 decimals: 919.50 may be 919.4999)
if t["measurable"] and abs(t["tlb_miss_cost"] - e) > 0.506:
    bad.append("tlb_miss_cost %r, want the estimate %r rounded" % (t["tlb_miss_cost"], e))
if not t["measurable"] and t["tlb_miss_cost"] != 0:
    bad.append("tlb_miss_cost %r, want 0 (not measurable)" % t["tlb_miss_cost"])
if t["measurable"] == ("reason" in t):
    bad.append("a reason is given iff not measurable")
if t["stopped"] == "narrow" and not t["narrow"]:
    bad.append("stopped narrow, not narrow")
if t["stopped"] == "budget" and t["budget_used_s"] < t["budget_s"]:
    bad.append("stopped by a budget not spent")
print("cost %.2f, 95 %% interval %.2f to %.2f, bound %.2f; %d rounds, %d discarded; stopped %s; measurable %s"
      % (e, lo, hi, b, t["rounds"], t["rounds_discarded"], t["stopped"], t["measurable"]))
if bad:
    print("rule broken: " + "; ".join(bad))
    sys.exit(1)
