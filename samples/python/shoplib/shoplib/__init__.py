"""A tiny shop: products, a price book with discounts, and a cart."""

from .models import Product, Money
from .cart import Cart

__all__ = ["Product", "Money", "Cart"]
