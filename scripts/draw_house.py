"""Draw the harness's house from its source: each room top to bottom with its modules, the
rooms it imports, and what test/harness/test_layout.py forbids (an arrow back up, a circle, a
room past a dozen modules), found or not.

    python scripts/draw_house.py            # text
    python scripts/draw_house.py --mermaid  # a Mermaid graph of the rooms, for docs

Exit code 1 when the drawing shows an arrow back up, a circle or a crowded room.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from test.harness.test_layout import (  # noqa: E402  (the checks' own reading of the code)
    HARNESS, MOST_MODULES, ROOM_FOLDERS, ROOMS, circles, import_graph, imported_modules, modules_in, room_of)


def arrows() -> dict[str, dict[str, int]]:
    """Room -> each other room of the harness it imports -> how many import statements do."""
    found: dict[str, dict[str, int]] = {room: {} for room in ROOMS}
    for room in ROOMS:
        for path in modules_in(room):
            for _, module in imported_modules(path):
                target = room_of(module)
                if target in ROOMS and target != room and module.startswith("harness"):
                    found[room][target] = found[room].get(target, 0) + 1
    return found


def crowded() -> list[str]:
    folders = [(room, HARNESS.joinpath(*room.split(".")[1:])) for room in ROOMS]
    folders += [(f"{room}.{name}", HARNESS.joinpath(*room.split(".")[1:], name))
                for room, names in ROOM_FOLDERS.items() for name in names]
    return [f"{name} ({count} modules)" for name, folder in folders
            if (count := len([path for path in folder.glob("*.py") if path.name != "__init__.py"])) > MOST_MODULES]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mermaid", action="store_true", help="print a Mermaid graph of the rooms")
    options = parser.parse_args()
    edges = arrows()
    upward = [f"{room} -> {target}" for room, targets in edges.items() for target in targets
              if ROOMS.index(target) > ROOMS.index(room)]
    found_circles = circles(import_graph(HARNESS, "harness"))
    too_full = crowded()
    if options.mermaid:
        print("graph TD")
        for room in reversed(ROOMS):
            for target in sorted(edges[room], key=ROOMS.index, reverse=True):
                print(f"  {room.replace('.', '_')}[{room}] --> {target.replace('.', '_')}[{target}]")
    else:
        for room in reversed(ROOMS):
            folder = HARNESS.joinpath(*room.split(".")[1:])
            counts = [f"{len([path for path in folder.glob('*.py') if path.name != '__init__.py'])} modules"]
            counts += [f"{name}/ {len([path for path in (folder / name).glob('*.py') if path.name != '__init__.py'])}"
                       for name in ROOM_FOLDERS.get(room, ())]
            below = ", ".join(f"{target} ({count})" for target, count in
                              sorted(edges[room].items(), key=lambda item: ROOMS.index(item[0]), reverse=True))
            print(f"{room:<17} {', '.join(counts):<37} imports: {below or '-'}")
    print(f"arrows back up: {', '.join(upward) or 'none'}; circles: "
          f"{'; '.join(' <-> '.join(circle) for circle in found_circles) or 'none'}; "
          f"rooms past {MOST_MODULES} modules: {', '.join(too_full) or 'none'}")
    return 1 if upward or found_circles or too_full else 0


if __name__ == "__main__":
    sys.exit(main())
