"""Discount rules applied to cart lines."""

from __future__ import annotations

from shoplib import models
from shoplib.models import Money

BULK_THRESHOLD = 10
BULK_FACTOR = 0.9


class PriceBook:
    def __init__(self) -> None:
        self.category_discounts: dict[str, float] = {}

    def set_category_discount(self, category: str, factor: float) -> None:
        if not 0 < factor <= 1:
            raise ValueError("factor must be in (0, 1]")
        self.category_discounts[category] = factor

    def line_total(self, product: models.Product, quantity: int) -> Money:
        total = product.price_for(quantity)
        factor = self.category_discounts.get(product.category, 1.0)
        if quantity >= BULK_THRESHOLD:
            factor *= BULK_FACTOR
        return total.scale(factor)


def zero(currency: str = "EUR") -> Money:
    return Money(0, currency)
