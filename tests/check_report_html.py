#!/usr/bin/python3
"""Render paddock-eval's report.html in Debian's headless Chromium and check
it against the run's JSON records (docs/scenarios.md "Outputs").

  check_report_html.py DIR         DIR holds report.html and CASE.ARM.json
  check_report_html.py --self-test DIR
                                   the same, then plants drifts in copies of
                                   the page (a grade, a colour, a reason, a
                                   script, an external asset, a dropped row)
                                   and fails unless each one is caught

Checks, on the page as Chromium renders it (its DOM after layout and the
computed style of every cell, read through a wrapper page that loads the
report in an iframe; the report itself has no script):
- one matrix row per JSON record and no other; every cell's grade (its
  text and data-grade) equals the record's grade of that dimension;
- every grade has its own background colour, the same for every cell of
  that grade, and a PASS and a FAIL do not look alike;
- every grade that is not PASS has its reason, as text, in #reasons (an
  escaped reason comes back as the same characters, never as elements);
- every record link resolves to the file of that case and arm, and every
  completion-record link to an existing file;
- the subject under test (version, commit, kernel) is the records';
- self-contained: no script, no external stylesheet, image, font or frame,
  no url() in the style, no link that leaves the results directory but
  the completion records'.
Chromium runs with no network (its own network namespace: unshare -n, or
-rn when not root), a throwaway profile, and a time limit.
Exit: 0 ok, 1 a check failed, 2 usage, 77 Chromium is not installed.
"""
import html
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

DIMS = ("enforcement", "control", "evidence")

WRAPPER = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<iframe id="f" src="%s" style="width:1600px;height:1200px"></iframe>
<pre id="out">not loaded</pre>
<script>
document.getElementById("f").addEventListener("load", function () {
  var d = this.contentDocument, w = this.contentWindow, o = {rows: [], reasons: [], links: []};
  if (!d) { document.getElementById("out").textContent = "no access"; return; }
  d.querySelectorAll("#matrix tr[data-case]").forEach(function (tr) {
    var cells = [];
    tr.querySelectorAll("td[data-dim]").forEach(function (td) {
      cells.push({dim: td.dataset.dim, grade: td.dataset.grade, text: td.textContent,
                  bg: w.getComputedStyle(td).backgroundColor});
    });
    o.rows.push({"case": tr.dataset.case, arm: tr.dataset.arm, cells: cells});
  });
  d.querySelectorAll("#reasons tr[data-case]").forEach(function (tr) {
    var td = tr.querySelectorAll("td");
    o.reasons.push({"case": tr.dataset.case, arm: tr.dataset.arm, dim: tr.dataset.dim,
                    grade: td[3].textContent, reason: td[4].textContent,
                    scope: td[5].textContent, elements: td[4].children.length});
  });
  d.querySelectorAll("a[href]").forEach(function (a) {
    o.links.push({cls: a.className, href: a.getAttribute("href"),
                  row: a.closest("tr") ? [a.closest("tr").dataset.case,
                                          a.closest("tr").dataset.arm] : null});
  });
  o.subject = {};
  d.querySelectorAll("#subject tr").forEach(function (tr) {
    o.subject[tr.querySelector("th").textContent] = tr.querySelector("td").textContent;
  });
  o.scripts = d.querySelectorAll("script").length;
  o.external = d.querySelectorAll("link,img,iframe,frame,object,embed,video,audio,source").length;
  document.getElementById("out").textContent = JSON.stringify(o);
});
</script></body></html>
"""


def chromium():
    for name in ("chromium", "chromium-browser"):
        p = shutil.which(name)
        if p:
            return p
    return None


def render(browser, page):
    """The report as Chromium rendered it: the wrapper's JSON."""
    tmp = tempfile.mkdtemp(prefix="paddock-html-")
    try:
        wrapper = os.path.join(tmp, "wrapper.html")
        with open(wrapper, "w") as f:
            f.write(WRAPPER % html.escape("file://" + urllib.parse.quote(page)))
        net = ["unshare", "-n"] if os.geteuid() == 0 else ["unshare", "-r", "-n"]
        cmd = net + [browser, "--headless", "--no-sandbox", "--disable-gpu",
                     "--allow-file-access-from-files", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--user-data-dir=" + os.path.join(tmp, "profile"),
                     "--virtual-time-budget=5000", "--dump-dom", "file://" + wrapper]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120,
                           env=dict(os.environ, HOME=tmp))
        m = re.search(r'<pre id="out">(.*?)</pre>', p.stdout.decode("utf-8", "replace"), re.S)
        if p.returncode != 0 or not m:
            raise RuntimeError("chromium did not render %s (exit %d): %s" % (
                page, p.returncode, p.stderr.decode("utf-8", "replace")[-400:]))
        text = html.unescape(m.group(1))
        if not text.startswith("{"):
            raise RuntimeError("chromium rendered %s but the wrapper read: %s" % (page, text))
        return json.loads(text)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def record_name(case, arm):
    return "%s.%s.json" % (case, arm.replace(":", "_"))


def load_records(d):
    recs = {}
    for n in sorted(os.listdir(d)):
        if not n.endswith(".json"):
            continue
        with open(os.path.join(d, n)) as f:
            r = json.load(f)
        if r.get("record") == "paddock-eval/1":
            recs[(r["case"], r["arm"])] = (n, r)
    return recs


class Static(html.parser.HTMLParser):
    """What the raw page asks a browser to fetch."""

    def __init__(self):
        super().__init__()
        self.bad = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "link", "img", "iframe", "frame", "object", "embed", "video",
                   "audio", "source", "base"):
            self.bad.append("<%s>" % tag)
        for k in ("src", "srcset", "background", "poster", "data", "action", "formaction"):
            if k in a:
                self.bad.append("%s=%r on <%s>" % (k, a[k], tag))
        if "style" in a and "url(" in a["style"]:
            self.bad.append("url() in a style attribute")
        h = a.get("href")
        if h is not None and tag == "a":
            u = urllib.parse.urlparse(h)
            if u.scheme not in ("", "file") or u.netloc:
                self.bad.append("a link that leaves the machine: %s" % h)


def check(d, browser):
    errs = []
    page = os.path.join(os.path.abspath(d), "report.html")
    with open(page, encoding="utf-8") as f:
        raw = f.read()
    st = Static()
    st.feed(raw)
    errs += ["not self-contained: " + b for b in st.bad]
    for m in re.finditer(r"<style>(.*?)</style>", raw, re.S):
        if "url(" in m.group(1) or "@import" in m.group(1):
            errs.append("not self-contained: url() or @import in the style")
    recs = load_records(d)
    if not recs:
        return ["no JSON records in %s" % d]
    o = render(browser, page)
    if o["scripts"] or o["external"]:
        errs.append("rendered page has %d script(s) and %d external element(s)" % (
            o["scripts"], o["external"]))
    rows = {(r["case"], r["arm"]): r for r in o["rows"]}
    if len(rows) != len(o["rows"]):
        errs.append("a case and arm has more than one matrix row")
    for k in sorted(set(recs) - set(rows)):
        errs.append("record %s %s has no matrix row" % k)
    for k in sorted(set(rows) - set(recs)):
        errs.append("matrix row %s %s has no record" % k)
    colour = {}
    for k in sorted(set(recs) & set(rows)):
        g = recs[k][1]["grades"]
        cells = {c["dim"]: c for c in rows[k]["cells"]}
        if sorted(cells) != sorted(DIMS):
            errs.append("%s %s: matrix dimensions %s" % (k[0], k[1], sorted(cells)))
            continue
        for dim in DIMS:
            c, want = cells[dim], g[dim]["grade"]
            if c["grade"] != want or not c["text"].startswith(want):
                errs.append("%s %s %s: page says %r (%r), record says %s" % (
                    k[0], k[1], dim, c["text"], c["grade"], want))
            colour.setdefault(want, set()).add(c["bg"])
    for grade, bgs in colour.items():
        if len(bgs) != 1:
            errs.append("grade %s has %d colours: %s" % (grade, len(bgs), sorted(bgs)))
        elif list(bgs)[0] in ("rgba(0, 0, 0, 0)", "transparent"):
            errs.append("grade %s has no colour" % grade)
    seen = {}
    for grade, bgs in colour.items():
        for bg in bgs:
            if bg in seen and seen[bg] != grade:
                errs.append("grades %s and %s look alike (%s)" % (seen[bg], grade, bg))
            seen[bg] = grade
    reasons = {(r["case"], r["arm"], r["dim"]): r for r in o["reasons"]}
    for k, (_, r) in sorted(recs.items()):
        for dim in DIMS:
            v = r["grades"][dim]
            if v["grade"] == "PASS":
                continue
            got = reasons.get((k[0], k[1], dim))
            if not got:
                errs.append("%s %s %s: %s without its reason on the page" % (
                    k[0], k[1], dim, v["grade"]))
                continue
            # The page's text may be cut where XML cannot carry a control
            # character ('?'); the record keeps it.
            want = re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", "?", v["reason"])
            if got["reason"] != want or got["grade"] != v["grade"] or got["elements"]:
                errs.append("%s %s %s: reason on the page %r, record %r" % (
                    k[0], k[1], dim, got["reason"], v["reason"]))
            if got["scope"] != v.get("scope", ""):
                errs.append("%s %s %s: scope %r, record %r" % (
                    k[0], k[1], dim, got["scope"], v.get("scope", "")))
        if r.get("alarm") and (k[0], k[1], "alarm") not in reasons:
            errs.append("%s %s: its alarm is not on the page" % k)
    linked = set()
    for a in o["links"]:
        path = urllib.parse.unquote(urllib.parse.urlparse(a["href"]).path)
        full = path if path.startswith("/") else os.path.join(d, path)
        if not os.path.isfile(full):
            errs.append("link %s points at nothing" % a["href"])
        if a["cls"] == "record":
            if not a["row"] or path != record_name(*a["row"]):
                errs.append("record link %s in the row of %s" % (a["href"], a["row"]))
            linked.add(tuple(a["row"] or ()))
    for k in sorted(set(recs) - linked):
        errs.append("%s %s: no link to its record" % k)
    any_rec = next(iter(recs.values()))[1]["subject_under_test"]
    for label, want in (("paddock version", any_rec["paddock"]["version"]),
                        ("paddock commit", any_rec["paddock"]["commit"]),
                        ("kernel", any_rec["kernel"])):
        if o["subject"].get(label) != want:
            errs.append("subject %s: page %r, records %r" % (
                label, o["subject"].get(label), want))
    return errs


# Each drift: (what it plants, a function of the page's text).
DRIFTS = [
    ("a grade changed", lambda s: s.replace('data-grade="PASS">PASS</td>',
                                            'data-grade="FAIL">FAIL</td>', 1)),
    ("a colour changed", lambda s: s.replace("td.g-fail{background:#f4a3a3}",
                                             "td.g-fail{background:#b7e4b0}", 1)),
    ("a colour dropped", lambda s: s.replace("td.g-unknown{background:#ffe08a}", "", 1)),
    ("a reason changed", lambda s: re.sub(r'(<td class="reason">)[^<]', r"\1#", s, 1)),
    ("a reason as markup", lambda s: re.sub(r'(<td class="reason">[^<]*)&lt;b&gt;', r"\1<b>",
                                            s, 1)),
    ("a row dropped", lambda s: re.sub(r'<tr data-case="[^"]*" data-arm="enforced" '
                                       r'data-outcome=[^\n]*\n', "", s, 1)),
    ("a script", lambda s: s.replace("</body>", "<script>1</script></body>", 1)),
    ("an external asset", lambda s: s.replace(
        "</head>", '<link rel="stylesheet" href="http://192.0.2.1/x.css"></head>', 1)),
    ("a record link moved", lambda s: re.sub(r'(class="record" href=")[^"]*', r"\1report.html",
                                             s, 1)),
    ("the subject changed", lambda s: s.replace("<th>kernel</th><td>", "<th>kernel</th><td>9", 1)),
]


def self_test(d, browser):
    with open(os.path.join(d, "report.html"), encoding="utf-8") as f:
        good = f.read()
    missed = []
    for what, plant in DRIFTS:
        bad = plant(good)
        if bad == good:
            missed.append("%s: could not be planted (the page changed?)" % what)
            continue
        tmp = tempfile.mkdtemp(prefix="paddock-html-drift-")
        try:
            for n in os.listdir(d):
                src = os.path.join(d, n)
                (shutil.copytree if os.path.isdir(src) else shutil.copy)(
                    src, os.path.join(tmp, n))
            # Completion records elsewhere stay where they are.
            with open(os.path.join(tmp, "report.html"), "w", encoding="utf-8") as f:
                f.write(bad.replace(d.rstrip("/") + "/", tmp + "/"))
            if not check(tmp, browser):
                missed.append("%s: not caught" % what)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return missed


def main(argv):
    st = len(argv) == 3 and argv[1] == "--self-test"
    if not (len(argv) == 2 or st) or argv[-1].startswith("-"):
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    d = os.path.abspath(argv[-1])
    browser = chromium()
    if not browser:
        print("check_report_html: SKIPPED: no chromium (apt-get install chromium)",
              file=sys.stderr)
        return 77
    try:
        errs = check(d, browser)
        if not errs and st:
            errs = ["self-test: " + m for m in self_test(d, browser)]
    except (OSError, ValueError, RuntimeError, subprocess.TimeoutExpired) as e:
        errs = [str(e)]
    for e in errs:
        print("check_report_html: %s" % e, file=sys.stderr)
    if errs:
        return 1
    print("check_report_html: %s: the rendered matrix matches %d records%s" % (
        d, len(load_records(d)), ", and %d planted drifts were caught" % len(DRIFTS)
        if st else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
