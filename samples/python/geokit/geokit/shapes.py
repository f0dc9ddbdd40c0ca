"""Polygons built from geokit vectors."""

from geokit.vector import Vec, ORIGIN
import geokit.vector as vector


class Polygon:
    def __init__(self, points: list) -> None:
        if len(points) < 3:
            raise ValueError("a polygon needs at least three points")
        self.points = points

    def area(self) -> float:
        total = 0.0
        for i, p in enumerate(self.points):
            q = self.points[(i + 1) % len(self.points)]
            total += p.cross(q)
        return abs(total) / 2.0

    def perimeter(self) -> float:
        total = 0.0
        for i, p in enumerate(self.points):
            q = self.points[(i + 1) % len(self.points)]
            total += q.minus(p).length()
        return total

    def centroid(self) -> Vec:
        acc = ORIGIN
        for p in self.points:
            acc = acc.plus(p)
        n = len(self.points)
        return vector.Vec(acc.x / n, acc.y / n)


def square(side: float) -> Polygon:
    return Polygon([Vec(0, 0), Vec(side, 0), Vec(side, side), Vec(0, side)])
