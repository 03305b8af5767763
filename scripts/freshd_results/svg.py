"""A line plot as a standalone SVG (standard library only): axes, ticks,
an optional log-x axis, one polyline with markers per series, a legend and
a title; 700 px wide, system fonts, no scripts.

line_plot(title, xlabel, ylabel, series, logx=None) -> str, where series is
[(name, [(x, y), ...]), ...]. Points are drawn in increasing x. With logx
None the x axis is logarithmic when the x values span a decade or more.
"""

import math
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 700, 440
LEFT, RIGHT, TOP, BOTTOM = 70, 190, 40, 60  # margins; the legend sits right
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
          "#e377c2", "#7f7f7f", "#17becf", "#bcbd22"]
MARKERS = ["circle", "square", "diamond", "triangle"]


def plot_area():
    """(x0, y0, x1, y1) of the plot area in pixels (y0 top)."""
    return LEFT, TOP, WIDTH - RIGHT, HEIGHT - BOTTOM


def nice_ticks(lo, hi, count=5):
    """Round tick values covering [lo, hi]."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw))
    first = math.ceil(lo / step - 1e-9) * step
    ticks = []
    t = first
    while t <= hi + 1e-9 * step:
        ticks.append(round(t, 12))
        t += step
    return ticks


def label(v):
    return ("%.6g" % v) if abs(v) >= 1e-3 or v == 0 else ("%.1e" % v)


def marker(kind, x, y, color):
    if kind == "circle":
        return '<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>' % (x, y, color)
    if kind == "square":
        return '<rect x="%.1f" y="%.1f" width="7" height="7" fill="%s"/>' % (
            x - 3.5, y - 3.5, color)
    if kind == "diamond":
        pts = [(x, y - 4.5), (x + 4.5, y), (x, y + 4.5), (x - 4.5, y)]
    else:
        pts = [(x, y - 4.5), (x + 4.5, y + 3.5), (x - 4.5, y + 3.5)]
    return '<polygon points="%s" fill="%s"/>' % (
        " ".join("%.1f,%.1f" % p for p in pts), color)


def line_plot(title, xlabel, ylabel, series, logx=None, xticklabels=None):
    """The SVG text; xticklabels ({x: text}) names ticks (e.g. '1/365')."""
    series = [(n, sorted(p)) for n, p in series if p]
    xs = [x for _, p in series for x, _ in p]
    ys = [y for _, p in series for _, y in p]
    if not xs:
        raise ValueError("nothing to plot")
    if logx is None:
        logx = min(xs) > 0 and max(xs) / min(xs) >= 10
    fx = math.log10 if logx else (lambda v: v)
    x_lo, x_hi = fx(min(xs)), fx(max(xs))
    pad = (x_hi - x_lo) * 0.05 or 0.5
    x_lo, x_hi = x_lo - pad, x_hi + pad
    y_lo, y_hi = min(ys), max(ys)
    ypad = (y_hi - y_lo) * 0.08 or abs(y_hi) * 0.05 or 0.5
    yt = nice_ticks(y_lo - ypad, y_hi + ypad)
    y_lo, y_hi = min(yt[0], y_lo - ypad), max(yt[-1], y_hi + ypad)
    ax0, ay0, ax1, ay1 = plot_area()

    def px(x):
        return ax0 + (fx(x) - x_lo) / (x_hi - x_lo) * (ax1 - ax0)

    def py(y):
        return ay1 - (y - y_lo) / (y_hi - y_lo) * (ay1 - ay0)

    # The legend's longest name sets the width (~7 px a character at 12 px):
    # "learned rates, last 18 months" must not run off the right edge.
    width = max(WIDTH, ax1 + 42 + 7 * max(len(n) for n, _ in series) + 8)
    out = [
        '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
        'viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">'
        % (width, HEIGHT, width, HEIGHT),
        '<rect width="100%" height="100%" fill="white"/>',
        '<text x="%d" y="22" text-anchor="middle" font-size="14" '
        'font-weight="bold">%s</text>' % ((ax0 + ax1) // 2, escape(title)),
        '<rect class="plot-area" x="%d" y="%d" width="%d" height="%d" '
        'fill="none" stroke="black"/>' % (ax0, ay0, ax1 - ax0, ay1 - ay0),
    ]
    for t in yt:
        if y_lo <= t <= y_hi:
            y = py(t)
            out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>'
                       % (ax0, y, ax1, y))
            out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>'
                       % (ax0 - 6, y + 4, label(t)))
    if xticklabels:
        xt = sorted(xticklabels)
    elif logx:
        xt = [10 ** e for e in range(math.floor(x_lo), math.ceil(x_hi) + 1)]
        xt = [t for t in xt if x_lo <= math.log10(t) <= x_hi] or sorted(set(xs))
    else:
        xt = [t for t in nice_ticks(x_lo, x_hi) if x_lo <= t <= x_hi]
    for t in xt:
        x = px(t)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>'
                   % (x, ay0, x, ay1))
        text = xticklabels[t] if xticklabels else label(t)
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>'
                   % (x, ay1 + 16, escape(text)))
    out.append('<text x="%d" y="%d" text-anchor="middle">%s%s</text>'
               % ((ax0 + ax1) // 2, HEIGHT - 18, escape(xlabel),
                  " (log scale)" if logx else ""))
    out.append('<text x="16" y="%d" text-anchor="middle" '
               'transform="rotate(-90 16 %d)">%s</text>'
               % ((ay0 + ay1) // 2, (ay0 + ay1) // 2, escape(ylabel)))
    for i, (name, pts) in enumerate(series):
        color = COLORS[i % len(COLORS)]
        kind = MARKERS[i % len(MARKERS)]
        coords = " ".join("%.1f,%.1f" % (px(x), py(y)) for x, y in pts)
        out.append('<g class="series"><title>%s</title>' % escape(name))
        out.append('<polyline points="%s" fill="none" stroke="%s" '
                   'stroke-width="2"/>' % (coords, color))
        for x, y in pts:
            out.append(marker(kind, px(x), py(y), color))
        out.append("</g>")
        ly = ay0 + 10 + 20 * i
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" '
                   'stroke-width="2"/>' % (ax1 + 12, ly, ax1 + 36, ly, color))
        out.append(marker(kind, ax1 + 24, ly, color))
        out.append('<text x="%d" y="%d">%s</text>' % (ax1 + 42, ly + 4,
                                                     escape(name)))
    out.append("</svg>")
    return "\n".join(out) + "\n"
