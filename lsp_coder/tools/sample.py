"""A small source file for ``lsp-coder try``."""

SAMPLE_PY = '''"""Inventory helpers."""

from dataclasses import dataclass


@dataclass
class Item:
    name: str
    price: float
    quantity: int = 0


def total_value(items: list[Item]) -> float:
    """Sum of price times quantity over all items."""
    total = 0.0
    for item in items:
        total += item.price * item.quantity
    return total


def cheapest(items: list[Item]) -> Item | None:
    """The item with the lowest price, or None for an empty list."""
    if not items:
        return None
    return min(items, key=lambda item: item.price)


def restock(items: list[Item], amount: int) -> None:
    """Add ``amount`` to the quantity of every item."""
    for item in items:
        item.quantity += amount


if __name__ == "__main__":
    stock = [Item("pen", 1.5, 10), Item("book", 12.0, 2)]
    print(total_value(stock))
    print(cheapest(stock))
'''
