"""Draw the extension's icon (icon.png, 256x256): a code line typed in white and its suggested
rest as ghost text after the cursor. Run with Pillow: python make_icon.py"""

from pathlib import Path

from PIL import Image, ImageDraw

SIZE, SCALE = 256, 4  # drawn 4x larger, then scaled down for smooth edges
BACKGROUND, TYPED, GHOST, CURSOR = "#1b2330", "#e8edf3", "#5d7a99", "#58c4ff"


def bar(draw: ImageDraw.ImageDraw, x: int, y: int, w: int, color: str) -> None:
    """A code token: a rounded bar 22 units high at (x, y), w units wide."""
    s = SCALE
    draw.rounded_rectangle((x * s, y * s, (x + w) * s, (y + 22) * s), radius=11 * s, fill=color)


def main() -> None:
    s = SCALE
    image = Image.new("RGBA", (SIZE * s, SIZE * s), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((0, 0, SIZE * s - 1, SIZE * s - 1), radius=48 * s, fill=BACKGROUND)
    bar(draw, 40, 52, 70, TYPED)  # a line above, typed
    bar(draw, 122, 52, 92, TYPED)
    bar(draw, 64, 98, 56, TYPED)  # the line being typed ...
    draw.rounded_rectangle((128 * s, 90 * s, 136 * s, 128 * s), radius=4 * s, fill=CURSOR)
    bar(draw, 146, 98, 70, GHOST)  # ... and its suggestion, ghost text after the cursor
    bar(draw, 64, 144, 110, GHOST)
    bar(draw, 64, 190, 62, GHOST)
    bar(draw, 138, 190, 50, GHOST)
    image.resize((SIZE, SIZE), Image.LANCZOS).save(Path(__file__).with_name("icon.png"))


if __name__ == "__main__":
    main()
