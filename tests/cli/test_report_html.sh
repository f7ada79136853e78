#!/usr/bin/env bash
# report.html in a real headless browser (Debian's chromium, installed by scripts/setup.sh --asan): the report of
# Modin & Verdier 2020, Fig. 8 at 1 % scale, under a title made of HTML's special characters, refers to nothing
# outside itself, loads without a console message, shows every panel's figure as inline SVG with drawn paths,
# its claims table with a row per claim, and its title as text (escaped, not markup). The page, its DOM and a
# screenshot stay in BUILD/report_html/. Ends with the plain "N passed, N failed" line.
# Usage: test_report_html.sh NHENS EXPERIMENTS_DIR BUILD_DIR
set -u
nhens="$1"; experiments="$2"; build="$3"
passed=0; failed=0
check() { # NAME CONDITION...
  local name="$1"; shift
  if "$@"; then passed=$((passed + 1)); else echo "FAILED: $name"; failed=$((failed + 1)); fi
}
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]; exit $?; }

browser=$(command -v chromium || command -v chromium-browser)
if [ -z "$browser" ]; then
  echo "FAILED: chromium is not installed (scripts/setup.sh --asan installs it)"; failed=1; finish
fi
art="$build/report_html"
rm -rf "$art" && mkdir -p "$art"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

source_ini="$experiments/modin2020/fig8_latitude.ini"
title='<b id="injected">bold</b> & "double" '"'single'"' <script>x</script>'
awk -v t="$title" '!done && /^title *=/ { print "title = " t; done = 1; next } { print }' "$source_ini" > "$work/e.ini"
claims=$(grep -c '^claim *=' "$source_ini")
panels=$(grep -c '^\[panel ' "$source_ini")

"$nhens" report "$work/e.ini" --out "$work/out" --scale 0.01 --threads 2 >"$art/report.out" 2>&1
check "report exits 0" [ $? -eq 0 ]
cp "$work/out/report.html" "$art/report.html" 2>/dev/null
page="$art/report.html"
check "report.html is written" [ -s "$page" ]
check "report.md links report.html" grep -q '(report.html)' "$work/out/report.md"
# self-contained: no script, no file or address outside the page (links only to its own anchors)
check "no script" bash -c "! grep -qi '<script' '$page'"
check "provenance: versions with the ABI, machine, CPU, date" bash -c "grep -q 'nhens [0-9.]* (ABI [0-9]*), SUNDIALS' '$page' &&
  grep -q '<dt>CPU</dt><dd>.' '$page' && grep -q '<dt>Machine</dt><dd>Linux' '$page' && grep -Eq 'Written \(UTC\)</dt><dd>[0-9]{4}-' '$page'"
check "no external reference" bash -c "! grep -Eqi '(src|href)=\"[^#]|url\\([^#]|@import' '$page'"

timeout 60 "$browser" --headless --disable-gpu --no-sandbox --enable-logging=stderr --v=0 \
  --dump-dom "file://$page" >"$art/dom.html" 2>"$art/browser.log"
check "the browser loads the page" [ -s "$art/dom.html" ]
check "no console message" bash -c "! grep -q ':CONSOLE' '$art/browser.log'"
timeout 60 "$browser" --headless --disable-gpu --no-sandbox --hide-scrollbars --window-size=1100,3000 \
  --screenshot="$art/screenshot.png" "file://$page" >/dev/null 2>&1
check "a screenshot is taken" [ "$(stat -c %s "$art/screenshot.png" 2>/dev/null || echo 0)" -gt 20000 ]

# the DOM as the browser built it: every figure an <svg> with drawn paths, the claims table, the title as text
python3 - "$art/dom.html" "$panels" "$claims" "$title" <<'EOF'
import sys
from html.parser import HTMLParser
dom, panels, claims, title = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.svgs, self.claim_rows, self.h1, self.injected = [], [], 0, "", 0
    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "svg" and "svg" not in self.stack:
            self.svgs.append(0)
        if tag == "path" and "svg" in self.stack:
            self.svgs[-1] += 1
        if tag == "tr" and self.in_claims_body():
            self.claim_rows += 1
        if attrs.get("id") == "injected" or (tag == "script"):
            self.injected += 1
        if tag not in ("path", "br", "meta", "use", "rect", "circle", "line", "polygon", "image"):
            self.stack.append((tag, attrs.get("class")) if tag == "table" else tag)
    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i] == tag or (tag == "table" and isinstance(self.stack[i], tuple)):
                del self.stack[i:]
                break
    def handle_data(self, data):
        if self.stack and self.stack[-1] == "h1":
            self.h1 += data
    def in_claims_body(self):
        return ("table", "claims") in self.stack and "tbody" in self.stack

p = Page()
p.feed(open(dom, encoding="utf-8").read())
problems = []
if len(p.svgs) != panels:
    problems.append(f"{len(p.svgs)} <svg> figures, expected {panels}")
if any(n < 10 for n in p.svgs):
    problems.append(f"a figure with almost nothing drawn: paths per <svg> {p.svgs}")
if p.claim_rows != claims:
    problems.append(f"{p.claim_rows} rows in the claims table, expected {claims}")
if p.h1.strip() != title:
    problems.append(f"the title reads {p.h1.strip()!r}, expected {title!r}")
if p.injected:
    problems.append("the title's markup became elements: it is not escaped")
for line in problems:
    print("FAILED:", line)
print(f"DOM: {len(p.svgs)} figures (paths {p.svgs}), {p.claim_rows} claim rows")
sys.exit(1 if problems else 0)
EOF
check "figures, claims table and title in the DOM" [ $? -eq 0 ]
finish
