#!/usr/bin/env python3
"""Checks that the page `cachecopy --html FILE` wrote renders in headless Chromium.

Usage: check_html.py PAGE.html [SCREENSHOT.png]

Fails (exit 1, the reason on stderr) when:
  - the page is not self-contained: a script, anything fetched (src, href, CSS url() or
    @import, a link, an image, a frame, an object), a URL other than the SVG namespace;
    or its tags do not balance; or it holds no SVG;
  - Chromium (headless, no network, a fresh profile) exits with an error, logs any console
    message (the page has no script, so any message is an error: a bad resource, a parse
    failure), or its DOM does not hold the page's SVG elements and first-screen table;
  - the screenshot (1280 x 2400 px) is missing, not a PNG, blank (under 2 % of its pixels
    not white), or does not show the plots: fewer than 150 pixels of each of the report's
    plot colours for Temporal (blue) and Auto (orange) and glibc's line (grey).

Python 3's standard library only: the PNG is decoded here (zlib and the five row filters).
"""

import html.parser
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

WIDTH, HEIGHT = 1280, 2400
# The plots' colours (report/src/plot.rs, `Style::colour`): what a drawn plot must show.
PLOT_COLOURS = {
    "Temporal blue": (31, 119, 180),
    "Auto orange": (255, 127, 14),
    "glibc grey": (110, 110, 110),
}
MIN_PLOT_PIXELS = 150
MIN_INK = 0.02
VOID = {"meta", "br", "hr", "img", "link", "input", "area", "base", "col", "embed",
        "source", "track", "wbr", "param"}
SVG_NS = "http://www.w3.org/2000/svg"


def fail(msg):
    print(f"check_html: {msg}", file=sys.stderr)
    sys.exit(1)


class Page(html.parser.HTMLParser):
    """Collects what the static checks need: forbidden things, the tag balance, the SVGs."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems = []
        self.stack = []
        self.svgs = 0
        self.glance = False
        self.in_style = False

    def check_attrs(self, tag, attrs):
        for name, value in attrs:
            value = value or ""
            if name in ("src", "href", "xlink:href", "srcset", "action", "data"):
                self.problems.append(f"<{tag} {name}={value!r}>: something to fetch")
            if "://" in value and not (name == "xmlns" and value == SVG_NS):
                self.problems.append(f"<{tag} {name}={value!r}>: a URL")
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}>: a script")
            if "url(" in value:
                self.problems.append(f"<{tag} {name}>: a CSS url()")

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "link", "iframe", "frame", "object", "embed", "img", "image",
                   "video", "audio", "base"):
            self.problems.append(f"<{tag}>: not self-contained")
        if tag == "svg":
            self.svgs += 1
        if tag == "table" and ("class", "glance") in attrs:
            self.glance = True
        self.in_style = tag == "style"
        self.check_attrs(tag, attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        if tag == "svg":
            self.svgs += 1
        self.check_attrs(tag, attrs)

    def handle_endtag(self, tag):
        self.in_style = False
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data):
        if self.in_style and ("url(" in data or "@import" in data):
            self.problems.append("<style>: fetches something")


def check_static(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    page = Page()
    page.feed(text)
    page.close()
    if page.stack:
        page.problems.append(f"left open: {page.stack}")
    if page.svgs == 0:
        page.problems.append("no <svg>: no plot")
    if not page.glance:
        page.problems.append("no first-screen table")
    if page.problems:
        fail(f"{path}: " + "; ".join(page.problems[:10]))
    return page.svgs


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    fail("no chromium on PATH (Debian: apt-get install chromium)")


def render(path, png):
    """Runs Chromium once: the screenshot, the DOM on stdout, the log on stderr."""
    profile = tempfile.mkdtemp(prefix="cachecopy-chromium-")
    try:
        cmd = [
            chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--hide-scrollbars", f"--user-data-dir={profile}",
            "--enable-logging=stderr", "--v=0", "--dump-dom",
            f"--screenshot={png}", f"--window-size={WIDTH},{HEIGHT}",
            "file://" + os.path.abspath(path),
        ]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        except subprocess.TimeoutExpired:
            fail("chromium did not finish in 180 s")
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    if r.returncode != 0:
        fail(f"chromium exited with {r.returncode}:\n{r.stderr[-3000:]}")
    console = [l for l in r.stderr.splitlines() if ":CONSOLE" in l]
    if console:
        fail("the page logged to the console:\n" + "\n".join(console[:20]))
    return r.stdout


def check_dom(dom, svgs):
    """The DOM Chromium built holds every SVG of the file and the first screen's table."""
    n = dom.count("<svg")
    if n != svgs:
        fail(f"the DOM holds {n} <svg> elements, the file {svgs}")
    if 'class="glance"' not in dom:
        fail("the DOM has no first-screen table")
    if dom.count("<polyline") < svgs:
        fail("the DOM's SVGs hold fewer lines than plots")


def read_png(path):
    """(width, height, bytes per pixel, rows of bytes) of an 8-bit RGB or RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path}: not a PNG")
    pos, idat, ihdr = 8, [], None
    while pos + 8 <= len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
    if ihdr is None:
        fail(f"{path}: no IHDR")
    w, h, depth, colour, _, _, interlace = ihdr
    if depth != 8 or colour not in (2, 6) or interlace:
        fail(f"{path}: a PNG this check does not read (depth {depth}, colour {colour})")
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        if f == 1:
            for x in range(bpp, stride):
                line[x] = (line[x] + line[x - bpp]) & 255
        elif f == 2:
            for x in range(stride):
                line[x] = (line[x] + prev[x]) & 255
        elif f == 3:
            for x in range(stride):
                left = line[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + ((left + prev[x]) >> 1)) & 255
        elif f == 4:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        elif f != 0:
            fail(f"{path}: bad PNG row filter {f}")
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def check_pixels(png):
    if not os.path.exists(png) or os.path.getsize(png) == 0:
        fail(f"no screenshot at {png}")
    w, h, bpp, rows = read_png(png)
    if (w, h) != (WIDTH, HEIGHT):
        fail(f"screenshot {w}x{h}, expected {WIDTH}x{HEIGHT}")
    ink = 0
    found = {name: 0 for name in PLOT_COLOURS}
    for line in rows:
        for x in range(0, w * bpp, bpp):
            r, g, b = line[x], line[x + 1], line[x + 2]
            if r < 245 or g < 245 or b < 245:
                ink += 1
                for name, (cr, cg, cb) in PLOT_COLOURS.items():
                    if abs(r - cr) <= 12 and abs(g - cg) <= 12 and abs(b - cb) <= 12:
                        found[name] += 1
    share = ink / (w * h)
    if share < MIN_INK:
        fail(f"the screenshot is blank: {share:.2%} of its pixels are not white")
    short = [f"{n} ({c})" for n, c in found.items() if c < MIN_PLOT_PIXELS]
    if short:
        fail(f"no plot on the screenshot: too few pixels of {', '.join(short)}")
    return share, found


def main():
    if len(sys.argv) not in (2, 3):
        fail(__doc__.split("\n\n")[1])
    page = sys.argv[1]
    png = sys.argv[2] if len(sys.argv) == 3 else os.path.splitext(page)[0] + ".png"
    if os.path.exists(png):
        os.remove(png)
    svgs = check_static(page)
    dom = render(page, png)
    check_dom(dom, svgs)
    share, found = check_pixels(png)
    colours = ", ".join(f"{n} {c}" for n, c in found.items())
    print(f"check_html: {page}: {svgs} plots, none fetching or running anything; Chromium "
          f"rendered them without a console message; screenshot {png}: {share:.0%} ink, "
          f"{colours} pixels")


if __name__ == "__main__":
    main()
