"""A user corpus of invented documents and the questions they answer.

`guardsearch corpus add` takes a folder of a user's own files; the research loop must
answer from them as it does from the embedded Wikipedia summaries. The model cannot
know these facts (every subject is invented), so a right answer comes from the
document. `write(folder)` writes the documents (Markdown, one subject each, in the
prose of a short encyclopedia entry); `questions()` gives the questions of every
type they answer, several phrasings each, split tune / heldout like the wide set.
"""

from __future__ import annotations

import random
from pathlib import Path

from guardbench.wide_questions import WideQuestion, halves

SEED = 4040
CORPUS = "wide-user"

_FIRST = [
    "Ilse",
    "Marten",
    "Odile",
    "Casimir",
    "Renske",
    "Teodor",
    "Alvina",
    "Joris",
    "Halvard",
    "Petra",
]
_LAST = [
    "Vantreuil",
    "Oskarsen",
    "Bellocq",
    "Drummel",
    "Achterberg",
    "Quinlade",
    "Morvaux",
    "Szelény",
    "Hartwick",
    "Lindgaard",
]
_TOWNS = [
    "Kelmora",
    "Ostravin",
    "Bryndale",
    "Solvena",
    "Tarnwick",
    "Velsberg",
    "Corrado",
    "Amberlin",
    "Dunhollow",
    "Zarestia",
]
_COUNTRIES = [
    "Norway",
    "Portugal",
    "Hungary",
    "Chile",
    "Ireland",
    "Poland",
    "Canada",
    "Greece",
    "Japan",
    "Kenya",
]
_THINGS = ["bridge", "lighthouse", "observatory", "canal", "cathedral"]


def _facts(rng: random.Random) -> list[dict[str, object]]:
    out = []
    names = [f"{first} {last}" for first, last in zip(_FIRST, _LAST, strict=True)]
    for i, town in enumerate(_TOWNS):
        country = _COUNTRIES[i]
        builder = names[i]
        born = rng.randint(1790, 1900)
        died = born + rng.randint(45, 90)
        thing = _THINGS[i % len(_THINGS)]
        built = born + rng.randint(28, 44)
        length = rng.randint(120, 2400)
        population = rng.randint(11, 480) * 1000 + rng.randint(100, 999)
        out.append(
            {
                "town": town,
                "country": country,
                "builder": builder,
                "born": born,
                "died": died,
                "thing": f"{town} {thing.title()}",
                "kind": thing,
                "built": built,
                "length": length,
                "population": population,
            }
        )
    return out


def write(folder: Path) -> list[Path]:
    """The documents: a town, its landmark, and the landmark's builder, for ten towns."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for f in _facts(random.Random(SEED)):
        docs = {
            f"{f['town']}.md": f"# {f['town']}\n\n{f['town']} is a town in {f['country']}. "
            f"It has a population of {f['population']:,}. The town is known for the "
            f"{f['thing']}, which stands by its harbour.\n",
            f"{f['thing']}.md": f"# {f['thing']}\n\nThe {f['thing']} is a {f['kind']} in "
            f"{f['town']}, {f['country']}. It was built in {f['built']} to a design by "
            f"{f['builder']}. The {f['kind']} is {f['length']} metres long.\n",
            f"{f['builder']}.md": f"# {f['builder']}\n\n{f['builder']} ({f['born']}–{f['died']}) "
            f"was an engineer from {f['country']}. {f['builder'].split()[0]} designed the "
            f"{f['thing']}.\n",
        }
        for name, text in docs.items():
            path = folder / name
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def questions() -> list[WideQuestion]:
    rng = random.Random(SEED + 1)
    out: list[WideQuestion] = []
    for f in _facts(random.Random(SEED)):
        t, b, thing = str(f["town"]), str(f["builder"]), str(f["thing"])
        asked = [
            (
                "year",
                rng.choice(["When was the {x} built?", "In what year was the {x} built?"]).format(
                    x=thing
                ),
                str(f["built"]),
            ),
            (
                "person",
                rng.choice(["Who designed the {x}?", "Who was the designer of the {x}?"]).format(
                    x=thing
                ),
                b.split()[-1],
            ),
            (
                "number",
                rng.choice(["How long is the {x}?", "What is the length of the {x}?"]).format(
                    x=thing
                ),
                str(f["length"]),
            ),
            (
                "number",
                rng.choice(
                    ["What is the population of {x}?", "How many people live in {x}?"]
                ).format(x=t),
                f"{f['population']:,}",
            ),
            (
                "place",
                rng.choice(["In which country is {x}?", "Where is {x}?"]).format(x=t),
                str(f["country"]),
            ),
            ("twohop", f"In what year was the designer of the {thing} born?", str(f["born"])),
        ]
        for kind, question, answer in asked:
            out.append(
                WideQuestion(
                    "",
                    "usercorpus",
                    kind,
                    question,
                    [answer],
                    [thing],
                    hops=2 if kind == "twohop" else 1,
                )
            )
    return halves("usercorpus", out, rng)
