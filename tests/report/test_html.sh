#!/bin/bash
# SPDX-License-Identifier: MIT
# cacheshim report --format html: one self-contained page (no network, no
# external scripts, styles or fonts), rendered by headless Chromium: its
# scripts ran (the DOM has the tables and the SVG charts), and a
# screenshot is a picture, not a blank page.  Skipped (77) only when
# chromium is not installed and cannot be installed.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

find_chromium()
{
	local c

	for c in chromium chromium-browser /usr/bin/chromium; do
		if command -v "$c" >/dev/null 2>&1; then
			command -v "$c"
			return 0
		fi
	done
	return 1
}

CHROMIUM=$(find_chromium)
if [ -z "$CHROMIUM" ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "chromium not found: trying apt-get install chromium" >&2
	DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -q chromium \
		>"$T/apt.log" 2>&1 ||
		{ timeout 300 apt-get update -q >>"$T/apt.log" 2>&1 &&
			DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -q \
				chromium >>"$T/apt.log" 2>&1; }
	CHROMIUM=$(find_chromium)
fi
if [ -z "$CHROMIUM" ]; then
	echo "SKIP: chromium is not installed and could not be installed"
	exit 77
fi

# chromium ARGS...: headless, no network services, a fresh profile.
chromium()
{
	timeout 180 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--disable-background-networking --disable-component-update --disable-sync \
		--no-first-run --user-data-dir="$(mktemp -d "$T/profile.XXXXXX")" "$@" \
		2>>"$T/chromium.err"
}

# Functions with calls, per event: inner outer grow long lookup, 4 size
# classes of touch, the escape target: 10.  Series lines: 8 (see
# test_series.sh).  One keyed target: a class chart per event.
FILES=("$T/nested.rpt" "$T/series.rpt" "$T/classes.rpt" "$T/escape.rpt")
run_cmd "$CS_CMD" report --format html "${FILES[@]}"
expect_status $LINENO 0
expect_no_err $LINENO
cp "$T/out" "$T/report.html"

# Self-contained: nothing to fetch.  The only URL is the SVG namespace.
grep -Eo '(https?|ftp|file)://[^"'"'"' )]*' "$T/report.html" | sort -u >"$T/urls"
if grep -v '^http://www.w3.org/2000/svg$' "$T/urls" >/dev/null; then
	fail $LINENO "the page refers to URLs"
	show "$T/urls"
fi
grep -Eiq '<link|<img|<iframe|@import|@font-face|url\(|src=' "$T/report.html" &&
	fail $LINENO "the page loads something"
expect_line $LINENO "$T/report.html" '<meta http-equiv="Content-Security-Policy" content="default-src '"'none'"'; style-src '"'unsafe-inline'"'; script-src '"'unsafe-inline'"'; img-src data:">'
# A target named "</script><b>..." must not end the data early.
n=$(grep -o '</script>' "$T/report.html" | wc -l)
[ "$n" -eq 2 ] || fail $LINENO "$n </script> in the page, want 2"

# The DOM after the scripts ran.
chromium --dump-dom "file://$T/report.html" >"$T/dom.html" || {
	fail $LINENO "chromium --dump-dom failed"
	tail -20 "$T/chromium.err" >&2
}
# count PATTERN: occurrences in the DOM.
count()
{
	grep -o -- "$1" "$T/dom.html" | wc -l
}
expect_count()
{
	local n

	n=$(count "$2")
	[ "$n" -eq "$3" ] || fail "$1" "$n times '$2' in the DOM, want $3"
}
expect_count $LINENO 'data-rendered="ok"' 1
expect_count $LINENO 'id="cs-error"' 0
expect_count $LINENO '<svg class="cs-hist"' 20
expect_count $LINENO '<svg class="cs-callsites"' 20
expect_count $LINENO '<svg class="cs-class"' 2
expect_count $LINENO '<svg class="cs-series"' 8
expect_count $LINENO '<polyline class="l-mean"' 8
expect_count $LINENO '<table class="cs" id="cs-fn-[01]"' 2
expect_count $LINENO '<table class="cs" id="cs-cs-[01]"' 2
for id in cs-summary cs-tables cs-functions cs-classes cs-series; do
	expect_count $LINENO "id=\"$id\"" 1
done
# Rows: 10 functions per event table; the nested ones add incl and self.
tr '<' '\n' <"$T/dom.html" | awk '/^table class="cs" id="cs-fn-0"/ { t = 1 }
	t && /^tr>/ { n++ } t && /^\/table>/ { exit } END { print n }' >"$T/rows"
[ "$(cat "$T/rows")" = 11 ] || fail $LINENO "table cs-fn-0 has $(cat "$T/rows") rows, want 11"
expect_count $LINENO '<th>self</th>' 2
# Function tables 2, call-site tables 2 (touch[arg1:2]: 2 call sites).
expect_count $LINENO '<td class="t" title="outer">outer</td>' 4
expect_count $LINENO '<td class="t" title="touch\[arg1:2\]">touch\[arg1:2\]</td>' 6
# The markup in the name is text, not elements: in 4 table cells and the
# title of its charts.
expect_count $LINENO '>&lt;/script&gt;&lt;b&gt;x"y\\<' 5
expect_count $LINENO '<b>x' 0
# Values: outer's inclusive and exclusive means; a series title.
expect_count $LINENO '<td>702</td><td>702</td><td>442</td>' 1
expect_count $LINENO 'lookup, tsc (all threads, 4 calls per window)' 1
expect_count $LINENO '>2-3</text>' 2
expect_count $LINENO 'per call (bucket lower bound)' 20

# With -s the headings have the overhead off and the bars are the buckets
# as measured: their axes say so (review helper 72).
run_cmd "$CS_CMD" report --format html -s "${FILES[@]}"
expect_status $LINENO 0
cp "$T/out" "$T/report_s.html"
chromium --dump-dom "file://$T/report_s.html" >"$T/dom.html" || fail $LINENO "chromium -s"
expect_count $LINENO 'data-rendered="ok"' 1
expect_count $LINENO 'per call (bucket lower bound, as measured)' 20

# A picture: a PNG of the requested size, mostly not blank.
chromium --screenshot="$T/shot.png" --window-size=1200,2000 "file://$T/report.html" >/dev/null || {
	fail $LINENO "chromium --screenshot failed"
	tail -20 "$T/chromium.err" >&2
}
if [ ! -s "$T/shot.png" ]; then
	fail $LINENO "no screenshot"
else
	size=$(stat -c %s "$T/shot.png")
	[ "$size" -gt 30000 ] || fail $LINENO "screenshot of $size bytes: blank?"
	# Decode the PNG (8-bit RGB/RGBA, non-interlaced, as chromium writes)
	# and count pixels that are not white: text, bars and lines.
	if command -v python3 >/dev/null 2>&1; then
		python3 - "$T/shot.png" <<'END' || fail $LINENO "screenshot looks wrong"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        ihdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype, _, _, interlace = ihdr
print("screenshot %dx%d, colour type %d" % (w, h, ctype))
assert (w, h) == (1200, 2000), "size %dx%d" % (w, h)
assert depth == 8 and ctype in (2, 6) and interlace == 0, "unexpected PNG format"
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
ink = colour = 0
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1:
            line[i] = (line[i] + a) & 255
        elif f == 2:
            line[i] = (line[i] + b) & 255
        elif f == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    if y % 4:
        continue
    for x in range(0, stride, bpp * 4):
        r, g, bl = line[x], line[x + 1], line[x + 2]
        if r < 240 or g < 240 or bl < 240:
            ink += 1
        if bl > r + 60:  # the blue of the histogram bars
            colour += 1
total = (h // 4) * (w // 4)
print("not white: %.1f%%, bar blue: %.1f%%" % (100.0 * ink / total, 100.0 * colour / total))
sys.exit(0 if ink > total * 0.03 and colour > total * 0.002 else 1)
END
	fi
fi

finish
