#!/usr/bin/python3
"""Writes the hicolor icon sizes of the app's icon (icons/icon.png).

Usage: icons.py SOURCE_PNG OUT_DIR  ->  OUT_DIR/NxN/apps/corral.png

Only sizes up to the source's own are made: a larger one would be an
upscaled blur, and the desktop scales the largest itself.
"""
import sys
from pathlib import Path

from PIL import Image

SIZES = [16, 22, 24, 32, 48, 64, 128, 256, 512]


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    source, out = Path(sys.argv[1]), Path(sys.argv[2])
    image = Image.open(source).convert("RGBA")
    if image.width != image.height:
        print(f"icons.py: {source} is {image.width}x{image.height}, not square", file=sys.stderr)
        return 1
    for size in (s for s in SIZES if s <= image.width):
        folder = out / f"{size}x{size}" / "apps"
        folder.mkdir(parents=True, exist_ok=True)
        scaled = image if size == image.width else image.resize((size, size), Image.LANCZOS)
        scaled.save(folder / "corral.png", optimize=True)
        print(f"{size}x{size}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
