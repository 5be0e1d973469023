"""Facility against discrimination, as an SVG an instructor reads at a glance.

Drawn on the server from the statistics (no chart library, no script): a
point per question, labelled by its item number (the table and the key
under the chart name it), the bands the flags use shaded, so a question in
the lower or the outer bands is one to look at.

Labels never overlap one another, a point or the plot's edge: each goes to
the first free place of rings of places around its point (right, left,
above, below, then the corners, then further out, with a leader line back
to the point). The chart is small (420 units wide) so that at a phone's
390 px its 13-unit labels still show at about 11 px.
"""

from __future__ import annotations

WIDTH, HEIGHT = 420, 300
LEFT, RIGHT, TOP, BOTTOM = 40, 12, 28, 40  # margins: ticks and axis titles
RADIUS = 6
FONT = 13  # label size in chart units; ticks are 12 (instructor.css)
CHAR_WIDTH = 0.62  # a digit's advance, as a share of the font size
GAP = 2  # free space kept around a label
RINGS = 6


def _x(facility: float) -> float:
    return round(LEFT + facility * (WIDTH - LEFT - RIGHT), 1)


def _y(discrimination: float) -> float:
    plot = HEIGHT - TOP - BOTTOM
    return round(HEIGHT - BOTTOM - (discrimination + 1) / 2 * plot, 1)


def _overlap(a: tuple, b: tuple) -> float:
    """The area two boxes (x0, y0, x1, y1) share."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0


def _candidates(x: float, y: float, w: float, h: float):
    """Boxes for a w x h label around (x, y), nearest first."""
    for ring in range(RINGS):
        d = RADIUS + GAP + ring * (h + GAP)
        for dx, dy in (
            (1, 0),
            (-1, 0),
            (0, -1),
            (0, 1),
            (1, -1),
            (-1, -1),
            (1, 1),
            (-1, 1),
        ):
            cx = x + dx * (d + w / 2) if dx else x
            cy = y + dy * (d + h / 2) if dy else y
            yield ring, (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)


def place_labels(points: list[dict]) -> None:
    """Give each point a label box (lx, ly: its centre; box) none overlaps.

    Points keep their order; a label is placed in the first free spot
    inside the plot. In a crowd with no free spot left, the spot that
    overlaps least is taken (the table still names every point).
    """
    bounds = (LEFT + 1, TOP - 10, WIDTH - 1, HEIGHT - BOTTOM - 1)
    circles = [
        (
            p["x"] - RADIUS - GAP,
            p["y"] - RADIUS - GAP,
            p["x"] + RADIUS + GAP,
            p["y"] + RADIUS + GAP,
        )
        for p in points
    ]
    placed: list[tuple] = []
    for p in points:
        w = len(p["label"]) * FONT * CHAR_WIDTH + 2 * GAP
        h = FONT + GAP
        best = None
        for ring, box in _candidates(p["x"], p["y"], w, h):
            inside = (
                box[0] >= bounds[0]
                and box[1] >= bounds[1]
                and box[2] <= bounds[2]
                and box[3] <= bounds[3]
            )
            if not inside:
                continue
            cost = sum(_overlap(box, o) for o in placed + circles)
            if best is None or cost < best[0]:
                best = (cost, ring, box)
            if cost == 0:
                break
        if best is None:  # a plot too small for any place: to the right
            best = (0, 0, next(_candidates(p["x"], p["y"], w, h))[1])
        _cost, ring, box = best
        placed.append(box)
        p["box"] = tuple(round(v, 1) for v in box)
        p["lx"] = round((box[0] + box[2]) / 2, 1)
        p["ly"] = round((box[1] + box[3]) / 2, 1)
        p["leader"] = ring > 0
        if p["leader"]:  # from the circle's edge towards the label's centre
            dx, dy = p["lx"] - p["x"], p["ly"] - p["y"]
            length = max((dx * dx + dy * dy) ** 0.5, 1e-9)
            p["x1"] = round(p["x"] + dx / length * RADIUS, 1)
            p["y1"] = round(p["y"] + dy / length * RADIUS, 1)
            p["x2"] = round(min(max(p["x"], box[0]), box[2]), 1)
            p["y2"] = round(min(max(p["y"], box[1]), box[3]), 1)


def facility_chart(stats: dict) -> dict:
    """Coordinates for teaching/instructor/quiz_statistics.html's SVG.

    points: those with a facility; missing: the items not plotted (no
    responses, or worth no points), with why.
    """
    points, missing = [], []
    for slot in stats.get("slots", []):
        for q in slot["questions"]:
            item = str(q.get("item") or slot["label"])
            if q["facility"] is None:
                missing.append(
                    {
                        "item": item,
                        "title": q["title"],
                        "why": "no responses" if not q["n"] else "worth no points",
                    }
                )
                continue
            d = q["discrimination"]
            points.append(
                {
                    "x": _x(q["facility"]),
                    "y": _y(d if d is not None else 0.0),
                    "label": item,
                    "item": item,
                    "name": q["title"],
                    "title": f"{item}. {q['title']} (slot {slot['label']}): "
                    f"facility {q['facility']:.2f}, discrimination "
                    + ("undefined" if d is None else f"{d:.2f}"),
                    "flagged": bool(q["flags"]),
                    "undefined": d is None,
                }
            )
    place_labels(points)
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "right": WIDTH - RIGHT,
        "top": TOP,
        "bottom": HEIGHT - BOTTOM,
        "zero": _y(0.0),
        "mid": round((LEFT + WIDTH - RIGHT) / 2),
        # negative discrimination: below the zero line
        "band_height": round(HEIGHT - BOTTOM - _y(0.0), 1),
        "plot_width": WIDTH - LEFT - RIGHT,
        "easy": _x(0.95),
        "hard": _x(0.10),
        "x_ticks": [
            {"x": _x(v / 10), "text": f"{v / 10:.1f}"} for v in range(0, 11, 2)
        ],
        "y_ticks": [{"y": _y(v / 2), "text": f"{v / 2:g}"} for v in range(-2, 3)],
        "radius": RADIUS,
        "points": points,
        "missing": missing,
    }
