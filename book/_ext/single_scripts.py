"""A Sphinx extension for the book's build: each inline script once per page.

sphinx-thebe (loaded by Jupyter Book 1.x even with thebe off) adds its inline ``const THEBE_JS_URL = ...``
script twice to every page, and the second copy throws "Identifier 'THEBE_JS_URL' has already been declared"
in the browser. This drops exact repeats of an inline script from each page's script list.
"""


def drop_repeated_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for script in scripts:
        body = getattr(script, "attributes", {}).get("body") if not isinstance(script, str) else None
        key = ("body", body) if body else ("src", str(script))
        if key in seen:
            continue
        seen.add(key)
        kept.append(script)
    scripts[:] = kept


def setup(app):
    app.connect("html-page-context", drop_repeated_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
