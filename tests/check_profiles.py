#!/usr/bin/python3
"""The shipped agent-net profile is the agent profile with a mediated
network (docs/network.md says so; a user who picks it for the network
must not get weaker file protection): every key but "network" the same,
and the network mediated. So that the check can fail, a planted drift (one
protected path dropped from a copy) must be caught. Run by make unit."""
import json
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "."


def drift(agent, net):
    why = []
    for k in sorted(set(agent) | set(net)):
        if k != "network" and agent.get(k) != net.get(k):
            why.append(f"{k} differs")
    n = net.get("network")
    if not isinstance(n, dict) or n.get("mode") != "mediated":
        why.append("its network is not mediated")
    return why


agent = json.load(open(f"{root}/contrib/policies/agent.json"))
net = json.load(open(f"{root}/contrib/policies/agent-net.json"))
bad = drift(agent, net)
for w in bad:
    print(f"check-profiles: contrib/policies/agent-net.json: {w} from agent.json",
          file=sys.stderr)
planted = json.loads(json.dumps(net))
planted["protect"] = planted["protect"][1:]
if not drift(agent, planted):
    print("check-profiles: a protected path dropped from agent-net went unseen",
          file=sys.stderr)
    bad.append("self-test")
if bad:
    sys.exit(1)
print("check-profiles: agent-net.json is agent.json with a mediated network; "
      "a planted drift is caught")
