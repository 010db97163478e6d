"""ZIM archives the tests build with libzim's own writer, from real fixture pages or hostile
bytes."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

ZH_PAGE = Path(__file__).resolve().parents[1] / "fixtures" / "html" / "zhwiki_Cat_trimmed.html"


def build_archive(
    path: Path,
    pages: Mapping[str, bytes | str],
    *,
    redirects: Mapping[str, str] | None = None,
    pages_by_path: Mapping[str, str] | None = None,
    language: str | None = None,
) -> Path:
    """An archive of ``pages`` (path = title, HTML as given), ``redirects`` (alias -> target),
    and pages whose path differs from their title (``pages_by_path``: path -> title, the same
    small page). With a ``language`` it has libzim's full-text index in that language.

    Clusters are stored uncompressed: a build then takes milliseconds instead of tens of them
    (the real Kiwix archive in the fixtures covers compressed clusters).
    """
    from libzim.writer import Blob, Compression, ContentProvider, Creator, Hint, Item

    class Bytes(ContentProvider):  # type: ignore[misc]
        def __init__(self, data: bytes) -> None:
            super().__init__()
            self.data = data

        def get_size(self) -> int:
            return len(self.data)

        def gen_blob(self):  # type: ignore[no-untyped-def]
            yield Blob(self.data)

    class Page(Item):  # type: ignore[misc]
        def __init__(self, title: str, html: bytes | str, path: str | None = None) -> None:
            super().__init__()
            self.title, self.path = title, path or title
            self.html = html.encode() if isinstance(html, str) else html

        def get_path(self) -> str:
            return self.path

        def get_title(self) -> str:
            return self.title

        def get_mimetype(self) -> str:
            return "text/html"

        def get_contentprovider(self) -> Bytes:
            return Bytes(self.html)

        def get_hints(self) -> dict[Hint, int]:
            return {Hint.FRONT_ARTICLE: True}

    path.unlink(missing_ok=True)
    creator = Creator(str(path)).config_indexing(language is not None, language or "eng")
    creator = creator.config_compression(Compression.none).config_nbworkers(1)
    with creator:
        for title, html in pages.items():
            creator.add_item(Page(title, html))
        for page_path, title in (pages_by_path or {}).items():
            creator.add_item(Page(title, b"<p>The page is intact.</p>", page_path))
        for alias, target in (redirects or {}).items():
            creator.add_redirection(alias, alias, target, {Hint.FRONT_ARTICLE: True})
    return path


def zh_archive(path: Path) -> Path:
    """A one-article archive holding the real (trimmed) zhwiki page 貓, indexed in Chinese."""
    return build_archive(path, {"貓": ZH_PAGE.read_text(encoding="utf-8")}, language="zho")
