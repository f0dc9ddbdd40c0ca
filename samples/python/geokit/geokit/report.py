"""Describe shapes as text."""

from geokit import shapes
from geokit.shapes import square
from geokit.vector import *


def describe(poly) -> str:
    c = poly.centroid()
    lines = [
        f"points: {len(poly.points)}",
        f"area: {poly.area():.3f}",
        f"perimeter: {poly.perimeter():.3f}",
    ]
    lines.append(f"centroid: ({c.x:.2f}, {c.y:.2f})")
    return "\n".join(lines)


def unit_report() -> str:
    unit = square(1.0)
    tri = shapes.Polygon([Vec(0, 0), Vec(2, 0), Vec(0, 2)])
    far = ORIGIN.plus(Vec(3, 4)).length()
    return describe(unit) + "\n" + describe(tri) + f"\nfar: {far}"
