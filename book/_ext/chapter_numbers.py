"""A Sphinx extension for the book's build: "chapter {doc}`09_making_it_fast`" reads "chapter 9".

The chapters' prose names another chapter as ``chapter {doc}`NN_name``` (or ``Chapter ...``). Sphinx writes a
``{doc}`` link as the chapter's title, which made sentences such as "as chapter Making it fast measures". After
the references are resolved, a link to a numbered chapter that follows the word "chapter" (or "chapters", "and",
"to", "or" after such a list) and shows the chapter's own title is given the chapter's number as its text; the
title stays as the link's tooltip. A link with a text of its own ({doc}`this chapter <09_making_it_fast>`) is
left as it is.
"""

import re

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

AFTER = re.compile(r"(?:\b[Cc]hapters?|\d(?:,| and| or| to|–))\s?$")
"""Text that ends with the word chapter(s), or a number and a list word, right before the link (after a space or
the line break of the source's wrapped prose)."""


class ChapterNumbers(SphinxPostTransform):
    default_priority = 20  # after the references are resolved (ReferencesResolver runs at 10)

    def run(self, **kwargs) -> None:
        numbers = self.env.toc_secnumbers
        for reference in list(self.document.findall(nodes.reference)):
            uri = reference.get("refuri", "")
            if not reference.get("internal") or "#" in uri or not uri:
                continue
            target = uri.rsplit(".", 1)[0]
            docname = self._docname(target)
            number = numbers.get(docname, {}).get("")
            title = self.env.titles.get(docname)
            if not number or title is None or reference.astext() != title.astext():
                continue
            before = self._text_before(reference)
            if not AFTER.search(before):
                continue
            reference["reftitle"] = title.astext()
            reference.children = [nodes.inline("", ".".join(str(n) for n in number))]

    def _docname(self, target: str) -> str:
        here = self.env.docname.rsplit("/", 1)[0] if "/" in self.env.docname else ""
        parts = [p for p in (here.split("/") if here else []) + target.split("/") if p and p != "."]
        resolved: list[str] = []
        for part in parts:
            if part == "..":
                if resolved:
                    resolved.pop()
            else:
                resolved.append(part)
        return "/".join(resolved)

    @staticmethod
    def _text_before(reference: nodes.Node) -> str:
        """The text right before ``reference``: its preceding run of text nodes (MyST keeps a line break of the
        source as a text node of its own)."""
        parent = reference.parent
        index = parent.index(reference)
        texts = []
        while index > 0 and isinstance(parent[index - 1], nodes.Text):
            index -= 1
            texts.append(parent[index].astext())
        return "".join(reversed(texts))


def setup(app):
    app.add_post_transform(ChapterNumbers)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
