"""2-D vectors."""

import math


class Vec:
    def __init__(self, x: float, y: float) -> None:
        self.x = x
        self.y = y

    def plus(self, other: "Vec") -> "Vec":
        return Vec(self.x + other.x, self.y + other.y)

    def minus(self, other: "Vec") -> "Vec":
        return Vec(self.x - other.x, self.y - other.y)

    def dot(self, other: "Vec") -> float:
        return self.x * other.x + self.y * other.y

    def cross(self, other: "Vec") -> float:
        return self.x * other.y - self.y * other.x

    def length(self) -> float:
        return math.hypot(self.x, self.y)


ORIGIN = Vec(0.0, 0.0)
