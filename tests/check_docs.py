#!/usr/bin/python3
"""The numbers and lists the docs quote against the ones the code produces,
where that can be computed (make check-docs, run by make test).

  check_docs.py [--self-test] TOP     TOP: the source tree, built (make all)

- the default seccomp profile's allowed-call count ("N calls on x86_64",
  "N syscalls allowed") against `paddock run --explain` (x86_64 only: the
  docs quote that architecture's count);
- the weakening knobs: launcher/supervisor/weaken.c's table against
  `paddock run --help`, paddock(1)'s --weaken paragraph, docs/usage.md's
  and docs/security.md's tables;
- the verbs of `paddock --help` against paddock(1)'s SYNOPSIS;
- the mediator's decisions: include/admission.h against the ones
  docs/network.md names;
- the policy's top-level keys: policy/parse.c's list (and "extends")
  against paddock-policy(5)'s SYNOPSIS and FIELDS and docs/policy.md's
  field sections and their table of contents;
- the eval cases and their arms: `paddock-eval --list` against
  docs/scenarios.md's "Cases" table, and the cases against the README's
  list of implemented scenarios.
--self-test first plants one drift of each kind in a copy of the files
(and of the help texts) and fails unless every one is caught.
Exit: 0 ok, 1 a drift (one line each), 2 usage or the tree cannot be read.
"""
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile


def read(top, rel):
    with open(os.path.join(top, rel), encoding="utf-8") as f:
        return f.read()


def run(args, cwd=None):
    p = subprocess.run(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=60)
    return p.stdout.decode("utf-8", "replace")


def outputs(top):
    """What the built paddock says: --help, run --help, run --explain."""
    paddock = os.path.join(top, "build", "paddock")
    ws = tempfile.mkdtemp(prefix="paddock-docs-")
    try:
        return {"eval_list": run([os.path.join(top, "build", "paddock-eval"), "--list"]),
                "help": run([paddock, "--help"]),
                "run_help": run([paddock, "run", "--help"]),
                "explain": run([paddock, "run", "--explain", "--workspace", ws, "--", "true"],
                               cwd=ws)}
    finally:
        shutil.rmtree(ws, ignore_errors=True)


def diff(what, want, got, src_want, src_got):
    errs = []
    for x in sorted(set(want) - set(got)):
        errs.append("%s: %r is in %s, not in %s" % (what, x, src_want, src_got))
    for x in sorted(set(got) - set(want)):
        errs.append("%s: %r is in %s, not in %s" % (what, x, src_got, src_want))
    return errs


def man_text(s):
    """Roff to words: \\- is -, font escapes go."""
    return re.sub(r"\\f[BIRP]", "", s.replace("\\-", "-"))


def check_syscalls(top, out):
    m = re.search(r"seccomp: \d+ rules, (\d+) syscalls allowed", out["explain"])
    if not m:
        return ["paddock run --explain: no 'N syscalls allowed' line: %s" % out["explain"][-300:]]
    if platform.machine() != "x86_64":
        return []
    n, errs = int(m.group(1)), []
    for rel in doc_files(top):
        text = man_text(read(top, rel))
        for q in re.finditer(r"(\d+) (?:calls on x86_64|syscalls allowed|allowed syscalls)",
                             text):
            if int(q.group(1)) != n:
                line = text.count("\n", 0, q.start()) + 1
                errs.append("%s:%d: quotes %s allowed calls, the default profile allows %d "
                            "(paddock run --explain)" % (rel, line, q.group(1), n))
    return errs


def doc_files(top):
    files = ["README.md"]
    for d in ("docs", "docs/man"):
        for n in sorted(os.listdir(os.path.join(top, d))):
            if re.search(r"\.(md|[158])$", n):
                files.append(os.path.join(d, n))
    return files


def check_knobs(top, out):
    code = re.findall(r'^\s*(?:\[\d+\]\s*=\s*)?\{"([a-z-]+)",', read(top, "launcher/supervisor/weaken.c"), re.M)
    if len(code) < 2:
        return ["launcher/supervisor/weaken.c: the knob table was not found"]
    m = re.search(r"evaluation only:(.*?)\(repeatable", out["run_help"], re.S)
    helped = re.findall(r"[a-z][a-z-]+", m.group(1)) if m else []
    m = re.search(r'\\-\\-weaken " \\fIKNOB\\fR"\n(.*?)\n\.TP', read(top, "docs/man/paddock.1"),
                  re.S)
    man_knobs = re.findall(r"^\.B ([a-z][a-z\\-]+)$", m.group(1), re.M) if m else []
    man_knobs = [k.replace("\\-", "-") for k in man_knobs]
    errs = diff("knob", code, helped, "weaken.c", "paddock run --help")
    errs += diff("knob", code, man_knobs, "weaken.c", "paddock(1) --weaken")
    for rel, head in (("docs/usage.md", "## Weakenings"), ("docs/security.md",
                                                          "## Weakening knobs")):
        text = read(top, rel)
        i = text.find("\n" + head + "\n")
        sec = text[i:text.find("\n## ", i + 1)] if i >= 0 else ""
        rows = re.findall(r"^\| `([a-z-]+)` \|", sec, re.M)
        errs += diff("knob", code, rows, "weaken.c", "%s's table" % rel)
        # A blank line inside the table ends it in Markdown.
        if re.search(r"\|\n\n\|", sec):
            errs.append("%s: the knob table is broken by a blank line" % rel)
    return errs


def check_verbs(top, out):
    m = re.search(r"^Commands:\n(.*?)^Options:", out["help"], re.S | re.M)
    helped = re.findall(r"^  ([a-z]+)\b", m.group(1), re.M) if m else []
    if not helped:
        return ["paddock --help: no Commands section"]
    src = read(top, "docs/man/paddock.1")
    syn = src[src.find(".SH SYNOPSIS"):src.find(".SH DESCRIPTION")]
    man = re.findall(r"^\.B paddock ([a-z]+)", syn, re.M)
    return diff("verb", helped, man, "paddock --help", "paddock(1) SYNOPSIS")


def check_decisions(top, out):
    h = read(top, "include/admission.h")
    m = re.search(r"mediator_decision_names\[[A-Z_]+\] = \{(.*?)\};", h, re.S)
    code = re.findall(r'"([a-z-]+)"', m.group(1)) if m else []
    if not code:
        return ["include/admission.h: no mediator_decision_names"]
    doc = re.findall(r"`(allowed|released|held(?:-[a-z-]+)?|refused-[a-z-]+|dns-[a-z-]+|"
                     r"upstream-[a-z-]+|answered-[a-z-]+)`", read(top, "docs/network.md"))
    return diff("decision", code, doc, "include/admission.h", "docs/network.md")


def check_policy_keys(top, out):
    m = re.search(r"parse_root\(.*?keys\[\] = \{(.*?)\};", read(top, "policy/parse.c"), re.S)
    code = re.findall(r'"([a-z]+)"', m.group(1)) if m else []
    if not code:
        return ["policy/parse.c: parse_root's key list was not found"]
    top_keys = code + ["extends"]
    man = read(top, "docs/man/paddock-policy.5")
    syn = man[man.find(".SH SYNOPSIS"):man.find(".SH DESCRIPTION")]
    errs = diff("policy key", top_keys, re.findall(r'^  "([a-z]+)":', syn, re.M),
                "policy/parse.c", "paddock-policy(5) SYNOPSIS")
    fields = man[man.find(".SH FIELDS"):]
    documented = set(re.findall(r'^\.BR ([a-z]+) " \(', fields, re.M))
    errs += ["policy key: %r has no entry in paddock-policy(5) FIELDS" % k
             for k in top_keys if k not in documented]
    md = read(top, "docs/policy.md")
    heads = re.findall(r"^### ([a-z]+)$", md, re.M)
    errs += diff("policy key", code, heads, "policy/parse.c", "docs/policy.md's ### sections")
    toc = md[md.find("- [Fields](#fields)"):md.find("- [Durations")]
    errs += diff("policy key", top_keys, re.findall(r"\[([a-z]+)\]\(#", toc),
                 "policy/parse.c", "docs/policy.md's table of contents")
    return errs


def check_cases(top, out):
    cases = {}
    for m in re.finditer(r"^(HB-\d+)  .*\n +arms:(.*)$", out["eval_list"], re.M):
        cases[m.group(1)] = m.group(2).split()
    if not cases:
        return ["paddock-eval --list: no cases"]
    md = read(top, "docs/scenarios.md")
    i = md.find("\n## Cases\n")
    table = md[i:md.find("\n\n**", i)] if i >= 0 else ""
    rows = {}
    for m in re.finditer(r"^\| (HB-\d+) \| [^|]* \| (.*) \|$", table, re.M):
        col = re.sub(r"\([^)]*\)", "", m.group(2))  # "(an adapter, ...)" notes go
        rows[m.group(1)] = [a.split()[0] for a in col.split(",") if a.strip()]
    errs = diff("eval case", cases, rows, "paddock-eval --list", "docs/scenarios.md's Cases table")
    for c in sorted(set(cases) & set(rows)):
        errs += diff("%s arm" % c, cases[c], rows[c], "paddock-eval --list",
                     "docs/scenarios.md's Cases table")
    m = re.search(r"boundary scenarios \((HB-[^)]*)\)", read(top, "README.md"))
    listed = re.findall(r"HB-\d+", m.group(1)) if m else []
    errs += diff("eval case", cases, listed, "paddock-eval --list", "README's Scenario harness")
    return errs


CHECKS = [check_syscalls, check_knobs, check_verbs, check_decisions, check_policy_keys,
          check_cases]


def check(top, out):
    errs = []
    for c in CHECKS:
        errs += c(top, out)
    return errs


# (what, file or help text, old, new): each must be caught.
DRIFTS = [
    ("an allowed-call count", "docs/policy.md", re.compile(r"(\d+) calls on x86_64"),
     lambda m: "%d calls on x86_64" % (int(m.group(1)) + 4)),
    ("a knob missing from security.md", "docs/security.md",
     re.compile(r"^\| `gate-off` \|.*\n", re.M), ""),
    ("a blank line in security.md's table", "docs/security.md",
     re.compile(r"(^\| `no-sweep` \|)", re.M), r"\n\1"),
    ("a knob missing from usage.md", "docs/usage.md", re.compile(r"^\| `host-root` \|.*\n", re.M),
     ""),
    ("a knob missing from --help", "run_help", re.compile(r"dns-open, "), ""),
    ("a knob missing from paddock(1)", "docs/man/paddock.1",
     re.compile(r"^\.B dns\\-open\n", re.M), ".B dns\\-opened\n"),
    ("a verb missing from paddock(1)", "docs/man/paddock.1",
     re.compile(r"^\.B paddock logs$", re.M), ".B paddock"),
    ("a verb added to --help", "help", re.compile(r"^  doctor ", re.M),
     "  shell                               a verb nobody has\n  doctor "),
    ("a stale decision in network.md", "docs/network.md", re.compile(r"`refused-sni`"),
     "`refused-sni`, `refused-stale`"),
    ("a decision missing from network.md", "docs/network.md",
     re.compile(r"`refused-in-flight`"), "`refused-inflight`"),
    ("services missing from paddock-policy(5)'s synopsis", "docs/man/paddock-policy.5",
     re.compile(r'^  "services": .*\n', re.M), ""),
    ("a case missing from scenarios.md", "docs/scenarios.md",
     re.compile(r"^\| HB-10 \|.*\n", re.M), ""),
    ("an arm missing from scenarios.md", "docs/scenarios.md",
     re.compile(r"weakened:gate-off, "), ""),
    ("a case missing from README", "README.md", re.compile(r"HB-11,\s*"), ""),
    ("a case added to --list", "eval_list", re.compile(r"^HB-01 ", re.M),
     "HB-99  new\n   arms: enforced\nHB-01 "),
    ("a field missing from policy.md's contents", "docs/policy.md",
     re.compile(r"\[services\]\(#services\),\s*"), ""),
]

COPIED = ["README.md", "docs", "launcher/supervisor/weaken.c", "include/admission.h",
          "policy/parse.c"]


def self_test(top, out):
    missed = []
    for what, where, pat, new in DRIFTS:
        tmp = tempfile.mkdtemp(prefix="paddock-docs-drift-")
        try:
            for rel in COPIED:
                src, dst = os.path.join(top, rel), os.path.join(tmp, rel)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                (shutil.copytree if os.path.isdir(src) else shutil.copy)(src, dst)
            o = dict(out)
            text = o[where] if where in o else read(tmp, where)
            bad = pat.sub(new, text, count=1)
            if bad == text:
                missed.append("%s: could not be planted" % what)
                continue
            if where in o:
                o[where] = bad
            else:
                with open(os.path.join(tmp, where), "w", encoding="utf-8") as f:
                    f.write(bad)
            if not check(tmp, o):
                missed.append("%s: not caught" % what)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return missed


def main(argv):
    st = len(argv) == 3 and argv[1] == "--self-test"
    if not (len(argv) == 2 or st):
        print("usage: check_docs.py [--self-test] TOP", file=sys.stderr)
        return 2
    top = os.path.abspath(argv[-1])
    try:
        out = outputs(top)
        errs = check(top, out)
        if st and not errs:
            errs = ["self-test: " + m for m in self_test(top, out)]
    except (OSError, subprocess.SubprocessError) as e:
        print("check_docs: %s" % e, file=sys.stderr)
        return 2
    for e in errs:
        print("check_docs: %s" % e, file=sys.stderr)
    if errs:
        return 1
    print("check_docs: syscall count, %d knobs, verbs, decisions, policy keys and eval cases "
          "agree%s" % (
        len(re.findall(r'^\s*(?:\[\d+\]\s*=\s*)?\{"([a-z-]+)",', read(top, "launcher/supervisor/weaken.c"), re.M)),
        "; %d planted drifts caught" % len(DRIFTS) if st else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
