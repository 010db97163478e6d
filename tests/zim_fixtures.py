"""Small ZIM archives tests build from real fixture pages."""

from __future__ import annotations

from pathlib import Path

ZH_PAGE = Path(__file__).parent / "fixtures" / "html" / "zhwiki_Cat_trimmed.html"


def zh_archive(path: Path) -> Path:
    """A one-article archive holding the real (trimmed) zhwiki page 貓."""
    from libzim.writer import Creator, Hint, Item, StringProvider

    html = ZH_PAGE.read_text(encoding="utf-8")

    class Page(Item):  # type: ignore[misc]
        def get_path(self) -> str:
            return "貓"

        def get_title(self) -> str:
            return "貓"

        def get_mimetype(self) -> str:
            return "text/html"

        def get_contentprovider(self) -> StringProvider:
            return StringProvider(html)

        def get_hints(self) -> dict[Hint, int]:
            return {Hint.FRONT_ARTICLE: True}

    with Creator(str(path)).config_indexing(True, "zho") as creator:
        creator.add_item(Page())
    return path
