"""Write docs/tracker.md from docs/tracker/classes.toml, the tracker sample and harness/expectations.toml.

    python scripts/tracker_doc.py            # write docs/tracker.md
    python scripts/tracker_doc.py --check    # exit 1 if docs/tracker.md is not what it would write

classes.toml is the catalogue's source: which issues each class gathers, its trigger and the
tests that carry it. The sample gives each issue's state and CPU repro; expectations.toml says
which carrying tests are expected failures and which issues they cite, so a page never claims
an xfail the harness does not have (nor misses one it has). Exit 2: an input could not be read.
"""

from __future__ import annotations

import collections
import fnmatch
import json
import os
import re
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.report.upstream_bugs import cited  # noqa: E402  (the reports' reading of a reason: no torch)

CLASSES = ROOT / "docs" / "tracker" / "classes.toml"
SAMPLE = ROOT / "docs" / "tracker" / "sample-2026-12-07.jsonl"
EXPECTATIONS = ROOT / "harness" / "expectations.toml"
TIER_DATA = ROOT / "harness" / "default_tier.json"
# Where the suite shows its tests failing on purpose: the proofs' faulty backends, and the
# smoke tier's list of faults each scenario catches.
PROOFS = [*sorted((ROOT / "test" / "proofs").glob("test_*.py")), ROOT / "test" / "harness" / "test_smoke.py"]
OUT = ROOT / "docs" / "tracker.md"

GROUPS = [("front end", "Front end: Dynamo, dynamic shapes, higher-order ops, subclasses, functorch, export"),
          ("AOTAutograd", "AOTAutograd"),
          ("back end", "Back end: Inductor, decompositions, other backends")]
LAYER_WORD = {"dynamo": "Dynamo", "dynamic_shapes": "dynamic shapes", "higher_order_ops": "higher-order ops",
              "subclass": "subclasses", "functorch": "functorch", "export": "export", "aot_autograd": "AOTAutograd",
              "inductor": "Inductor", "decomposition": "decompositions", "backend_other": "other backends"}
ISSUE_URL = "https://github.com/pytorch/pytorch/issues/{}"

def names(glob: str, test_id: str) -> bool:
    """Whether an expectation's test glob names test_id or one of its parameterized cases
    (test_numpy_function_0_fix...): catalogue ids leave the case suffix out."""
    if fnmatch.fnmatchcase(test_id, glob):
        return True
    rest = glob[len(test_id) + 1:] if glob.startswith(test_id + "_") else ""
    return bool(re.match(r"[\d\[*?]", rest))


def load():
    """(classes, the sample's rows by issue number, the xfail entries of expectations.toml,
    the evidence that each carrying test can fail)"""
    classes = tomllib.loads(CLASSES.read_text())["class"]
    rows = {r["number"]: r for r in map(json.loads, filter(str.strip, SAMPLE.read_text().splitlines()))}
    expect = tomllib.loads(EXPECTATIONS.read_text())["expect"]
    xfails = [e for e in expect if e["status"] == "xfail"]
    kills = {name: entry["kills"] for name, entry in json.loads(TIER_DATA.read_text())["scenarios"].items()}
    proofs = {path.stem: path.read_text() for path in PROOFS}
    return classes, rows, xfails, Evidence(kills, proofs)


class Evidence:
    """What shows a carrying test failing when its class is present: the mutants it kills (the
    kill matrix, harness/default_tier.json) and the proofs naming it (a faulty backend each
    shows failing it); the xfails citing a real release are the third kind."""

    def __init__(self, kills: dict[str, list[str]], proofs: dict[str, str]) -> None:
        self.kills, self.proofs = kills, proofs

    def mutants(self, test_id: str) -> set[str]:
        """The mutants killed by test_id or its cases (a bare family: by its tests)."""
        return {mutant for name, killed in self.kills.items()
                if name == test_id or name.startswith(test_id + (".test_" if test_id.count(".") == 1 else "_"))
                for mutant in killed}

    def naming(self, test_id: str) -> list[str]:
        """The proofs whose text names test_id's method (or, for a bare family, the family)."""
        name = test_id.rsplit(".", 1)[1]
        return [proof for proof, text in self.proofs.items() if re.search(rf"\b{re.escape(name)}", text)]

    def cell(self, c: dict, xfails: list[dict]) -> str:
        """In words: the mutants the class's carriers kill, the proofs naming them, the real
        releases (xfails) failing them; "none" where nothing does."""
        mutants = {m for test in c["carried_by"] for m in self.mutants(test)}
        proofs = sorted({p for test in c["carried_by"] for p in self.naming(test)})
        releases = any(names(e["test"], test) for test in c["carried_by"] for e in xfails)
        parts = ([f"{len(mutants)} mutants"] if mutants else []) + \
            ([f"proofs: {', '.join(proofs)}"] if proofs else []) + (["a torch release (xfail)"] if releases else [])
        return "; ".join(parts) if parts else "none"


def condition(entry: dict) -> str:
    """Where an xfail entry holds, in words: "xfail on inductor, torch ==2.13.*"."""
    head, rest = "xfail", []
    for key, value in entry.items():
        if key == "backend":
            head += f" on {value}"
        elif key == "aot_autograd":
            head += " where AOTAutograd runs" if value else " where AOTAutograd does not run"
        elif key == "torch":
            # A lower bound only says since when it was measured; an upper bound says that a
            # newer torch no longer fails it, which a reader of an "open" bug must see.
            if re.search(r"<|==", value):
                rest.append(f"torch {value}")
        elif key not in ("test", "status", "reason"):  # an xfail of the export variant is not the default run's
            rest.append(f"{key} {value}")
    return ", ".join([head] + rest)


def xfail_notes(test_id: str, xfails: list[dict]) -> list[str]:
    """One note per condition of the xfail entries naming test_id, with the issues they cite."""
    by_condition: dict[str, dict[int, None]] = {}
    for entry in xfails:
        if names(entry["test"], test_id):
            by_condition.setdefault(condition(entry), {}).update(dict.fromkeys(cited(entry["reason"])))
    return [", ".join([words] + [f"pytorch#{n}" for n in numbers]) for words, numbers in by_condition.items()]


def tests_cell(c: dict, xfails: list[dict]) -> str:
    if not c["carried_by"]:
        return "none yet" + (f" ({c['note']})" if c.get("note") else "")
    notes = c.get("carried_notes", {})
    unknown = set(notes) - set(c["carried_by"])
    if unknown:  # a note for a test the class does not list is a typo, not something to drop quietly
        raise KeyError(f"carried_notes of {c['id']} names tests not in its carried_by: {sorted(unknown)}")
    out = []
    for test in c["carried_by"]:
        parts = ([notes[test]] if test in notes else []) + xfail_notes(test, xfails)
        out.append(f"`{test}`" + (f" ({'; '.join(parts)})" if parts else ""))
    return "<br>".join(out)


def render(classes: list[dict], rows: dict, xfails: list[dict], evidence: Evidence) -> str:
    shown_everywhere = {n for e in xfails for n in cited(e["reason"])}

    def shown(cs):  # open issues of these classes that some xfail entry cites
        return sorted({n for c in cs for n in c["issues"] if rows[n]["state"] == "open" and n in shown_everywhere})

    def link(n):
        state = rows[n]["state"]
        tail = " (open)" if state == "open" else " (state not seen)" if state == "unknown" else ""
        return f"[#{n}]({ISSUE_URL.format(n)}){tail}"

    def cpu_cell(c):
        cpu = [rows[n]["cpu_repro"] for n in c["issues"]]
        if any(v is True for v in cpu):
            return f"yes ({sum(v is True for v in cpu)} of {len(cpu)})"
        return "not stated" if all(v is None for v in cpu) else "no"

    md = ["# PyTorch's silent-correctness tracker, by class", "",
          "| | classes | issues read | open | closed | state not seen | classes with a carrying test | none yet "
          "| open bugs shown |",
          "|---|---|---|---|---|---|---|---|---|"]
    for key, title in GROUPS + [(None, "All")]:
        cs = [c for c in classes if key in (None, c["group"])]
        st = collections.Counter(rows[n]["state"] for c in cs for n in c["issues"])
        carried = sum(1 for c in cs if c["carried_by"])
        md.append(f"| {title.split(':')[0]} | {len(cs)} | {sum(st.values())} | {st['open']} | {st['closed']} | "
                  f"{st['unknown']} | {carried} | {len(cs) - carried} | {len(shown(cs))} |")
    n_open = sum(r["state"] == "open" for r in rows.values())
    all_shown = shown(classes)
    links = ", ".join(f"[#{n}]({ISSUE_URL.format(n)})" for n in all_shown)
    md += ["", f"The suite shows {len(all_shown)} of the {n_open} open issues of the sample as expected failures "
               f"(an xfail entry of harness/expectations.toml cites each): {links}."]
    n_klass = len({r["klass"] for r in rows.values()})
    cpu = collections.Counter(r["cpu_repro"] for r in rows.values())
    md += ["", f"**How it was read.** {len(rows)} issues of pytorch/pytorch (2024 to 2026) in which torch.compile "
           "silently computes something other than eager, read on 2026-12-07 from the stored issue threads: "
           "[docs/tracker/README.md](tracker/README.md) says how, and "
           "[docs/tracker/sample-2026-12-07.jsonl](tracker/sample-2026-12-07.jsonl) holds each issue with its layer, "
           f"trigger, provisional class and repro. Its {n_klass} provisional classes are curated here into "
           f"{len(classes)}, sorted by the user code that triggers them, not by the fix: a class is what a fault in "
           "any backend or torch release could repeat, and an issue that is one op's formula is filed under its op "
           "family's class. A class sits in the table of the layer most of its issues were filed against (on a "
           "tie, the one the threads point at); its layer column names them all. *CPU repro*: how many of the "
           f"class's issues have a repro that runs on the CPU ({cpu[True]} of the {len(rows)} issues do; "
           f"{cpu[None]} do not say). [docs/tracker/classes.toml](tracker/classes.toml) is the catalogue's source, "
           "one `[[class]]` each; `python scripts/tracker_doc.py` writes this page from it.",
           "", "**What carries a class.** A test of this suite *carries* a class when it runs that kind of user code "
           "through the backend under test and its checks would see the wrong result (outputs, inputs after the "
           "call, gradients, strides, aliasing, the Python world, the raised error). Test ids are "
           "`module.Class.test` under test/dynamo, without the per-backend suffix; a bare `module.Class` is a "
           "generated family (one test per seed), and a parameterized test named without its case suffix "
           "stands for all its cases. "
           "*xfail* marks a test that an entry of harness/expectations.toml expects to fail, with where the entry "
           "holds (a backend, where AOTAutograd runs, a variant, torch releases up to a bound) and the issues its "
           "reason cites: an open one is a bug the suite keeps visible; "
           "*full tier* is the nightly operator sweep (`--op-sweep full`). "
           "*none yet* means no test runs that user code with such a check.",
           "", "**Shown failing by.** What shows the carrying tests fail when the class is present: the mutants "
           "they kill (test/harness/mutation, counted from the kill matrix in harness/default_tier.json), the "
           "proofs naming them (test/proofs: a deliberately faulty backend each, which they must fail), and a "
           "torch release they fail on (an xfail above)."]
    for key, title in GROUPS:
        md += ["", f"## {title}", "",
               "| class | layer | user code that triggers it | issues read | CPU repro | tests that carry it "
               "| shown failing by |",
               "|---|---|---|---|---|---|---|"]
        for c in (c for c in classes if c["group"] == key):
            layers = ", ".join(LAYER_WORD[layer] for layer in c["layer"])
            issues = ", ".join(map(link, sorted(c["issues"])))
            md.append(f"| `{c['id']}` | {layers} | {c['trigger']} | {issues} | {cpu_cell(c)} | "
                      f"{tests_cell(c, xfails)} | {evidence.cell(c, xfails)} |")
    return "\n".join(md) + "\n"


def main(argv: list[str]) -> int:
    check = argv == ["--check"]
    if argv and not check:
        print("usage: tracker_doc.py [--check]", file=sys.stderr)
        return 2
    try:
        text = render(*load())
    except (OSError, ValueError, KeyError, TypeError) as error:  # TOML and JSON errors are ValueErrors
        print(f"tracker_doc: cannot read the catalogue's inputs: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    if not check:
        OUT.write_text(text)
        return 0
    if OUT.exists() and OUT.read_text() == text:
        return 0
    print(f"tracker_doc: {os.path.relpath(OUT, ROOT)} is not what classes.toml, the sample and expectations.toml give: "
          "run python scripts/tracker_doc.py", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
