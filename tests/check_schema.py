#!/usr/bin/python3
"""docs/paddock-policy.schema.json against the policies paddock accepts:
every shipped policy (contrib/policies) and every valid fixture
(tests/data/valid) must validate; and, so that the check can fail, a few
policies the loader refuses for their shape must not (a typo'd key, a
wrong type, an unknown protocol). Run by make unit."""
import glob
import json
import sys

try:
    import jsonschema
except ImportError:
    print("check-schema: python3-jsonschema is missing (make deps installs it)",
          file=sys.stderr)
    sys.exit(1)

root = sys.argv[1] if len(sys.argv) > 1 else "."
schema = json.load(open(f"{root}/docs/paddock-policy.schema.json"))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
bad = 0
files = sorted(glob.glob(f"{root}/contrib/policies/*.json") +
               glob.glob(f"{root}/tests/data/valid/*.json"))
for f in files:
    errs = list(v.iter_errors(json.load(open(f, encoding="utf-8-sig"))))
    for e in errs[:3]:
        print(f"check-schema: {f}: {'/'.join(map(str, e.path))}: {e.message}",
              file=sys.stderr)
    bad += bool(errs)
refused = [
    {"version": 1, "mountz": []},
    {"version": 1, "hostname": 5},
    {"version": 1, "network": {"mode": "mediated",
                               "allow": [{"host": "a", "ports": [1], "protocol": "ftp"}]}},
    {"version": 2},
    {"version": 1, "mounts": [{"type": "bind", "source": "/x", "mode": "rw", "bogus": 1}]},
]
for p in refused:
    if v.is_valid(p):
        print(f"check-schema: the schema accepts {json.dumps(p)}", file=sys.stderr)
        bad += 1
if bad:
    sys.exit(1)
print(f"check-schema: {len(files)} policies valid, {len(refused)} bad shapes refused")
