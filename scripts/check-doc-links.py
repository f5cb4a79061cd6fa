#!/usr/bin/env python3
"""check-doc-links.py [ROOT]: every relative link in README.md, CHANGELOG.md and docs/**/*.md
points at a file that exists and, for a #fragment into a Markdown file, at one of its headings
(GitHub's anchor rule). Prints each broken link; exit status 1 when there is one."""
import glob
import os
import re
import sys
import unicodedata


def slug(heading):
    """GitHub's anchor of a heading: lower case, emphasis marks dropped, letters, digits, '-' and
    '_' kept, spaces to '-'."""
    h = re.sub(r"[`*_]", "", heading.strip().lower())
    kept = "".join(ch for ch in h if ch in "-_ " or unicodedata.category(ch)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(path):
    found, seen, in_code = set(), {}, False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            in_code = not in_code
            continue
        m = None if in_code else re.match(r"#{1,6}\s+(.*)", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            found.add(s if n == 0 else f"{s}-{n}")
    return found


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    files = [os.path.join(root, f) for f in ("README.md", "CHANGELOG.md")]
    files += sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    broken = total = 0
    for f in files:
        text = re.sub(r"```.*?```", "", open(f, encoding="utf-8").read(), flags=re.S)
        for m in re.finditer(r"\[[^\]]*\]\(([^)\s]+)\)", text):
            link = m.group(1)
            if re.match(r"[a-z]+:", link):
                continue  # https:, mailto:
            total += 1
            path, _, fragment = link.partition("#")
            target = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            where = os.path.relpath(f, root)
            if not os.path.exists(target):
                print(f"{where}: {link}: no such file")
                broken += 1
            elif fragment and target.endswith(".md") and fragment not in anchors(target):
                print(f"{where}: {link}: no such heading")
                broken += 1
    print(f"{total} relative links in {len(files)} files, {broken} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
