"""Turn a user's .txt / .md / .html files into Documents, split into passage-sized parts.

Long files are split on paragraph boundaries so that BM25 ranks passages (not whole
books) and a small model's prompt gets the passage that matters.

Only text a reader sees is kept: HTML comments, scripts, styles and hidden elements
(`hidden`, `aria-hidden="true"`, `display: none`, `visibility: hidden`) are dropped, as
are Markdown comments and link definitions; hidden text is a favourite place for
instructions to a model (docs/security.md).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar

from guardsearch.core.errors import ConfigError
from guardsearch.corpus.documents import Document

SUFFIXES = {
    ".txt": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
}
PART_CHARS = 1500
_VOID = frozenset(
    {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "source",
        "track",
        "wbr",
    }
)
_HIDDEN_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?![.\d]*[1-9])"
    r"|opacity\s*:\s*0(?![.\d]*[1-9])",
    re.IGNORECASE,
)


def is_hidden(attrs: list[tuple[str, str | None]]) -> bool:
    """Do these attributes hide their element from a reader?"""
    values = {k.lower(): (v or "") for k, v in attrs}
    return (
        "hidden" in values
        or values.get("aria-hidden", "").lower() == "true"
        or bool(_HIDDEN_STYLE.search(values.get("style", "")))
    )


_MAX_FILE_BYTES = 20_000_000


class _HtmlText(HTMLParser):
    """Visible text and the <title>/<h1> of an HTML page (scripts and styles skipped)."""

    _SKIP: ClassVar[set[str]] = {"script", "style", "noscript", "template", "svg"}
    _BLOCK: ClassVar[set[str]] = {
        "p",
        "div",
        "br",
        "li",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "tr",
        "section",
        "article",
        "header",
        "footer",
        "pre",
        "blockquote",
    }

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self.h1 = ""
        self._stack: list[str] = []
        self._skipping = 0
        # Stack depths at which a hidden element opened: its content is not kept.
        self._hidden: list[int] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._SKIP:
            self._skipping += 1
        if tag in self._BLOCK:
            self.parts.append("\n\n")
        if tag in _VOID:
            return
        if is_hidden(attrs):
            self._hidden.append(len(self._stack))
        self._stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and self._skipping:
            self._skipping -= 1
        if tag in self._BLOCK:
            self.parts.append("\n\n")
        if tag in self._stack:
            while self._stack and self._stack.pop() != tag:
                pass
        while self._hidden and len(self._stack) <= self._hidden[-1]:
            self._hidden.pop()

    def handle_data(self, data: str) -> None:
        if self._skipping or self._hidden:
            return
        current = self._stack[-1] if self._stack else ""
        if current == "title":
            self.title += data
            return
        if current == "h1" and not self.h1:
            self.h1 = data.strip()
        self.parts.append(data)


def _clean(text: str) -> str:
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _markdown_text(text: str) -> tuple[str, str]:
    title = ""
    for line in text.splitlines():
        if line.startswith("# "):
            title = line[2:].strip()
            break
    body = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # code blocks are not prose
    body = re.sub(r"<!--.*?(?:-->|$)", "", body, flags=re.DOTALL)  # comments are not shown
    # nor are link definitions ("[//]: # (a comment)") or raw HTML marked hidden
    body = re.sub(r"^ {0,3}\[[^\]\n]+\]:[^\n]*$", "", body, flags=re.MULTILINE)
    body = re.sub(
        r"<(\w+)\b([^>]*)>.*?</\1\s*>",
        lambda m: "" if is_hidden(_attributes(m.group(2))) else m.group(0),
        body,
        flags=re.DOTALL,
    )
    body = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", body)  # [text](url) -> text
    body = re.sub(r"^#{1,6}\s*", "", body, flags=re.MULTILINE)
    body = re.sub(r"[*_`>]{1,3}", "", body)
    return title, _clean(body)


def _attributes(text: str) -> list[tuple[str, str | None]]:
    found = re.findall(r"([\w-]+)(?:\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s>]+))?", text)
    return [(k, v.strip("\"'") if v else None) for k, v in found]


def read_text_file(path: Path) -> tuple[str, str]:
    """(title, plain text) of one supported file."""
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise ConfigError(f"{path}: unsupported file type (use .txt, .md or .html)")
    if path.stat().st_size > _MAX_FILE_BYTES:
        raise ConfigError(f"{path}: larger than {_MAX_FILE_BYTES // 1_000_000} MB")
    raw = path.read_text(encoding="utf-8", errors="replace")
    if kind == "html":
        parser = _HtmlText()
        parser.feed(raw)
        parser.close()
        return (" ".join((parser.title or parser.h1).split()), _clean("".join(parser.parts)))
    if kind == "markdown":
        return _markdown_text(raw)
    text = _clean(raw)
    first = next((line for line in text.splitlines() if line.strip()), "")
    return (first if len(first) <= 100 else ""), text


def split_passages(text: str, limit: int = PART_CHARS) -> list[str]:
    """Paragraph-aligned parts of at most about `limit` chars (a huge paragraph is cut)."""
    parts: list[str] = []
    current = ""
    for para in (p.strip() for p in text.split("\n\n")):
        if not para:
            continue
        while len(para) > limit:
            cut = para.rfind(". ", 0, limit)
            cut = cut + 1 if cut > limit // 2 else limit
            if current:
                parts.append(current)
                current = ""
            parts.append(para[:cut].strip())
            para = para[cut:].strip()
        if current and len(current) + len(para) + 2 > limit:
            parts.append(current)
            current = para
        else:
            current = f"{current}\n\n{para}" if current else para
    if current:
        parts.append(current)
    return parts


def files_under(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ConfigError(f"{path}: no such file or directory")
    return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)


def key_prefixes(path: str | Path) -> list[str]:
    """The key prefixes of every document `documents_from(path)` makes, including those
    of passages or files that are gone: "FILE#" for a file, "DIR/" for a directory."""
    root = Path(path).expanduser().resolve()
    return [f"{root}#"] if root.is_file() else [f"{root}{os.sep}"]


def documents_from(path: str | Path, corpus: str) -> Iterator[Document]:
    """Documents for every supported file at `path` (a file or a directory tree)."""
    root = Path(path).expanduser().resolve()
    for file in files_under(root):
        title, text = read_text_file(file)
        title = title or file.stem.replace("_", " ").replace("-", " ")
        passages = split_passages(text)
        for number, passage in enumerate(passages, 1):
            suffix = f" (part {number})" if len(passages) > 1 else ""
            yield Document(
                corpus=corpus,
                key=f"{file}#{number}",
                title=title + suffix,
                body=passage,
                location=file.as_uri() + (f"#part-{number}" if len(passages) > 1 else ""),
                kind="document",
            )
