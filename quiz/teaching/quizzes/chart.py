"""Facility against discrimination, as an SVG an instructor reads at a glance.

Drawn on the server from the statistics (no chart library, no script): a
point per question, the bands the flags use shaded, so a question in the
lower or the outer bands is one to look at.
"""

from __future__ import annotations

WIDTH, HEIGHT, PAD = 560, 320, 48


def _x(facility: float) -> float:
    return round(PAD + facility * (WIDTH - 2 * PAD), 1)


def _y(discrimination: float) -> float:
    return round(HEIGHT - PAD - (discrimination + 1) / 2 * (HEIGHT - 2 * PAD), 1)


def facility_chart(stats: dict) -> dict:
    """Coordinates for templates/instructor/quiz_statistics.html's SVG."""
    points = []
    for slot in stats.get("slots", []):
        for q in slot["questions"]:
            if q["facility"] is None:
                continue
            d = q["discrimination"]
            points.append(
                {
                    "x": _x(q["facility"]),
                    "y": _y(d if d is not None else 0.0),
                    "label": slot["label"],
                    "title": f"Slot {slot['label']}: {q['title']}: facility "
                    f"{q['facility']:.2f}, discrimination "
                    + ("undefined" if d is None else f"{d:.2f}"),
                    "flagged": bool(q["flags"]),
                    "undefined": d is None,
                }
            )
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": PAD,
        "right": WIDTH - PAD,
        "top": PAD,
        "bottom": HEIGHT - PAD,
        "zero": _y(0.0),
        "mid": WIDTH // 2,
        # negative discrimination: below the zero line
        "band_height": round(HEIGHT - PAD - _y(0.0), 1),
        "plot_width": WIDTH - 2 * PAD,
        "easy": _x(0.95),
        "hard": _x(0.10),
        "x_ticks": [
            {"x": _x(v / 10), "text": f"{v / 10:.1f}"} for v in range(0, 11, 2)
        ],
        "y_ticks": [{"y": _y(v / 2), "text": f"{v / 2:g}"} for v in range(-2, 3)],
        "points": points,
    }
