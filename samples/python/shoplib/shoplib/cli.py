"""Command line entry point: price a cart from 'sku:qty' arguments."""

from __future__ import annotations

import sys

from shoplib.cart import Cart
from shoplib.models import Money, Product
from shoplib.pricing import PriceBook

CATALOGUE = {
    "apple": Product("apple", "Apple", Money(45), "fruit"),
    "pear": Product("pear", "Pear", Money(60), "fruit"),
    "soap": Product("soap", "Soap", Money(250), "home"),
}


def main(argv: list[str]) -> int:
    book = PriceBook()
    book.set_category_discount("fruit", 0.8)
    cart = Cart(book)
    for arg in argv:
        sku, _, qty = arg.partition(":")
        product = CATALOGUE.get(sku)
        if product is None:
            print(f"unknown sku {sku}", file=sys.stderr)
            return 2
        cart.add(product, int(qty or 1))
    for row in cart.summary():
        print(row)
    print("total", cart.total().format_amount())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
