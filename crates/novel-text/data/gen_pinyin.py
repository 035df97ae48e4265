#!/usr/bin/env python3
"""Regenerates pinyin.txt: tone-less readings of the GB2312 characters (levels 1 and 2) plus
the extra name characters listed below, one syllable per line: `feng 风丰封枫峰…`.

Needs `pypinyin` (PyPI). Not run by the build: the output is committed, so the crate needs no
network and no pinyin dependency. At most two readings per character (the commonest first):
rare third readings only make homophone matching noisier.

    python3 crates/novel-text/data/gen_pinyin.py > crates/novel-text/data/pinyin.txt
"""
from collections import OrderedDict

from pypinyin import Style, pinyin

# Characters common in (web-novel) names that GB2312 lacks.
EXTRA = "玥昀珺琤翀堃喆淏璟瑄煊婳姝嫣彧甯祎珈暻晞曌炘琇赟铖锟钰昶晟翊珩瑀玹瑢璠琭瑷婧妤"


def chars():
    for hi in range(0xB0, 0xF8):
        for lo in range(0xA1, 0xFF):
            try:
                c = bytes([hi, lo]).decode("gb2312")
            except UnicodeDecodeError:
                continue
            yield c
    yield from EXTRA


def main():
    table = OrderedDict()
    seen = set()
    for c in chars():
        if c in seen:
            continue
        seen.add(c)
        readings = []
        for r in pinyin(c, style=Style.NORMAL, heteronym=True)[0]:
            r = r.replace("ü", "v")
            if r.isascii() and r.isalpha() and r not in readings:
                readings.append(r)
        for r in readings[:2]:
            table.setdefault(r, []).append(c)
    for syllable in sorted(table):
        print(syllable, "".join(table[syllable]))


if __name__ == "__main__":
    main()
