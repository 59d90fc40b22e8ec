#!/usr/bin/env python3
"""Estimate what clearing a superseded result could save on mini-swe-agent runs.

A result is superseded when the agent runs the very same command again: the
older output is stale. Clearing it when the newer arrives breaks the cache
from the older result on, so the tail since it (the older result, the
messages after it, the newer result) is sent again uncached once (0.9 of an
uncached token each, openai prices), and every later request is spared the
older result at the cached price (0.1). Characters stand for tokens; the
estimate ignores needles (a stale output the agent quotes later would cost
a re-read on top).

For each set and bound k, it clears only where the tail is at most k times
the older result (a rule that reads only the past) and prints the net
saving as a share of what the runs' results cost kept whole (result
characters x later requests x 0.1), and how many such clears lose money.

    python3 lab/scripts/superseded.py DIR...   # directories of *.traj.json
"""
import glob
import json
import re
import sys


def command(msg):
    calls = msg.get("tool_calls") or []
    if calls:
        try:
            return json.loads(calls[0]["function"]["arguments"]).get("command")
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
    text = msg["content"] if isinstance(msg["content"], str) else ""
    found = re.findall(r"```bash\s*\n(.*?)```", text, re.S)
    return found[0].strip() if found else None


def size(msg):
    c = msg["content"]
    return len(c if isinstance(c, str) else json.dumps(c))


def main(dirs):
    for d in dirs:
        for k in [2, 3, 5, 10, 1000]:
            kept = net = clears = losing = 0
            for f in sorted(glob.glob(d + "/*.traj.json")):
                msgs = json.load(open(f))["messages"]
                sizes = [size(m) for m in msgs]
                answers = [i for i, m in enumerate(msgs) if m["role"] == "assistant"]
                later = lambda i: sum(1 for a in answers if a > i)
                last = {}
                for i, m in enumerate(msgs):
                    if m["role"] not in ("tool", "user") or i < 2 or msgs[i - 1]["role"] != "assistant":
                        continue
                    kept += sizes[i] * later(i) * 0.1
                    c = command(msgs[i - 1])
                    if c and c in last:
                        j = last[c]
                        tail = sum(sizes[j:i + 1])
                        if tail <= k * sizes[j] and sizes[j] >= 200:
                            v = sizes[j] * later(i) * 0.1 - tail * 0.9
                            net += v
                            clears += 1
                            losing += v < 0
                    if c:
                        last[c] = i
            print(f"{d} k={k}: {clears} clears, {losing} lose, net {100 * net / kept:.2f}% of the results' kept cost")


if __name__ == "__main__":
    main(sys.argv[1:])
