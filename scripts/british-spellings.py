#!/usr/bin/env python3
"""Regenerates crates/memory-engine/src/words/british.txt: British spellings and their American
forms, from codespell's en-GB → en-US dictionary (https://github.com/codespell-project/codespell),
whose dictionaries are CC-BY-SA 3.0.

    python3 -m venv /tmp/cs && /tmp/cs/bin/pip install codespell==2.4.3
    /tmp/cs/bin/python scripts/british-spellings.py > crates/memory-engine/src/words/british.txt

Each line is a British word and its American form, lowercase ASCII, in byte order of the British
words, so that a regenerated list diffs line by line (bm25.rs reads it into a map once).
"""
import re
from importlib.resources import files

text = files("codespell_lib").joinpath("data/dictionary_en-GB_to_en-US.txt").read_text()
american_of = {}
for line in text.splitlines():
    british, _, american = line.partition("->")
    # Lines offering several forms ("a->b, c,") are left out: the fold needs the one form.
    if re.fullmatch(r"[a-z]{2,}", british) and re.fullmatch(r"[a-z]{2,}", american):
        american_of[british] = american
# A form that is itself folded would make the fold depend on the order it is applied in.
assert not set(american_of) & set(american_of.values())
for british in sorted(american_of):
    print(f"{british} {american_of[british]}")
