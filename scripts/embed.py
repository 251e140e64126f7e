#!/usr/bin/env python3
# Build step: embed a data file as a C string (NUL-terminated) with its length.
# usage: embed.py [--json] SYMBOL INPUT OUTPUT
#   --json: the input is JSON; embed it re-serialised without white space (same
#           keys, same order, same values) - LiteLLM's price file is indented.
import json
import sys
args = sys.argv[1:]
minify = args[0] == '--json'
if minify:
    args = args[1:]
sym, src, dst = args[:3]
data = open(src, 'rb').read()
if minify:
    data = json.dumps(json.loads(data), separators=(',', ':'), ensure_ascii=False).encode('utf-8')
with open(dst, 'w') as f:
    f.write('/* generated from %s: do not edit */\n#include <stddef.h>\n' % src.split('/')[-1])
    f.write('const size_t %s_len = %d;\nconst char %s[] =\n' % (sym, len(data), sym))
    for i in range(0, len(data), 64):
        chunk = data[i:i + 64]
        f.write('    "' + ''.join('\\%03o' % b if (b < 32 or b > 126 or b in (34, 92, 63)) else chr(b) for b in chunk) + '"\n')
    f.write(';\n')
