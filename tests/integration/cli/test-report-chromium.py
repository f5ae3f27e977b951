#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""guestbench report, opened in a real headless Chromium.

The HTML must render without a console error, show one bar per value in the
DOM Chromium built (not just in our text), and produce a non-trivial
screenshot. No network: the page is a file:// URL and fetches nothing.
Skips (TAP "1..0 # SKIP") when /usr/bin/chromium is absent; scripts/deps
installs it. Set GB_REPORT_KEEP=DIR to keep the HTML and screenshots.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

CHROMIUM = "/usr/bin/chromium"
CLI = os.environ.get("GB_CLI")
DATA = os.path.join(os.environ.get("GB_TEST_DATA", ""), "results")

CASES = [
    # name, extra args, files
    ("field-report-aes", [], ["kvm64.json", "host.json"]),
    ("runs-noise", [], ["runs-a.json", "runs-b.json"]),
    ("disk-mismatch", [], ["disk-virtio.json", "disk-ide.json"]),
    ("net-by-guest", ["--by", "guest"], ["fleet-net.json"]),
    ("hostile", [], ["hostile.json", "kvm64.json"]),
]

n_test = 0
failed = False


def ok(cond, what):
    global n_test, failed
    n_test += 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (n_test, what), flush=True)
    if not cond:
        failed = True
    return cond


def run_chromium(args, tmp, timeout=90):
    """Runs chromium in its own process group and always kills the whole group."""
    profile = tempfile.mkdtemp(prefix="profile-", dir=tmp)
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--user-data-dir=" + profile] + args
    env = dict(os.environ, HOME=tmp)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        out, err = b"", b"timed out"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def expected_bars(args, files):
    """Values present in the comparison, from compare --format json."""
    res = subprocess.run([CLI, "compare", "--format", "json"] + args + files, cwd=DATA,
                         capture_output=True, timeout=60)
    if res.returncode != 0:
        return None
    doc = json.loads(res.stdout)
    return sum(1 for row in doc["rows"] for v in row["values"] if v is not None)


# Run in the page (a copy of the report with this script added): every legend item and axis
# note must lie inside its chart, as Chromium lays the text out.
FIT_SCRIPT = """<script>
window.addEventListener('load', function () {
  var bad = [], n = 0;
  document.querySelectorAll('svg').forEach(function (svg) {
    var w = svg.viewBox.baseVal.width;
    svg.querySelectorAll('text.legend, text.axisnote').forEach(function (t) {
      var b = t.getBBox();
      n++;
      if (b.x < 0 || b.x + b.width > w + 0.5)
        bad.push(t.textContent + ' [' + b.x.toFixed(1) + '+' + b.width.toFixed(1) + ' > ' + w + ']');
    });
  });
  var pre = document.createElement('pre');
  pre.id = 'gbfit';
  pre.textContent = 'checked ' + n + '; outside: ' + JSON.stringify(bad);
  document.body.appendChild(pre);
});
</script>"""


def check_fit(name, html, tmp):
    """Loads html with FIT_SCRIPT in Chromium; every legend and axis note fits its chart."""
    page = open(html, encoding="utf-8").read().replace("</body>", FIT_SCRIPT + "</body>")
    probe = os.path.join(tmp, name + "-fit.html")
    with open(probe, "w", encoding="utf-8") as f:
        f.write(page)
    rc, dom, err = run_chromium(["--dump-dom", "file://" + probe], tmp)
    m = re.search(r'<pre id="gbfit">checked (\d+); outside: (.*?)</pre>', dom, re.S)
    ok(rc == 0 and m is not None and int(m.group(1)) > 0 and m.group(2) == "[]",
       "%s: legends and axis notes lie inside their charts (%s)"
       % (name, m.group(0) if m else "no result"))


def main():
    if not os.access(CHROMIUM, os.X_OK):
        print("1..0 # SKIP %s not installed (scripts/deps installs chromium)" % CHROMIUM)
        return 0
    if not CLI:
        print("1..0 # SKIP GB_CLI not set")
        return 0
    keep = os.environ.get("GB_REPORT_KEEP")
    tmp = tempfile.mkdtemp(prefix="gb-report-")
    try:
        for name, args, files in CASES:
            html = os.path.join(tmp, name + ".html")
            res = subprocess.run([CLI, "--format", "html", "report"] + args + files +
                                 ["-o", html], cwd=DATA, capture_output=True, timeout=60)
            if not ok(res.returncode == 0 and os.path.getsize(html) > 0,
                      "%s: report written (rc %d, %s)" % (name, res.returncode,
                                                          res.stderr.decode().strip())):
                continue
            want = expected_bars(args, files)
            url = "file://" + html

            rc, dom, err = run_chromium(["--dump-dom", url], tmp)
            got = len(re.findall(r'<rect class="bar"', dom))
            ok(rc == 0 and want is not None and got == want and want > 0,
               "%s: the DOM has one bar per value (%d bars, expected %s)" % (name, got, want))
            low = dom.lower()
            ok("<script" not in low and "<img" not in low and "<i>m</i>" not in low,
               "%s: nothing from the documents became markup" % name)

            shot = os.path.join(tmp, name + ".png")
            rc, out, err = run_chromium(["--enable-logging=stderr", "--v=0",
                                         "--screenshot=" + shot, "--window-size=1200,2000",
                                         url], tmp)
            console = [l for l in err.splitlines() if "Uncaught" in l or "ERROR:CONSOLE" in l
                       or ":CONSOLE(" in l]
            ok(not console, "%s: no console errors %s" % (name, console[:3]))
            size = os.path.getsize(shot) if os.path.exists(shot) else 0
            ok(size > 20000, "%s: screenshot is non-trivial (%d bytes)" % (name, size))
            if keep:
                os.makedirs(keep, exist_ok=True)
                for f in (html, shot):
                    if os.path.exists(f):
                        shutil.copy(f, keep)
            if name in ("disk-mismatch", "net-by-guest"):
                check_fit(name, html, tmp)

        # run ids as labels (what 'report RUN RUN' shows): whole in the legend, inside the chart
        runs = os.path.join(tmp, "runs")
        os.makedirs(runs)
        labels = ["2026-12-03T23-11-19Z-bench-aes", "2026-12-03T23-11-19Z-bench-aes-2",
                  "2026-12-03T23-11-19Z-bench-aes-3-a-longer-label"]
        for label, src in zip(labels, ["kvm64.json", "host.json", "host.json"]):
            shutil.copy(os.path.join(DATA, src), os.path.join(runs, label + ".json"))
        html = os.path.join(tmp, "run-labels.html")
        res = subprocess.run([CLI, "report"] + [l + ".json" for l in labels] + ["-o", html],
                             cwd=runs, capture_output=True, timeout=60)
        if ok(res.returncode == 0, "run-labels: report written (%s)" % res.stderr.decode()):
            page = open(html, encoding="utf-8").read()
            for label in labels:
                ok(re.search(r'<text class="legend"[^>]*>%s(\.json)?</text>' % re.escape(label),
                             page),
                   "run-labels: the legend shows %s whole" % label)
            check_fit("run-labels", html, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("1..%d" % n_test)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
