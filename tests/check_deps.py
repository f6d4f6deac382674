#!/usr/bin/env python3
"""make check-deps: every #include "..." in the tree points the one allowed
way (docs/architecture.md):

  launcher/ (the binary) -> supervisor/ -> {sandbox/, session/}
                         -> {mounts/, policy/} -> include/
  mediator/ (paddock-mediator) -> policy/ -> include/; nothing of the
  launcher includes it, nor it the launcher
  client/ (the static paddock-exec) -> launcher/exec_client.h,
  session/session.h, include/
  sandbox/ and session/ never include each other; init/ includes only
  include/; a module's private headers are its own.

Each room may include its own files and the public headers listed for it
below, nothing else. Usage: check_deps.py [ROOT]; --self-test checks that a
forbidden include is caught (the weakened twin of the check itself).
"""
import os
import re
import sys
import tempfile

PUBLIC = {
    "binary": ["launcher/launcher.h", "launcher/supervisor/supervisor.h",
               "launcher/supervisor/oci.h",
               "launcher/session/session.h", "policy/policy.h", "evidence/evidence.h",
               "policy/approvals.h", "include/"],
    "supervisor": ["launcher/sandbox/sandbox.h", "launcher/session/session.h",
                   "evidence/evidence.h",
                   "mounts/mounts.h", "mounts/git.h", "policy/policy.h", "policy/sha256.h",
                   "policy/approvals.h", "policy/trust.h", "policy/manifest.h", "include/"],
    "sandbox": ["mounts/mounts.h", "policy/policy.h", "policy/sha256.h", "include/"],
    "session": ["policy/policy.h", "include/"],
    "mounts": ["policy/policy.h", "include/"],
    "policy": ["include/"],
    "init": ["include/"],
    "client": ["launcher/exec_client.h", "launcher/session/session.h", "include/"],
    "include": [],
    "scenarios": ["policy/sha256.h", "include/"],
    "mediator": ["policy/policy.h", "policy/sha256.h", "policy/approvals.h",
                 "evidence/evidence.h", "include/"],
    "evidence": ["policy/sha256.h", "include/"],
}
# The room of a path, and its own prefix (what it may include freely).
ROOMS = [
    ("launcher/sandbox/", "sandbox"),
    ("launcher/supervisor/", "supervisor"),
    ("launcher/session/", "session"),
    ("launcher/", "binary"),
    ("mounts/", "mounts"),
    ("policy/", "policy"),
    ("init/", "init"),
    ("client/", "client"),
    ("include/", "include"),
    ("scenarios/", "scenarios"),
    ("mediator/", "mediator"),
    ("evidence/", "evidence"),
]
# The binary's own files are launcher/*.{c,h} only, not its subfolders.
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def room_of(path):
    for prefix, room in ROOMS:
        if path.startswith(prefix):
            return prefix, room
    return None, None


def check(root):
    bad = []
    for dirpath, _, files in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir.startswith(("build", ".git", "tests", "bench", "contrib")):
            continue
        for f in files:
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.normpath(os.path.join(rel_dir, f))
            prefix, room = room_of(path)
            if room is None:
                continue
            with open(os.path.join(root, path), encoding="utf-8") as fh:
                text = fh.read()
            for m in INCLUDE.finditer(text):
                target = os.path.normpath(os.path.join(os.path.dirname(path), m.group(1)))
                tprefix, troom = room_of(target)
                if troom == room and (room != "binary" or "/" not in target[len(prefix):]):
                    continue  # its own files
                if any(target == p or (p.endswith("/") and target.startswith(p))
                       for p in PUBLIC[room]):
                    continue
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f"{path}:{line}: {room} must not include {target}")
    return bad


def self_test():
    """A tree with one include against the direction must fail, and the same
    tree without it must pass."""
    with tempfile.TemporaryDirectory() as d:
        for sub in ("launcher/sandbox", "launcher/session", "include"):
            os.makedirs(os.path.join(d, sub))
        open(os.path.join(d, "include/err.h"), "w").close()
        open(os.path.join(d, "launcher/session/session.h"), "w").close()
        good = '#include "sandbox.h"\n#include "../../include/err.h"\n'
        open(os.path.join(d, "launcher/sandbox/sandbox.h"), "w").close()
        with open(os.path.join(d, "launcher/sandbox/enter.c"), "w") as fh:
            fh.write(good)
        if check(d):
            return "a clean tree was refused: " + "; ".join(check(d))
        with open(os.path.join(d, "launcher/sandbox/enter.c"), "w") as fh:
            fh.write(good + '#include "../session/session.h"\n')
        found = check(d)
        if len(found) != 1 or "sandbox must not include launcher/session/session.h" not in found[0]:
            return "sandbox -> session was not caught: %r" % found
    return None


def main():
    if sys.argv[1:] == ["--self-test"]:
        why = self_test()
        if why:
            print("check-deps self-test: " + why, file=sys.stderr)
            return 1
        print("check-deps self-test: a forbidden include is caught")
        return 0
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    bad = check(root)
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        print(f"check-deps: {len(bad)} include(s) against the direction", file=sys.stderr)
        return 1
    print("check-deps: every include points the allowed way")
    return 0


if __name__ == "__main__":
    sys.exit(main())
