"""The course in other languages: gettext catalogues of the English Markdown
(``catalogues``), cut into paragraphs (``paragraphs``), checked for what a translation
must keep (``faithful``), and translated documents written from them (``build``)."""
