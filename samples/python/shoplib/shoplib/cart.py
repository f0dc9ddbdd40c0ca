"""A shopping cart that prices its lines through a PriceBook."""

from __future__ import annotations

from collections import OrderedDict

from .models import Money, Product
from .pricing import PriceBook, zero
from . import pricing


class Cart:
    def __init__(self, book: PriceBook | None = None) -> None:
        self.book = book or PriceBook()
        self.lines: "OrderedDict[str, tuple[Product, int]]" = OrderedDict()

    def add(self, product: Product, quantity: int = 1) -> None:
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        old = self.lines.get(product.sku, (product, 0))[1]
        self.lines[product.sku] = (product, old + quantity)

    def remove(self, sku: str) -> None:
        self.lines.pop(sku, None)

    def total(self) -> Money:
        result = zero()
        for product, quantity in self.lines.values():
            line = self.book.line_total(product, quantity)
            result = result.add(line)
        return result

    def summary(self) -> list[str]:
        rows = []
        for product, quantity in self.lines.values():
            amount = self.book.line_total(product, quantity).format_amount()
            rows.append(f"{quantity} x {product.name}: {amount}")
        if len(self.lines) >= pricing.BULK_THRESHOLD:
            rows.append("bulk order")
        return rows
