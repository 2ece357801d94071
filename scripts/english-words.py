#!/usr/bin/env python3
"""Regenerates crates/memory-engine/src/words/english.txt: how common each English word is, from
wordfreq (https://github.com/rspeer/wordfreq), whose data is CC-BY-SA 4.0.

    python3 -m venv /tmp/wf && /tmp/wf/bin/pip install wordfreq==3.1.1
    /tmp/wf/bin/python scripts/english-words.py > crates/memory-engine/src/words/english.txt

Each line is a word and its Zipf frequency (log10 of uses per billion words, one decimal), in
byte order of the words so that a lookup is a binary search with nothing to build. Only plain
lowercase ASCII words of two letters or more at Zipf 3 or above (once per million words): rarer
words all weigh fully, so they need no entry.
"""
import re

import wordfreq

zipf_of = {}
for word in wordfreq.iter_wordlist("en", "large"):
    zipf = wordfreq.zipf_frequency(word, "en", "large")
    if zipf < 3.0:
        break
    if re.fullmatch(r"[a-z]{2,}", word):
        zipf_of[word] = zipf
for word in sorted(zipf_of):
    print(f"{word} {zipf_of[word]:.1f}")
