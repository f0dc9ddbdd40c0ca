"""Value objects of the shop."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Money:
    cents: int
    currency: str = "EUR"

    def add(self, other: "Money") -> "Money":
        if other.currency != self.currency:
            raise ValueError("currency mismatch")
        return Money(self.cents + other.cents, self.currency)

    def scale(self, factor: float) -> "Money":
        return Money(round(self.cents * factor), self.currency)

    def format_amount(self) -> str:
        return f"{self.cents / 100:.2f} {self.currency}"


@dataclass(frozen=True)
class Product:
    sku: str
    name: str
    unit_price: Money
    category: str = "misc"

    def price_for(self, quantity: int) -> Money:
        return self.unit_price.scale(quantity)
